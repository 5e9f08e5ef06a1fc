// Bundle the benchmark's programs (floor server, client, runner, phases) like the functions.
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../scripts/bundle.mjs';

await build({
  entryPoints: [
    'bench/floor.ts',
    'bench/client.ts',
    'bench/run.ts',
    'bench/phases.ts',
    'bench/alloc.ts',
    'bench/fleet/run.ts',
    'bench/fleet/page.ts',
  ],
  outdir: 'bench/dist',
  ...NODE_BUNDLE,
});
