// The compose-model-cache server: flags, TLS, logs and shutdown come from the shared runtime.

import { serveFunction } from '#lib';
import { compose } from './fn.js';
import { V8_FLAGS } from './v8-flags.js';

await serveFunction({ name: 'compose-model-cache', handler: compose, v8Flags: V8_FLAGS });
