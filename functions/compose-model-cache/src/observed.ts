// What this cache (or shard) composed before, read from the observed composed
// resources: its ModelCacheShards, its ModelCacheHydration children (a
// shard's own, or a cache's from the layout before shards), and the resources
// the single-function ModelCache composed per cluster (upstream's layout).

import { asArray, asString, getIn, isObject, type JsonObject, type RunFunctionRequest } from '#lib';

/** The desired key of a cluster's child (the contract with compose-model-cache-hydration's parent side). */
const CHILD_PREFIX = 'hydration-';
/** The desired key of a cache's shard of index i. */
const SHARD_PREFIX = 'shard-';
const SHARD_INDEX = /^(0|[1-9][0-9]{0,5})$/;

/**
 * The keys the single-function ModelCache used per cluster (upstream v0.3.1):
 * the staging PVC, the hydration Job and the token Secret.
 */
export const LEGACY_PREFIXES = { pvc: 'pvc-', hydrate: 'hydrate-', auth: 'auth-' } as const;
export type LegacyKind = keyof typeof LEGACY_PREFIXES;
const LEGACY_KINDS = Object.keys(LEGACY_PREFIXES) as LegacyKind[];

export function childKey(cluster: string): string {
  return `${CHILD_PREFIX}${cluster}`;
}

export function shardKey(index: number): string {
  return `${SHARD_PREFIX}${index}`;
}

/** A shard as observed: what its spec lists (as this cache last asked) and what its status says it holds. */
export interface ObservedShard {
  index: number;
  resource: JsonObject;
  /** spec.clusters, by name: the raw member entries. */
  listed: Map<string, JsonObject>;
  /** status.composed: the clusters whose child it composes and that reported. */
  composed: Set<string>;
  /** status.clusters, by name: the raw entries. */
  entries: Map<string, JsonObject>;
  /** status.authMissing: its clusters without their token. */
  authMissing: Set<string>;
}

function readShard(index: number, resource: JsonObject): ObservedShard {
  const listed = new Map<string, JsonObject>();
  for (const member of asArray(getIn(resource, 'spec', 'clusters'))) {
    const name = asString(getIn(member, 'name'));
    if (name !== undefined && isObject(member) && !listed.has(name)) listed.set(name, member);
  }
  const names = (path: string): Set<string> =>
    new Set(asArray(getIn(resource, 'status', path)).filter((name): name is string => typeof name === 'string'));
  const entries = new Map<string, JsonObject>();
  for (const entry of asArray(getIn(resource, 'status', 'clusters'))) {
    const name = asString(getIn(entry, 'name'));
    if (name !== undefined && isObject(entry) && !entries.has(name)) entries.set(name, entry);
  }
  return { index, resource, listed, composed: names('composed'), entries, authMissing: names('authMissing') };
}

export function legacyKey(kind: LegacyKind, cluster: string): string {
  return `${LEGACY_PREFIXES[kind]}${cluster}`;
}

/** One cluster's observed legacy Objects, by kind. */
export type LegacyObjects = Partial<Record<LegacyKind, JsonObject>>;

export interface ObservedComposed {
  /** The observed ModelCacheShards, by index. */
  shards: Map<number, ObservedShard>;
  /** The observed ModelCacheHydration of each cluster. */
  children: Map<string, JsonObject>;
  /** The observed single-function Objects of each cluster. */
  legacy: Map<string, LegacyObjects>;
}

/** Sort the observed composed resources by what they are; one pass, keys this function does not own are left alone. */
export function readObserved(req: RunFunctionRequest): ObservedComposed {
  const shards = new Map<number, ObservedShard>();
  const children = new Map<string, JsonObject>();
  const legacy = new Map<string, LegacyObjects>();
  const resources = req.observed?.resources ?? {};
  for (const key in resources) {
    const resource: unknown = resources[key]?.resource;
    if (!isObject(resource)) continue;
    if (key.startsWith(CHILD_PREFIX) && key.length > CHILD_PREFIX.length) {
      children.set(key.slice(CHILD_PREFIX.length), resource);
      continue;
    }
    if (key.startsWith(SHARD_PREFIX) && SHARD_INDEX.test(key.slice(SHARD_PREFIX.length))) {
      const index = Number(key.slice(SHARD_PREFIX.length));
      shards.set(index, readShard(index, resource));
      continue;
    }
    for (const kind of LEGACY_KINDS) {
      const prefix = LEGACY_PREFIXES[kind];
      if (!key.startsWith(prefix) || key.length === prefix.length) continue;
      const cluster = key.slice(prefix.length);
      const objects = legacy.get(cluster) ?? {};
      objects[kind] = resource;
      legacy.set(cluster, objects);
      break;
    }
  }
  return { shards, children, legacy };
}
