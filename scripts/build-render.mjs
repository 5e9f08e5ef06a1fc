// Bundle the render driver's two command lines (test/render) into single files
// Node 20 runs without a TypeScript loader, the way functions are bundled:
//   test/render/dist/render.mjs     `crossplane render`'s command line over the driver
//   test/render/dist/examples.mjs   make render / render-check / render-update
import { build } from 'esbuild';
import { NODE_BUNDLE } from './bundle.mjs';

const ENTRIES = { render: 'test/render/cli.ts', examples: 'test/render/examples-cli.ts' };

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
