// What every bundle of this repository shares: one ESM file that Node 24 runs
// without a TypeScript loader (the functions, the render driver, the benchmark).
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  logLevel: 'warning',
  // Bundled CommonJS dependencies (grpc-js) call require(); give ESM one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
};
