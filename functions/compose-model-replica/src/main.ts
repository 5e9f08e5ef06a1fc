// The compose-model-replica server: flags, TLS, logs and shutdown come from the shared runtime.

import { serveFunction } from '#lib';
import { DECODED_AT_ONCE, compose } from './fn.js';

await serveFunction({ name: 'compose-model-replica', handler: compose, decodedAtOnce: DECODED_AT_ONCE });
