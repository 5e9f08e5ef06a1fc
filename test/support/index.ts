export * from './client.js';
export * from './fixtures.js';
export * from './protocol.js';
export * from './server.js';
export * from './certs.js';
export * from './xrs.js';
export * from './xrd.js';
export * from './fake-function.js';
