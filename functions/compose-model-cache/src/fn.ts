// compose-model-cache: the fan-out of a ModelCache and its roll-up, at two
// levels (docs/design/fleet.md). A ModelCache composes ModelCacheShards of up
// to 100 clusters each (cache.ts); a ModelCacheShard composes one
// ModelCacheHydration per cluster (shard/fn.ts). One function serves both:
// they share the child's contract, and the Composition of each kind calls it.

import { InputError, KIND, describe, readComposite, refuseSettings, type RunFunctionRequest, type RunFunctionResponse } from '#lib';
import { composeCache } from './cache.js';
import { composeShard } from './shard/fn.js';

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  refuseSettings(req.input, 'compose-model-cache');
  const { kind } = readComposite(req);
  if (kind === KIND.ModelCacheShard) return composeShard(req);
  if (kind === KIND.ModelCache || kind === '') return composeCache(req);
  throw new InputError(
    'observed composite resource kind',
    `must be ${KIND.ModelCache} or ${KIND.ModelCacheShard}: this function composes nothing else (got ${describe(kind)})`,
  );
}
