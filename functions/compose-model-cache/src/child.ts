// The ModelCacheHydration child of one cluster, per the parent/child contract:
// the cache's source copied down, the token *reference* only, and a name the
// child and everything it composes can be found by.

import { KIND, LABEL_CLUSTER, LABEL_MODELCACHE, MODELPLANE_API_VERSION, getObject, getString, hydrationName, type JsonObject } from '#lib';
import type { CacheSource, ModelCache } from './spec.js';

/** The spec fields the parent writes on a child; anything else there (spec.crossplane) is Crossplane's. */
const OWNED_SPEC_FIELDS = ['clusterName', 'cacheName', 'source', 'huggingFace', 'oci', 'persistentVolumeClaim', 'authSecret'] as const;

function metadata(cache: ModelCache, cluster: string, name: string): JsonObject {
  return {
    name,
    namespace: cache.namespace,
    labels: { [LABEL_MODELCACHE]: cache.name, [LABEL_CLUSTER]: cluster },
  };
}

/** The source and its sibling, as the child reads them. For HuggingFace the authSecret reference moves beside it. */
function sourceFields(source: CacheSource): JsonObject {
  switch (source.source) {
    case 'HuggingFace': {
      const huggingFace: JsonObject = { repo: source.huggingFace.repo, sizeGiB: source.huggingFace.sizeGiB };
      if (source.huggingFace.revision !== undefined) huggingFace['revision'] = source.huggingFace.revision;
      const fields: JsonObject = { source: source.source, huggingFace };
      if (source.authSecret) fields['authSecret'] = { ...source.authSecret };
      return fields;
    }
    case 'OCI': {
      const oci: JsonObject = { ref: source.oci.ref };
      if (source.oci.imagePullSecrets) oci['imagePullSecrets'] = source.oci.imagePullSecrets.map((secret) => ({ name: secret.name }));
      if (source.oci.subPath !== undefined) oci['subPath'] = source.oci.subPath;
      return { source: source.source, oci };
    }
    case 'PersistentVolumeClaim': {
      const persistentVolumeClaim: JsonObject = { claimName: source.persistentVolumeClaim.claimName };
      if (source.persistentVolumeClaim.subPath !== undefined) persistentVolumeClaim['subPath'] = source.persistentVolumeClaim.subPath;
      return { source: source.source, persistentVolumeClaim };
    }
  }
}

/** The child that stages `cache` on `cluster`. */
export function stampChild(cache: ModelCache, cluster: string): JsonObject {
  return {
    apiVersion: MODELPLANE_API_VERSION,
    kind: KIND.ModelCacheHydration,
    metadata: metadata(cache, cluster, hydrationName(cache.namespace, cache.name, cluster)),
    spec: { clusterName: cluster, cacheName: cache.name, ...sourceFields(cache.source) },
  };
}

/**
 * The child exactly as observed, for a cluster whose child must stay although
 * it would not be stamped now (retained for a replica, or its cluster briefly
 * unreadable): the fields the parent owns, so nothing about it changes.
 * Crossplane's own `spec.crossplane` is never copied. A child observed without
 * a source (never expected) is stamped afresh rather than sent incomplete.
 */
export function keepChild(cache: ModelCache, cluster: string, observed: JsonObject): JsonObject {
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
    metadata: metadata(cache, cluster, name),
    spec,
  };
}
