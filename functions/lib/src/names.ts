// Composed names, each defined once (docs/design/names.md). The cache's are a
// contract with objects that already exist on clusters (a PVC made by upstream
// Modelplane v0.3.1 is adopted by name), so they are computed exactly as
// Crossplane's Python SDK computes them. The replica's carry its namespace,
// so two teams' replicas of one name never share an object on a cluster;
// upstream's, which leave it out, are kept for what already runs under them.

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

function cutAndHash(full: string, hashed: string = full, max: number = DNS_LABEL_MAX): string {
  // crypto.hash: one call, no Hash object.
  const hash = digest('sha256', hashed, 'hex').slice(0, HASH_LENGTH);
  // Python slices by code point. Without surrogate pairs (every Kubernetes name) a code point is a
  // UTF-16 unit and a plain slice does; otherwise Array.from splits by code point.
  const cut = max - HASH_LENGTH - SEPARATOR.length;
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

// ---------------------------------------------------------------------------
// Names unique per XR (docs/design/names.md).

/** An XR, as what it composes on a workload cluster is told apart by. */
export interface XrRef {
  namespace: string;
  name: string;
}

/**
 * Never in a namespace, a name or a part (each a DNS label, or one of this
 * file's fixed words), so the hashed string of one XR's object is never the
 * hashed string of another's: childName's "-" is in names too, and
 * ("ml", "team-qwen") joins to what ("ml-team", "qwen") does.
 */
const SCOPE_SEPARATOR = '/';

/**
 * The name of an object one XR composes on a workload cluster, unique per XR
 * and per purpose: readable as `<readable parts>` joined with "-" (cut to fit
 * `max`, trailing dashes removed), then "-" and the first five hex digits of
 * the SHA-256 of `<namespace>/<name>/<purpose>/<parts>`. Two XRs of one name
 * in two namespaces read alike and hash apart; one XR's objects of two
 * purposes (an engine called "epp" and the endpoint picker) hash apart too.
 */
export function scopedName(xr: XrRef, purpose: string, readable: readonly string[], parts: readonly string[], max = DNS_LABEL_MAX): string {
  const hashed = [xr.namespace, xr.name, purpose, ...parts].join(SCOPE_SEPARATOR);
  return cutAndHash(readable.join(SEPARATOR), hashed, max);
}

/**
 * Every name a ModelReplica composes on its workload cluster, and the value
 * of the label its serving pods carry (the InferencePool selects on it). One
 * shape for both generations: `replicaNames` (this release: unique per XR)
 * and `upstreamReplicaNames` (upstream v0.3.1's, byte for byte, which leave
 * the namespace out and so collide across teams); a replica keeps upstream's
 * only for what it already runs under them (docs/design/names.md).
 */
export interface ReplicaNameSet {
  /** A Standalone engine's Deployment; also its pods' `modelplane.ai/workload` value (the Deployment's selector). */
  deployment(engine: string): string;
  /** A gang's LeaderWorkerSet (its controller names a headless Service after it: Service-safe). */
  leaderWorkerSet(engine: string): string;
  /** A gang's Grove PodCliqueSet on the Dynamo stack (at most GROVE_NAME_MAX characters, Service-safe). */
  podCliqueSet(engine: string): string;
  /** A member's DRA ResourceClaimTemplate. */
  claimTemplate(engine: string, role: string): string;
  /** The InferencePool. */
  pool: string;
  /** The endpoint picker's ServiceAccount, Role, RoleBinding, ConfigMap and Deployment. */
  epp: string;
  /** The endpoint picker's Service (Service-safe), which the InferencePool names. */
  eppService: string;
  /** The HTTPRoute. */
  route: string;
  /** The `modelplane.ai/serving` value on every serving pod, and the InferencePool's selector. */
  serving: string;
}

/**
 * Grove refuses a PodCliqueSet whose own name plus its scaling group's and
 * clique's names (and the indices between them) run past 45 characters; its
 * pods are named `<pcs>-<i>-gang-<j>-worker-<k>`. Upstream's newer code budgets
 * 24 for the PodCliqueSet and hashes like childName within it.
 */
export const GROVE_NAME_MAX = 24;

/** A Service's name is a DNS-1035 label (it starts with a letter); a replica's name may start with a digit. */
const STARTS_WITH_LETTER = /^[a-z]/;
/** What goes in front of a name that must start with a letter and doesn't ("mr", for ModelReplica). */
const LETTER_FIRST = 'mr';

/**
 * This release's names: `<replica>-<what>-<hash>`, the hash over the
 * replica's namespace, name, purpose and parts, so every one is unique per
 * XR on its cluster and workload namespace, whatever that namespace is
 * (`default` shared by every team included). Each starts with a letter
 * ("mr-" in front of a replica name that starts with a digit), so any of them
 * may name a Service.
 */
export function replicaNames(replica: XrRef): ReplicaNameSet {
  const lead = STARTS_WITH_LETTER.test(replica.name) ? [replica.name] : [LETTER_FIRST, replica.name];
  const name = (purpose: string, ...parts: string[]): string => scopedName(replica, purpose, [...lead, ...parts], parts);
  const self = name('replica');
  const epp = name('epp', 'epp');
  return {
    deployment: (engine) => name('engine', engine),
    leaderWorkerSet: (engine) => name('engine', engine),
    podCliqueSet: (engine) => scopedName(replica, 'engine', [...lead, engine], [engine], GROVE_NAME_MAX),
    claimTemplate: (engine, role) => name('claim', engine, role, 'devices'),
    pool: name('pool', 'pool'),
    epp,
    eppService: epp,
    route: self,
    serving: self,
  };
}

/**
 * Upstream Modelplane v0.3.1's names, byte for byte: what a replica composed
 * before this release runs under (docs/design/names.md). Not unique across
 * namespaces: never given to anything new.
 */
export function upstreamReplicaNames(replica: string): ReplicaNameSet {
  const engine = (e: string): string => childName(replica, e);
  // Upstream composes `<replica>-<suffix>` even past 63 characters, which Kubernetes refuses, so no such
  // object exists to keep: past 63 the name was always hashed here.
  const routing = (suffix: string): string => {
    const plain = `${replica}${SEPARATOR}${suffix}`;
    return plain.length <= DNS_LABEL_MAX ? plain : childName(replica, suffix);
  };
  const epp = routing('epp');
  return {
    deployment: engine,
    leaderWorkerSet: (e) => serviceSafe(engine(e)),
    podCliqueSet: (e) => upstreamGroveName(replica, e),
    claimTemplate: (e, role) => childName(replica, e, role, 'devices'),
    pool: routing('pool'),
    epp,
    eppService: serviceSafe(epp),
    route: replica,
    serving: replica,
  };
}

/**
 * Upstream composes a Service name that starts with a digit anyway, and
 * Kubernetes refuses it, so no such Service exists to keep: a name that
 * doesn't start with a letter gets "mr-" in front, hashed to fit 63
 * characters. A name that does is left exactly as upstream has it.
 */
function serviceSafe(name: string): string {
  return STARTS_WITH_LETTER.test(name) ? name : childName(LETTER_FIRST, name);
}

/**
 * Upstream's `grove_pcs_name`: `<replica>-<engine>` cut to 18 characters,
 * trailing dashes removed, then "-" and the first five hex digits of the
 * SHA-256 of the whole, uncut string; "mr-" in front of a name that starts
 * with a digit, before the cut (Grove names a Service after it).
 */
function upstreamGroveName(replica: string, engine: string): string {
  const plain = `${replica}${SEPARATOR}${engine}`;
  const full = STARTS_WITH_LETTER.test(plain) ? plain : `${LETTER_FIRST}${SEPARATOR}${plain}`;
  return cutAndHash(full, full, GROVE_NAME_MAX);
}

// ---------------------------------------------------------------------------
// Who a remote object belongs to (docs/design/names.md).

/** The XR kinds whose remote objects carry an owner: a ModelCache (all its hydrations' objects), a ModelReplica. */
export type OwnerKind = 'ModelCache' | 'ModelReplica';

export interface Owner extends XrRef {
  kind: OwnerKind;
}

/** Every owner annotation's key starts so; the rest is a hash of the owner (ownerAnnotation). */
export const OWNER_ANNOTATION_PREFIX = 'modelplane.ai/owner-';
const OWNER_HASH_LENGTH = 12;

/**
 * The annotation that says which XR composed a remote object: a key of its own
 * per owner (a hash of kind, namespace and name), its value the owner in
 * words. A key per owner, not one key: provider-kubernetes applies each
 * Object's manifest server-side as a field manager of its own, so a second
 * XR's Object writing the same object adds its key beside the first's instead
 * of overwriting it, and each of the two sees the other.
 */
export function ownerAnnotation(owner: Owner): { key: string; value: string } {
  const hash = digest('sha256', [owner.kind, owner.namespace, owner.name].join(SCOPE_SEPARATOR), 'hex').slice(0, OWNER_HASH_LENGTH);
  return { key: `${OWNER_ANNOTATION_PREFIX}${hash}`, value: describeOwner(owner) };
}

/** "ModelReplica qwen-chat-a in namespace team-b": the owner a condition names. */
export function describeOwner(owner: Owner): string {
  return `${owner.kind} ${owner.name} in namespace ${owner.namespace}`;
}
