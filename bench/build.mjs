// Bundle the benchmark's programs (floor server, client, runner, phases) like the functions.
import { build } from 'esbuild';

await build({
  entryPoints: ['bench/floor.ts', 'bench/client.ts', 'bench/run.ts', 'bench/phases.ts'],
  outdir: 'bench/dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
