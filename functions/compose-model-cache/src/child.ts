// The ModelCacheHydration child of one cluster, per the parent/child contract:
// the cache's source copied down, the token *reference* only, and a name the
// child and everything it composes can be found by.

import {
  CACHE_RETRY_ANNOTATION,
  CACHE_REVERIFY_ANNOTATION,
  KIND,
  LABEL_CLUSTER,
  LABEL_MODELCACHE,
  MODELPLANE_API_VERSION,
  getObject,
  getString,
  hydrationName,
  sourceFields,
  type JsonObject,
} from '#lib';
import type { ModelCache } from './spec.js';

/** What a child copies from its cache: the ModelCache's own fields, or a shard's copy of them. */
export type ChildSource = Pick<ModelCache, 'name' | 'namespace' | 'source' | 'authSecret' | 'retryRequest' | 'reverifyRequest'>;

/** The spec fields the parent writes on a child; anything else there (spec.crossplane) is Crossplane's. */
const OWNED_SPEC_FIELDS = [
  'clusterName',
  'cacheName',
  'source',
  'huggingFace',
  'oci',
  'persistentVolumeClaim',
  'authSecret',
  'inheritedStatus',
] as const;

/**
 * A child's metadata. The cache's retry request reaches every child, stamped
 * or kept (the child acts on it only if it is Failed), under a key of its own
 * so a retry a person asked of one child is never overwritten.
 */
function metadata(cache: ChildSource, cluster: string, name: string, extraAnnotations: Record<string, string> = {}): JsonObject {
  const out: JsonObject = {
    name,
    namespace: cache.namespace,
    labels: { [LABEL_MODELCACHE]: cache.name, [LABEL_CLUSTER]: cluster },
  };
  const annotations: Record<string, string> = { ...extraAnnotations };
  if (cache.retryRequest !== undefined) annotations[CACHE_RETRY_ANNOTATION] = cache.retryRequest;
  if (cache.reverifyRequest !== undefined) annotations[CACHE_REVERIFY_ANNOTATION] = cache.reverifyRequest;
  if (Object.keys(annotations).length > 0) out['annotations'] = annotations;
  return out;
}

/**
 * What every child of `cache` shares: the source and its sibling, and for
 * HuggingFace the token reference beside it, with the namespace it is read
 * in. Built once per reconcile and shared by all the children (nothing
 * changes an object once it is desired), not a thousand times over.
 */
function sharedSpec(cache: ChildSource): JsonObject {
  const shared: JsonObject = { cacheName: cache.name, ...sourceFields(cache.source) };
  if (cache.authSecret) shared['authSecret'] = { ...cache.authSecret };
  return shared;
}

/** What a child carries beyond its cache's spec. */
export interface ChildExtras {
  /** While a shard takes the cluster over from the layout before shards: the status of the child it replaces. */
  inheritedStatus?: JsonObject;
  /** Annotations of its own (the hand-over's). */
  annotations?: Record<string, string>;
}

/** Stamps the child that stages `cache` on a cluster (docs/design/fleet.md for the extras). */
export function childStamper(cache: ChildSource): (cluster: string, extras?: ChildExtras) => JsonObject {
  const shared = sharedSpec(cache);
  return (cluster, extras = {}) => ({
    apiVersion: MODELPLANE_API_VERSION,
    kind: KIND.ModelCacheHydration,
    metadata: metadata(cache, cluster, hydrationName(cache.namespace, cache.name, cluster), extras.annotations),
    spec:
      extras.inheritedStatus === undefined
        ? { clusterName: cluster, ...shared }
        : { clusterName: cluster, ...shared, inheritedStatus: extras.inheritedStatus },
  });
}

/** The child that stages `cache` on `cluster`. */
export function stampChild(cache: ChildSource, cluster: string): JsonObject {
  return childStamper(cache)(cluster);
}

/**
 * The child exactly as observed, for a cluster whose child must stay although
 * it would not be stamped now (retained for a replica, or its cluster briefly
 * unreadable): the fields the parent owns, so nothing about it changes.
 * Crossplane's own `spec.crossplane` is never copied. A child observed without
 * a source (never expected) is stamped afresh rather than sent incomplete.
 */
export function keepChild(
  cache: ChildSource,
  cluster: string,
  observed: JsonObject,
  extraAnnotations: Record<string, string> = {},
): JsonObject {
  const observedSpec = getObject(observed, 'spec');
  if (getString(observedSpec, 'source') === undefined) return stampChild(cache, cluster);
  const spec: JsonObject = {};
  for (const field of OWNED_SPEC_FIELDS) {
    const value = observedSpec?.[field];
    if (value !== undefined && value !== null) spec[field] = value;
  }
  const name = getString(observed, 'metadata', 'name') ?? hydrationName(cache.namespace, cache.name, cluster);
  return {
    apiVersion: getString(observed, 'apiVersion') ?? MODELPLANE_API_VERSION,
    kind: getString(observed, 'kind') ?? KIND.ModelCacheHydration,
    metadata: metadata(cache, cluster, name, extraAnnotations),
    spec,
  };
}
