// The shared library: everything two functions must agree on, defined once.

export * from './cache-status.js';
export * from './cluster.js';
export * from './constants.js';
export * from './input.js';
export * from './json.js';
export * from './mount.js';
export * from './names.js';
export * from './owner.js';
export * from './protocol.js';
export * from './redact.js';
export * from './remote.js';
export * from './reachability.js';
export * from './reports.js';
export * from './request.js';
export * from './response.js';
export * from './selector.js';
export * from './runtime/flags.js';
export * from './runtime/log.js';
export * from './runtime/serve.js';
export * from './runtime/server.js';
export * from './runtime/tls.js';
export * from './runtime/unary.js';
export * from './runtime/codec.js';
export * from './runtime/limit.js';
export * from './settings.js';
export * from './source.js';
