// Bundle each function into one self-contained file, functions/<name>/dist/main.js:
// the runtime image then needs Node and that file, nothing else.
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

await Promise.all(
  targets.map((name) =>
    build({
      entryPoints: [`functions/${name}/src/main.ts`],
      outfile: `functions/${name}/dist/main.js`,
      ...NODE_BUNDLE,
      sourcemap: 'linked',
      legalComments: 'linked',
    }),
  ),
);
console.log(`built ${targets.map((name) => `functions/${name}/dist/main.js`).join(', ')}`);
