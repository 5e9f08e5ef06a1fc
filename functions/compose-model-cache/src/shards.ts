// The ModelCacheShards of one cache: what each is told (docs/design/fleet.md).
// The source and token reference are the cache's, copied down as every child
// gets them; the member list is the assignment's; a member being handed over
// carries the status of the child it replaces.

import {
  CACHE_RETRY_ANNOTATION,
  CACHE_REVERIFY_ANNOTATION,
  KIND,
  LABEL_MODELCACHE,
  LABEL_SHARD,
  MODELPLANE_API_VERSION,
  shardName,
  sourceFields,
  type JsonObject,
} from '#lib';
import type { ModelCache } from './spec.js';

export interface ShardMemberSpec {
  name: string;
  /** Kept as it was, and why. */
  keep?: string;
  inheritedStatus?: JsonObject;
}

/** A cache's shard of that index, listing `members` and dropping `drop`. */
export function stampShard(cache: ModelCache, index: number, members: readonly ShardMemberSpec[], drop: readonly string[]): JsonObject {
  const annotations: Record<string, string> = {};
  if (cache.retryRequest !== undefined) annotations[CACHE_RETRY_ANNOTATION] = cache.retryRequest;
  if (cache.reverifyRequest !== undefined) annotations[CACHE_REVERIFY_ANNOTATION] = cache.reverifyRequest;
  const metadata: JsonObject = {
    name: shardName(cache.namespace, cache.name, index),
    namespace: cache.namespace,
    labels: { [LABEL_MODELCACHE]: cache.name, [LABEL_SHARD]: String(index) },
  };
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  const spec: JsonObject = { cacheName: cache.name, ...sourceFields(cache.source) };
  if (cache.authSecret) spec['authSecret'] = { ...cache.authSecret };
  spec['clusters'] = members.map((member) => {
    const out: JsonObject = { name: member.name };
    if (member.keep !== undefined) {
      out['keep'] = true;
      out['note'] = member.keep;
    }
    if (member.inheritedStatus !== undefined) out['inheritedStatus'] = member.inheritedStatus;
    return out;
  });
  if (drop.length > 0) spec['drop'] = [...drop];
  return { apiVersion: MODELPLANE_API_VERSION, kind: KIND.ModelCacheShard, metadata, spec };
}
