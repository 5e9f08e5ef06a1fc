// A function's Node flags: functions/<name>/node-options, one flag or more per
// line, `#` lines for the reasons. The image runs with them as NODE_OPTIONS;
// `make bench`, `make e2e` and `make run` pass the same.
//
//   node scripts/node-options.mjs <function>    prints them on one line

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The flags, in order; none when the function has no node-options file. */
export function nodeOptions(fn, root = '.') {
  const file = join(root, 'functions', fn, 'node-options');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(/\s+/))
    .filter(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const fn = process.argv[2];
  if (!fn) {
    console.error('usage: node scripts/node-options.mjs <function>');
    process.exit(2);
  }
  console.log(nodeOptions(fn).join(' '));
}
