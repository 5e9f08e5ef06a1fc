// Embed the hydration script (functions/compose-model-cache-hydration/src/hydrate.py)
// into a TypeScript module, so the function bundle carries it and the Job
// runs exactly the file the Python tests run. `--check` fails when the module
// is stale (make test runs it; without --check it rewrites the module).
import { readFileSync, writeFileSync } from 'node:fs';

const SOURCE = 'functions/compose-model-cache-hydration/src/hydrate.py';
const TARGET = 'functions/compose-model-cache-hydration/src/hydrate-script.ts';

export function embedded(script) {
  return [
    `// Generated from hydrate.py by scripts/embed-hydrate.mjs (make embed); do not edit.`,
    `// A test checks it matches; edit hydrate.py, then run \`make embed\`.`,
    '',
    '/** The hydration script, byte for byte as in hydrate.py. */',
    `export const HYDRATE_SCRIPT = ${JSON.stringify(script)};`,
    '',
  ].join('\n');
}

const want = embedded(readFileSync(SOURCE, 'utf8'));
if (process.argv.includes('--check')) {
  let have = '';
  try {
    have = readFileSync(TARGET, 'utf8');
  } catch {
    // missing: stale
  }
  if (have !== want) {
    console.error(`${TARGET} is stale: run make embed`);
    process.exit(1);
  }
} else {
  writeFileSync(TARGET, want);
  console.log(`wrote ${TARGET}`);
}
