// Bundle the examples tool (test/render/examples-cli.ts) into one file Node 24
// runs without a TypeScript loader, the way functions are bundled:
//   test/render/dist/examples.mjs   make render / render-check / render-update
// It renders with the real `crossplane render` (the CLI `make tools` builds).
import { build } from 'esbuild';
import { NODE_BUNDLE } from './bundle.mjs';

const ENTRIES = { examples: 'test/render/examples-cli.ts' };

await build({
  entryPoints: ENTRIES,
  outdir: 'test/render/dist',
  outExtension: { '.js': '.mjs' },
  ...NODE_BUNDLE,
});
console.log(
  `built ${Object.keys(ENTRIES)
    .map((name) => `test/render/dist/${name}.mjs`)
    .join(', ')}`,
);
