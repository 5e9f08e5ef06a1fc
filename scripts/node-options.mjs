// A function's Node flags: functions/<name>/node-options, one flag or more per
// line, `#` lines for the reasons. The image runs with them as NODE_OPTIONS;
// `make bench`, `make e2e` and `make run` pass the same.
//
//   node scripts/node-options.mjs <function>    prints them on one line

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository this script is in. */
const REPO = fileURLToPath(new globalThis.URL('..', import.meta.url));

/** The flags, in order; none when the function has no node-options file. */
export function nodeOptions(fn, root = REPO) {
  if (!existsSync(join(root, 'functions', fn))) throw new Error(`no function ${fn} in ${join(root, 'functions')}`);
  const file = join(root, 'functions', fn, 'node-options');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(/\s+/))
    .filter(Boolean);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fn = process.argv[2];
  if (!fn) {
    console.error('usage: node scripts/node-options.mjs <function>');
    process.exit(2);
  }
  try {
    console.log(nodeOptions(fn).join(' '));
  } catch (error) {
    console.error(`node-options: ${error.message}`);
    process.exit(1);
  }
}
