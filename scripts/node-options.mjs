// A function's runtime settings, each with its reasons in a file beside the
// function, `#` lines for the reasons:
//
// - functions/<name>/node-options: Node flags, one or more per line. The
//   image runs with them as NODE_OPTIONS.
// - functions/<name>/glibc-tunables: the C library's allocator settings, one
//   name=value per line. The image runs with them as GLIBC_TUNABLES (joined
//   with ':'); glibc reads them once, as the process starts.
//
// `make bench`, `make e2e` and `make run` pass the same.
//
//   node scripts/node-options.mjs <function>                    prints its flags on one line
//   node scripts/node-options.mjs --glibc-tunables <function>   prints its GLIBC_TUNABLES value

import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The words of functions/<fn>/<file> that are not comments, in order; none without the file. */
function settings(fn, root, file) {
  if (!existsSync(join(root, 'functions', fn))) throw new Error(`no function ${fn} in ${join(root, 'functions')}`);
  const path = join(root, 'functions', fn, file);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(/\s+/))
    .filter(Boolean);
}

/** The flags, in order, of the function in the repository at `root`; none when it has no node-options file. */
export function nodeOptions(fn, root) {
  return settings(fn, root, 'node-options');
}

/**
 * The function's GLIBC_TUNABLES value: its glibc-tunables joined with ':', or
 * '' without the file (an empty GLIBC_TUNABLES sets nothing). Each must be
 * name=value; a tunable glibc does not know it ignores without a word, so
 * the names are checked against glibc's own list by the package tests.
 */
export function glibcTunables(fn, root) {
  const tunables = settings(fn, root, 'glibc-tunables');
  for (const tunable of tunables) {
    if (!/^glibc\.[a-z_.]+=[^:=]+$/.test(tunable))
      throw new Error(`functions/${fn}/glibc-tunables: "${tunable}" is not glibc.<name>=<value>`);
  }
  return tunables.join(':');
}

// Run as a command, not when imported (the bench bundles this module into its own).
if (basename(process.argv[1] ?? '') === 'node-options.mjs') {
  const args = process.argv.slice(2);
  const tunables = args[0] === '--glibc-tunables';
  const fn = tunables ? args[1] : args[0];
  if (!fn || fn.startsWith('-')) {
    console.error('usage: node scripts/node-options.mjs [--glibc-tunables] <function>');
    process.exit(2);
  }
  try {
    const root = fileURLToPath(new globalThis.URL('..', import.meta.url));
    console.log(tunables ? glibcTunables(fn, root) : nodeOptions(fn, root).join(' '));
  } catch (error) {
    console.error(`node-options: ${error.message}`);
    process.exit(1);
  }
}
