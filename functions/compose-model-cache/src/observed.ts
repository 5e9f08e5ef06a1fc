// What this cache composed before, read from the observed composed resources:
// its ModelCacheHydration children, and the resources the single-function
// ModelCache composed per cluster (the layout being upgraded from).

import { isObject, type JsonObject, type RunFunctionRequest } from '#lib';

/** The desired key of a cluster's child (the contract with compose-model-cache-hydration's parent side). */
const CHILD_PREFIX = 'hydration-';

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

export function legacyKey(kind: LegacyKind, cluster: string): string {
  return `${LEGACY_PREFIXES[kind]}${cluster}`;
}

/** One cluster's observed legacy Objects, by kind. */
export type LegacyObjects = Partial<Record<LegacyKind, JsonObject>>;

export interface ObservedComposed {
  /** The observed ModelCacheHydration of each cluster. */
  children: Map<string, JsonObject>;
  /** The observed single-function Objects of each cluster. */
  legacy: Map<string, LegacyObjects>;
}

/** Sort the observed composed resources by what they are; one pass, keys this function does not own are left alone. */
export function readObserved(req: RunFunctionRequest): ObservedComposed {
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
  return { children, legacy };
}
