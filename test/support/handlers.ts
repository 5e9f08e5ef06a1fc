// The three functions as their servers run them, for what runs them in
// process (the hardening tests, the benchmark): each one's handler, and how
// its server decodes on demand (what its main.ts passes to serveFunction).

import { decodeRequestOnDemand, type FunctionHandler, type RunFunctionRequest } from '#lib';
import { compose as composeModelCache } from '../../functions/compose-model-cache/src/fn.js';
import { compose as composeHydration } from '../../functions/compose-model-cache-hydration/src/fn.js';
import { DECODED_AT_ONCE as REPLICA_DECODED_AT_ONCE, compose as composeReplica } from '../../functions/compose-model-replica/src/fn.js';
import type { FunctionName } from './server.js';

export const HANDLERS: Record<FunctionName, FunctionHandler> = {
  'compose-model-cache': composeModelCache,
  'compose-model-cache-hydration': composeHydration,
  'compose-model-replica': composeReplica,
};

/** Each server's on-demand decoding: the runtime's default, but the replica's leaves more for later. */
export const ON_DEMAND: Record<FunctionName, { decodedAtOnce?: number }> = {
  'compose-model-cache': {},
  'compose-model-cache-hydration': {},
  'compose-model-replica': { decodedAtOnce: REPLICA_DECODED_AT_ONCE },
};

/** Decode a request on demand as the function's server does. */
export function decodeAsServed(name: FunctionName, bytes: Uint8Array): RunFunctionRequest {
  return decodeRequestOnDemand(bytes, ON_DEMAND[name]);
}
