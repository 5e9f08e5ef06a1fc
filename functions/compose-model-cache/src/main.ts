// The compose-model-cache server: flags, TLS, logs and shutdown come from the shared runtime.

import { serveFunction } from '#lib';
import { compose } from './fn.js';

await serveFunction({ name: 'compose-model-cache', handler: compose });
