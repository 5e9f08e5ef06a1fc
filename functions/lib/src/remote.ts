// Objects on workload clusters. Everything a function puts on a workload
// cluster is wrapped in a provider-kubernetes Object, which reports the remote
// object back under status.atProvider.manifest.

import { asArray, getIn, getObject, getString, isObject, type JsonObject } from './json.js';

export const OBJECT_API_VERSION = 'kubernetes.m.crossplane.io/v1alpha1';
export const OBJECT_KIND = 'Object';

export type ManagementPolicy = 'Observe' | 'Create' | 'Update' | 'Delete' | 'LateInitialize' | '*';

/**
 * For Jobs: no Delete. Dropping the Object from desired state orphans the Job,
 * whose own TTL then removes it and its pod, so a finished Job is never
 * deleted mid-run by a reconcile.
 */
export const JOB_POLICIES: readonly ManagementPolicy[] = ['Observe', 'Create', 'Update', 'LateInitialize'];
/** For things Modelplane must see but never create, change or delete (a user's claim, a result ConfigMap). */
export const OBSERVE_ONLY: readonly ManagementPolicy[] = ['Observe'];

/** Readiness queries, evaluated by provider-kubernetes against the remote object. */
export const READY_QUERY = {
  pvcBound: 'object.status.phase == "Bound"',
  jobComplete: 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")',
  workloadAvailable: 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Available" && c.status == "True")',
} as const;

export type Readiness = { policy: 'DeriveFromCelQuery'; celQuery: string } | { policy: 'SuccessfulCreate' };

export function celReadiness(celQuery: string): Readiness {
  return { policy: 'DeriveFromCelQuery', celQuery };
}
export const SUCCESSFUL_CREATE: Readiness = { policy: 'SuccessfulCreate' };

export interface RemoteObjectOptions {
  /** The ClusterProviderConfig of the workload cluster. */
  providerConfig: string;
  manifest: JsonObject;
  /** Omitted means the provider's default. */
  readiness?: Readiness;
  /** Omitted means the provider's default (everything, Delete included). */
  managementPolicies?: readonly ManagementPolicy[];
}

/**
 * crossplane-runtime's managed reconciler writes this annotation on every new
 * managed resource that lacks one (its first of six writes while creating
 * it); provider-kubernetes reads the remote object's name from the manifest
 * and never this. Set from the start, to the remote object's name, that write
 * is gone: one write and one watch event fewer per Object (docs/design/fleet.md).
 */
export const EXTERNAL_NAME_ANNOTATION = 'crossplane.io/external-name';

/** A provider-kubernetes Object that puts `manifest` on the workload cluster. */
export function remoteObject(options: RemoteObjectOptions): JsonObject {
  const spec: JsonObject = {
    forProvider: { manifest: options.manifest },
    providerConfigRef: { kind: 'ClusterProviderConfig', name: options.providerConfig },
  };
  if (options.readiness) spec['readiness'] = { ...options.readiness };
  if (options.managementPolicies) spec['managementPolicies'] = [...options.managementPolicies];
  const object: JsonObject = { apiVersion: OBJECT_API_VERSION, kind: OBJECT_KIND, spec };
  const remoteName = getString(options.manifest, 'metadata', 'name');
  if (remoteName !== undefined) object['metadata'] = { annotations: { [EXTERNAL_NAME_ANNOTATION]: remoteName } };
  return object;
}

/** The manifest an Object was composed with (what it asks the provider to apply), or undefined. */
export function composedManifest(object: unknown): JsonObject | undefined {
  return getObject(object, 'spec', 'forProvider', 'manifest');
}

/** The remote object as last observed, or undefined before the provider has seen it. */
export function remoteManifest(object: unknown): JsonObject | undefined {
  return getObject(object, 'status', 'atProvider', 'manifest');
}

/** The remote object's own status, or an empty object. */
export function remoteStatus(object: unknown): JsonObject {
  return getObject(remoteManifest(object), 'status') ?? {};
}

export interface ObservedCondition {
  status: string;
  reason?: string;
  message?: string;
}

/** A condition of type `type` in `status.conditions` of any object. */
export function conditionOf(object: unknown, type: string): ObservedCondition | undefined {
  for (const raw of asArray(getIn(object, 'status', 'conditions'))) {
    if (!isObject(raw) || raw['type'] !== type) continue;
    const condition: ObservedCondition = { status: typeof raw['status'] === 'string' ? raw['status'] : 'Unknown' };
    const reason = getString(raw, 'reason');
    if (reason) condition.reason = reason;
    const message = getString(raw, 'message');
    if (message) condition.message = message;
    return condition;
  }
  return undefined;
}

export function conditionIsTrue(object: unknown, type: string): boolean {
  // The same walk as conditionOf, without building the condition: asked of every child every reconcile.
  for (const raw of asArray(getIn(object, 'status', 'conditions'))) {
    if (isObject(raw) && raw['type'] === type) return raw['status'] === 'True';
  }
  return false;
}

/** Crossplane's verdict on a composed resource: its Ready condition is True. */
export function isReady(object: unknown): boolean {
  return conditionIsTrue(object, 'Ready');
}

/** The management policies an observed Object carries (empty when unset). */
export function managementPoliciesOf(object: unknown): string[] {
  return asArray(getIn(object, 'spec', 'managementPolicies')).filter((p): p is string => typeof p === 'string');
}

/**
 * The desired form of an Object exactly as it was observed: what we last asked
 * of it (manifest, provider config, readiness, policies), without what
 * Crossplane or the provider added. Re-desiring this when an input goes
 * missing (a cluster briefly unreadable, a cache status that flaps) keeps the
 * remote object as it is, where dropping it would delete it.
 */
export function keepObservedObject(observed: JsonObject): JsonObject {
  const spec = getObject(observed, 'spec') ?? {};
  const kept: JsonObject = {};
  for (const field of ['forProvider', 'providerConfigRef', 'readiness', 'managementPolicies'] as const) {
    if (spec[field] !== undefined && spec[field] !== null) kept[field] = spec[field];
  }
  const out: JsonObject = {
    apiVersion: getString(observed, 'apiVersion') ?? OBJECT_API_VERSION,
    kind: getString(observed, 'kind') ?? OBJECT_KIND,
    spec: kept,
  };
  const externalName = getString(observed, 'metadata', 'annotations', EXTERNAL_NAME_ANNOTATION);
  if (externalName !== undefined) out['metadata'] = { annotations: { [EXTERNAL_NAME_ANNOTATION]: externalName } };
  return out;
}

/** Every management policy except Delete: what an Object keeps doing while it can no longer delete. */
export const ALL_BUT_DELETE: readonly ManagementPolicy[] = ['Observe', 'Create', 'Update', 'LateInitialize'];

/** Could provider-kubernetes delete the remote object if this Object went away? Unset policies mean `*`. */
export function canDeleteRemote(object: unknown): boolean {
  const policies = managementPoliciesOf(object);
  return policies.length === 0 || policies.includes('*') || policies.includes('Delete');
}

/** The policies an Object had, without Delete (`*` or unset spelled out, minus Delete). */
export function withoutDelete(policies: readonly string[]): ManagementPolicy[] {
  if (policies.length === 0 || policies.includes('*')) return [...ALL_BUT_DELETE];
  return policies.filter((policy): policy is ManagementPolicy => policy !== 'Delete');
}
