// The ModelCacheShard as its ModelCache stamps it (docs/design/fleet.md): the
// cache's source, copied down, and the clusters this shard stages on. Parsed
// with the same parsers the cache and its children use, so a shard never
// stamps a child that refuses its spec.

import {
  CACHE_RETRY_ANNOTATION,
  CACHE_REVERIFY_ANNOTATION,
  InputError,
  array,
  assertNamePart,
  boolean,
  dnsLabel,
  isObject,
  object,
  optional,
  parseAuthSecretRef,
  parseModelSource,
  string,
  type Composite,
  type JsonObject,
  type Parser,
} from '#lib';
import type { ChildSource } from '../child.js';

/** One cluster of the shard, as its ModelCache lists it. */
export interface ShardMember {
  name: string;
  /** Keep the cluster's child exactly as observed (retained, or its cluster unreadable) instead of stamping it. */
  keep: boolean;
  /** Why it is kept; first in its entry's message. */
  note?: string;
  /** During a hand-over from the layout before shards: the status of the child this shard takes over. */
  inheritedStatus?: JsonObject;
}

export interface ModelCacheShard {
  /** What every child copies: the cache's name, namespace, source, token reference and the cache's requests. */
  cache: ChildSource;
  members: ShardMember[];
  /** Clusters that left the cache: their children are dropped. */
  drop: Set<string>;
}

const inheritedStatus: Parser<JsonObject> = (value, field) => {
  if (!isObject(value)) throw new InputError(field, 'must be an object: the status of the ModelCacheHydration this shard takes over');
  return value;
};

const memberParser = object({
  name: dnsLabel(),
  keep: optional(boolean()),
  note: optional(string({ maxLength: 512 })),
  inheritedStatus: optional(inheritedStatus),
});
const fieldsParser = object({
  cacheName: string(),
  clusters: array(memberParser, { maxItems: 100 }),
  drop: optional(array(dnsLabel(), { maxItems: 200 })),
});

export function parseShard(xr: Composite): ModelCacheShard {
  assertNamePart(xr.name, 'metadata.name');
  const namespace = assertNamePart(xr.namespace, 'metadata.namespace');
  if (!isObject(xr.spec)) throw new InputError('spec', 'must be an object');
  const fields = fieldsParser(xr.spec, 'spec');
  const name = assertNamePart(fields.cacheName, 'spec.cacheName');
  const source = parseModelSource(xr.spec, 'spec');
  const cache: ChildSource = { name, namespace, source };
  const authSecret = parseAuthSecretRef(xr.spec['authSecret'], 'spec.authSecret', source, namespace, 'ModelCacheShard');
  if (authSecret) cache.authSecret = authSecret;
  // The cache's own requests reach the shard under the cache's keys, and go on to every child the same way.
  const retryRequest = xr.annotations[CACHE_RETRY_ANNOTATION];
  if (retryRequest !== undefined) cache.retryRequest = retryRequest;
  const reverifyRequest = xr.annotations[CACHE_REVERIFY_ANNOTATION];
  if (reverifyRequest !== undefined) cache.reverifyRequest = reverifyRequest;

  const seen = new Set<string>();
  const members: ShardMember[] = [];
  fields.clusters.forEach((parsed, i) => {
    if (seen.has(parsed.name)) throw new InputError(`spec.clusters[${i}].name`, `lists cluster ${parsed.name} twice`);
    seen.add(parsed.name);
    const member: ShardMember = { name: parsed.name, keep: parsed.keep ?? false };
    if (parsed.note !== undefined) member.note = parsed.note;
    if (parsed.inheritedStatus !== undefined) member.inheritedStatus = parsed.inheritedStatus;
    members.push(member);
  });
  return { cache, members, drop: new Set(fields.drop ?? []) };
}
