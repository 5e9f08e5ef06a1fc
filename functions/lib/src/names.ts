// Composed names. They are a contract with objects that already exist on
// clusters (a PVC made by upstream Modelplane v0.3.1 is adopted by name), so
// they are computed exactly as Crossplane's Python SDK computes them.

import { hash as digest } from 'node:crypto';
import { InputError, DNS_LABEL } from './input.js';
import { quoteValue } from './redact.js';

const DNS_LABEL_MAX = 63;
const HASH_LENGTH = 5;
const SEPARATOR = '-';
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Names made before, by their uncut string. A reconcile of a thousand-cluster
 * cache names a thousand children, the same thousand as last time: a lookup
 * instead of a SHA-256 and four strings each. What a name is never depends
 * on it (the function stays a function of its request); it is bounded, and
 * emptied when full.
 */
const KNOWN_NAMES = 16_384;
const known = new Map<string, string>();

/**
 * Crossplane's Python SDK `resource.child_name`, byte for byte: the parts joined
 * with "-", cut to 57 code points with trailing dashes removed, then "-" and the
 * first five hex digits of the SHA-256 of the whole, uncut string. Always
 * hashed, so a short name and a long one are told apart the same way; never
 * longer than 63 characters.
 */
export function childName(...parts: string[]): string {
  const full = parts.join(SEPARATOR);
  let name = known.get(full);
  if (name === undefined) {
    name = cutAndHash(full);
    if (known.size >= KNOWN_NAMES) known.clear();
    known.set(full, name);
  }
  return name;
}

function cutAndHash(full: string): string {
  // crypto.hash: one call, no Hash object.
  const hash = digest('sha256', full, 'hex').slice(0, HASH_LENGTH);
  // Python slices by code point. Without surrogate pairs (every Kubernetes name) a code point is a
  // UTF-16 unit and a plain slice does; otherwise Array.from splits by code point.
  const cut = DNS_LABEL_MAX - HASH_LENGTH - SEPARATOR.length;
  let prefix = SURROGATE.test(full) ? Array.from(full).slice(0, cut).join('') : full.slice(0, cut);
  while (prefix.endsWith(SEPARATOR)) prefix = prefix.slice(0, -SEPARATOR.length);
  return `${prefix}${SEPARATOR}${hash}`;
}

/**
 * Names that reach childName from user objects must keep the result a DNS
 * label. childName does not clean its input (it must match the SDK), so a bad
 * part is refused here, naming the field it came from.
 */
export function assertNamePart(value: string, field: string): string {
  if (value.length === 0 || value.length > DNS_LABEL_MAX || !DNS_LABEL.test(value)) {
    throw new InputError(
      field,
      `must be a DNS label (lower-case letters, digits and "-", at most 63 characters) to name composed resources (got ${quoteValue(value, 70)})`,
    );
  }
  return value;
}

/** The per-cluster object names of one ModelCache (they live on that cluster, so the cluster is not in them). */
export interface CacheNames {
  /** The staging PVC (HuggingFace): upstream's name, so an existing Bound PVC is adopted. */
  pvc: string;
  /** The hydration Job (and the ServiceAccount, Role and RoleBinding it reports its progress with). */
  job: string;
  /** HuggingFace without sizeGiB: the Job that sizes the claim from the hub's listing, before it exists. */
  sizer: string;
  /** The token Secret the Job reads. */
  authSecret: string;
  /** The OCI resolver Job, its ServiceAccount, Role, RoleBinding and result ConfigMap. */
  resolver: string;
}

export function cacheNames(namespace: string, cache: string): CacheNames {
  return {
    pvc: childName('modelcache', namespace, cache),
    job: childName('modelcache', namespace, cache, 'hydrate'),
    sizer: childName('modelcache', namespace, cache, 'size'),
    authSecret: childName('modelcache', namespace, cache, 'auth'),
    resolver: childName('modelcache', namespace, cache, 'resolve'),
  };
}

/** The ModelCacheHydration child that stages one cache on one cluster. */
export function hydrationName(namespace: string, cache: string, cluster: string): string {
  return childName('modelcache', namespace, cache, cluster);
}

/** A ModelCache's shard of that index. */
export function shardName(namespace: string, cache: string, index: number): string {
  return childName('modelcache', namespace, cache, 'shard', String(index));
}
