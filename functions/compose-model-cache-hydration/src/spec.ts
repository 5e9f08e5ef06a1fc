// The ModelCacheHydration spec, as the parent stamps it (contract.md). Every
// field this function uses is parsed here; anything unusable is an InputError
// naming the field, which the runtime turns into a Fatal result so Crossplane
// changes nothing on the cluster.

import {
  DEFAULT_TOKEN_KEY,
  InputError,
  assertNamePart,
  dnsLabel,
  dnsSubdomain,
  object,
  optional,
  parseModelSource,
  secretKey,
  string,
  type AuthSecretRef,
  type Composite,
  type ModelSource,
} from '#lib';

export type { AuthSecretRef, ClaimSource, HuggingFaceSource, OciSource } from '#lib';

interface Common {
  clusterName: string;
  cacheName: string;
}
export type HydrationSpec = Common & ModelSource & { authSecret?: AuthSecretRef };

const parseSpecFields = object({
  clusterName: dnsSubdomain(),
  cacheName: string(),
  authSecret: optional(object({ name: dnsSubdomain(), key: optional(secretKey()), namespace: optional(dnsLabel()) })),
});

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
  if (fields.authSecret) {
    if (source.source !== 'HuggingFace')
      throw new InputError('spec.authSecret', `applies only to the HuggingFace source (spec.source is ${source.source})`);
    // Crossplane reads the Secret with its own rights: a reference into another
    // namespace would copy someone else's token onto a workload cluster.
    const namespace = fields.authSecret.namespace ?? xr.namespace;
    if (namespace !== xr.namespace) {
      throw new InputError(
        'spec.authSecret.namespace',
        `must be this ModelCacheHydration's own namespace ${xr.namespace} (got ${namespace})`,
      );
    }
    spec.authSecret = { name: fields.authSecret.name, key: fields.authSecret.key ?? DEFAULT_TOKEN_KEY, namespace };
  }
  return spec;
}
