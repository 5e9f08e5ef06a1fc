// The project's driver of the Function pipeline (render.ts, runner.ts: what the
// control-plane double and bench run on), and the examples with the real
// `crossplane render` (examples.ts), as a library for tests.

export * from './examples.js';
export * from './fetch.js';
export * from './load.js';
export * from './metadata.js';
export * from './render.js';
export * from './runner.js';
export * from './yaml.js';
