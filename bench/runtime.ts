// How a function runs, as its image runs it, for the servers the benchmark
// starts: the function and, alike, its floor.

import { glibcTunables, nodeOptions } from '../scripts/node-options.mjs';
import { V8_FLAGS as CACHE_V8_FLAGS } from '../functions/compose-model-cache/src/v8-flags.js';

/** The V8 flags each function sets on itself at start (serveFunction's v8Flags); none for the others. */
export const V8_FLAGS_AT_START: Record<string, readonly string[]> = { 'compose-model-cache': CACHE_V8_FLAGS };

export interface Runtime {
  /** On the command line (functions/<name>/node-options; for the floor, also the V8 flags the function sets on itself). */
  nodeFlags: string[];
  /** As GLIBC_TUNABLES (functions/<name>/glibc-tunables); '' for glibc's defaults. */
  glibcTunables: string;
}

/** The function's runtime, and its floor's: the same Node, V8 and allocator settings, so the gap is the function's work. */
export function runtimes(name: string, root: string): { fn: Runtime; floor: Runtime } {
  const fn: Runtime = { nodeFlags: nodeOptions(name, root), glibcTunables: glibcTunables(name, root) };
  return { fn, floor: { ...fn, nodeFlags: [...fn.nodeFlags, ...(V8_FLAGS_AT_START[name] ?? [])] } };
}
