// A function's Node flags: functions/<name>/node-options, one flag or more per
// line, `#` lines for the reasons. The image runs with them as NODE_OPTIONS;
// `make bench`, `make e2e` and `make run` pass the same.
//
//   node scripts/node-options.mjs <function>    prints them on one line

import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The flags, in order, of the function in the repository at `root`; none when it has no node-options file. */
export function nodeOptions(fn, root) {
  if (!existsSync(join(root, 'functions', fn))) throw new Error(`no function ${fn} in ${join(root, 'functions')}`);
  const file = join(root, 'functions', fn, 'node-options');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(/\s+/))
    .filter(Boolean);
}

// Run as a command, not when imported (the bench bundles this module into its own).
if (basename(process.argv[1] ?? '') === 'node-options.mjs') {
  const fn = process.argv[2];
  if (!fn) {
    console.error('usage: node scripts/node-options.mjs <function>');
    process.exit(2);
  }
  try {
    console.log(nodeOptions(fn, fileURLToPath(new globalThis.URL('..', import.meta.url))).join(' '));
  } catch (error) {
    console.error(`node-options: ${error.message}`);
    process.exit(1);
  }
}
