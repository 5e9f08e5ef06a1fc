// The ModelCache as this function reads it. Everything the XRD refuses at apply
// time is refused here too, naming the field: an XR can reach the function
// from an older XRD (or be written before a rule existed), and a bad value must
// become a Fatal result, never a silently wrong child.

import {
  DEFAULT_TOKEN_KEY,
  InputError,
  RETRY_ANNOTATION,
  REVERIFY_ANNOTATION,
  assertNamePart,
  dnsSubdomain,
  isObject,
  labelSelector,
  object,
  optional,
  parseModelSource,
  secretKey,
  type AuthSecretRef,
  type Composite,
  type LabelSelector,
  type ModelSource,
} from '#lib';

export interface ModelCache {
  name: string;
  namespace: string;
  source: ModelSource;
  /** HuggingFace only: where the child finds the token. A reference, never a value. */
  authSecret?: AuthSecretRef;
  clusterSelector: LabelSelector;
  /** The retry a person asked of every failed cluster (RETRY_ANNOTATION), copied onto each child. */
  retryRequest?: string;
  /** The re-verification a person asked of every cluster (REVERIFY_ANNOTATION), copied onto each child. */
  reverifyRequest?: string;
}

const selectorParser = object({ clusterSelector: labelSelector() });
const authSecretParser = object({ name: dnsSubdomain(), key: optional(secretKey()) });

/**
 * Parse the XR: its name and namespace (they reach childName, so they must be
 * DNS labels), the source and exactly its sibling (the library's parser, the
 * one the child uses too, so a cache admitted here never stamps a child that
 * refuses its spec), the token reference, and the selector (which must select
 * something).
 */
export function parseModelCache(xr: Composite): ModelCache {
  const name = assertNamePart(xr.name, 'metadata.name');
  const namespace = assertNamePart(xr.namespace, 'metadata.namespace');
  if (!isObject(xr.spec)) throw new InputError('spec', 'must be an object');
  const source = parseModelSource(xr.spec, 'spec');
  const { clusterSelector } = selectorParser(xr.spec, 'spec');
  const cache: ModelCache = { name, namespace, source, clusterSelector };
  const retryRequest = xr.annotations[RETRY_ANNOTATION];
  if (retryRequest !== undefined) cache.retryRequest = retryRequest;
  const reverifyRequest = xr.annotations[REVERIFY_ANNOTATION];
  if (reverifyRequest !== undefined) cache.reverifyRequest = reverifyRequest;
  const authSecret = source.source === 'HuggingFace' ? (xr.spec['huggingFace'] as Record<string, unknown>)['authSecret'] : undefined;
  if (authSecret !== undefined && authSecret !== null) {
    const parsed = authSecretParser(authSecret, 'spec.huggingFace.authSecret');
    // The child reads the Secret in the cache's own namespace: a cache can't point at another team's token.
    cache.authSecret = { name: parsed.name, key: parsed.key ?? DEFAULT_TOKEN_KEY, namespace };
  }
  return cache;
}
