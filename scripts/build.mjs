// Bundle each function into one self-contained file, functions/<name>/dist/main.js:
// the runtime image then needs Node and that file, nothing else.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { NODE_BUNDLE } from './bundle.mjs';

export const FUNCTIONS = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'];

const only = process.argv.slice(2);
const targets = only.length > 0 ? only : FUNCTIONS;
for (const name of targets) {
  if (!FUNCTIONS.includes(name)) {
    console.error(`unknown function ${name}; one of ${FUNCTIONS.join(', ')}`);
    process.exit(2);
  }
}

// The licence notices of bundled third-party code go beside the bundle (the
// image ships them). esbuild writes that file only when there is something to
// write, and leaves an old one in place, so it is removed first and, when the
// bundle holds no third-party code (as now: the runtime is our own), written
// to say so.
const NO_THIRD_PARTY = 'This bundle contains no third-party code. Node.js ships its own notices with the runtime image.\n';
await Promise.all(
  targets.map(async (name) => {
    const notices = `functions/${name}/dist/main.js.LEGAL.txt`;
    rmSync(notices, { force: true });
    await build({
      entryPoints: [`functions/${name}/src/main.ts`],
      outfile: `functions/${name}/dist/main.js`,
      ...NODE_BUNDLE,
      sourcemap: 'linked',
      legalComments: 'linked',
    });
    if (!existsSync(notices)) writeFileSync(notices, NO_THIRD_PARTY);
  }),
);
console.log(`built ${targets.map((name) => `functions/${name}/dist/main.js`).join(', ')}`);
