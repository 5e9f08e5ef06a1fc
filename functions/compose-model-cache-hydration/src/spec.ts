// The ModelCacheHydration spec, as the parent stamps it (contract.md). Every
// field this function uses is parsed here; anything unusable is an InputError
// naming the field, which the runtime turns into a Fatal result so Crossplane
// changes nothing on the cluster.

import {
  InputError,
  assertNamePart,
  dnsSubdomain,
  isObject,
  object,
  parseAuthSecretRef,
  parseModelSource,
  string,
  type AuthSecretRef,
  type Composite,
  type JsonObject,
  type ModelSource,
} from '#lib';

export type { AuthSecretRef, ClaimSource, HuggingFaceSource, OciSource } from '#lib';

interface Common {
  clusterName: string;
  cacheName: string;
}
export type HydrationSpec = Common &
  ModelSource & {
    authSecret?: AuthSecretRef;
    /**
     * The status of the ModelCacheHydration this one replaces, while a shard
     * takes the cluster over (docs/design/fleet.md): read as this XR's own
     * last status until it has one.
     */
    inheritedStatus?: JsonObject;
  };

const parseSpecFields = object({ clusterName: dnsSubdomain(), cacheName: string() });

/**
 * The spec as the parent stamps it: the cluster, the cache (its name reaches
 * childName, so it must be a DNS label), the source and exactly its sibling
 * (the library's parser, the same the parent uses), and for HuggingFace the
 * token reference.
 */
export function parseSpec(xr: Composite): HydrationSpec {
  const fields = parseSpecFields(xr.spec, 'spec');
  // Both reach childName for the names on the workload cluster, which must stay DNS labels.
  assertNamePart(xr.namespace, 'metadata.namespace');
  const common: Common = { clusterName: fields.clusterName, cacheName: assertNamePart(fields.cacheName, 'spec.cacheName') };
  const source = parseModelSource(xr.spec, 'spec');
  const spec: HydrationSpec = { ...common, ...source };
  const specObject = xr.spec as JsonObject;
  const authSecret = parseAuthSecretRef(specObject['authSecret'], 'spec.authSecret', source, xr.namespace, 'ModelCacheHydration');
  if (authSecret) spec.authSecret = authSecret;
  const inherited = specObject['inheritedStatus'];
  if (inherited !== undefined && inherited !== null) {
    if (!isObject(inherited))
      throw new InputError('spec.inheritedStatus', 'must be an object: the status of the ModelCacheHydration this one replaces');
    spec.inheritedStatus = inherited;
  }
  return spec;
}
