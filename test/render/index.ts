// The project's `crossplane render` (see render.ts), as a library for tests.

export * from './examples.js';
export * from './fetch.js';
export * from './load.js';
export * from './metadata.js';
export * from './render.js';
export * from './runner.js';
export * from './yaml.js';
