// What render adds to what the pipeline returned: the metadata Crossplane puts
// on every composed resource (the composition-resource-name annotation, the
// crossplane.io/composite label, the XR as controller, a name or generateName),
// and the conditions it sets on the XR.

import { asArray, compareNames, getObject, getString, isObject, type JsonObject } from '#lib';

export const LABEL_COMPOSITE = 'crossplane.io/composite';
export const LABEL_CLAIM_NAME = 'crossplane.io/claim-name';
export const LABEL_CLAIM_NAMESPACE = 'crossplane.io/claim-namespace';
export const ANNOTATION_COMPOSITION_RESOURCE_NAME = 'crossplane.io/composition-resource-name';

/** Render's lastTransitionTime for every condition: a fixed time, so output is stable. */
export const CONDITION_TIME = '2024-01-01T00:00:00Z';

/** Condition types only Crossplane may set; render ignores them when a function returns them. */
export const SYSTEM_CONDITION_TYPES: readonly string[] = ['Ready', 'Synced', 'Healthy'];

/** How many unready resources the XR's Ready message names before "and N more". */
const FIRST_N = 3;

function metadataOf(object: JsonObject): JsonObject {
  const metadata = object['metadata'];
  if (isObject(metadata)) return metadata;
  const created: JsonObject = {};
  object['metadata'] = created;
  return created;
}

/** Set a metadata string, or remove it when empty, as Kubernetes' Unstructured setters do. */
export function setMetadataString(object: JsonObject, field: 'name' | 'namespace' | 'generateName', value: string | undefined): void {
  const metadata = metadataOf(object);
  if (value === undefined || value === '') Reflect.deleteProperty(metadata, field);
  else metadata[field] = value;
}

function isStringMap(value: unknown): value is Record<string, string> {
  return isObject(value) && Object.values(value).every((entry) => typeof entry === 'string');
}

/** Add to a string map, replacing it when what is there is not one (Kubernetes' AddLabels/AddAnnotations). */
function addToMap(object: JsonObject, field: 'labels' | 'annotations', entries: Record<string, string>): void {
  const metadata = metadataOf(object);
  const existing = metadata[field];
  metadata[field] = isStringMap(existing) ? { ...existing, ...entries } : { ...entries };
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

function readOwnerReferences(object: JsonObject): OwnerReference[] {
  return asArray(getObject(object, 'metadata')?.['ownerReferences']).map((raw) => {
    const ref: OwnerReference = {
      apiVersion: getString(raw, 'apiVersion') ?? '',
      kind: getString(raw, 'kind') ?? '',
      name: getString(raw, 'name') ?? '',
      uid: getString(raw, 'uid') ?? '',
    };
    if (isObject(raw) && typeof raw['controller'] === 'boolean') ref.controller = raw['controller'];
    if (isObject(raw) && typeof raw['blockOwnerDeletion'] === 'boolean') ref.blockOwnerDeletion = raw['blockOwnerDeletion'];
    return ref;
  });
}

function writeOwnerReferences(object: JsonObject, refs: OwnerReference[]): void {
  metadataOf(object)['ownerReferences'] = refs.map((ref) => ({ ...ref }));
}

/**
 * Crossplane's RenderComposedResourceMetadata, as render applies it: a
 * generateName from the XR when the resource names itself neither way, the
 * XR's namespace, the composition-resource-name annotation, the
 * crossplane.io/composite label (and claim labels when the XR carries them),
 * and the XR as controller owner. Fails, as Crossplane does, when another
 * owner already controls the resource.
 */
export function setComposedResourceMetadata(composed: JsonObject, xr: JsonObject, key: string): void {
  const xrLabels = getObject(xr, 'metadata', 'labels') ?? {};
  const xrName = getString(xr, 'metadata', 'name') ?? '';
  const compositeLabel = xrLabels[LABEL_COMPOSITE];
  const namePrefix = typeof compositeLabel === 'string' && compositeLabel !== '' ? compositeLabel : xrName;

  if (!getString(composed, 'metadata', 'name') && !getString(composed, 'metadata', 'generateName')) {
    setMetadataString(composed, 'generateName', `${namePrefix}-`);
  }
  const xrNamespace = getString(xr, 'metadata', 'namespace');
  if (xrNamespace) setMetadataString(composed, 'namespace', xrNamespace);

  addToMap(composed, 'annotations', { [ANNOTATION_COMPOSITION_RESOURCE_NAME]: key });
  addToMap(composed, 'labels', { [LABEL_COMPOSITE]: namePrefix });
  const claimName = xrLabels[LABEL_CLAIM_NAME];
  const claimNamespace = xrLabels[LABEL_CLAIM_NAMESPACE];
  if (typeof claimName === 'string' && claimName !== '' && typeof claimNamespace === 'string' && claimNamespace !== '') {
    addToMap(composed, 'labels', { [LABEL_CLAIM_NAMESPACE]: claimNamespace, [LABEL_CLAIM_NAME]: claimName });
  }

  const owner: OwnerReference = {
    apiVersion: getString(xr, 'apiVersion') ?? '',
    kind: getString(xr, 'kind') ?? '',
    name: xrName,
    uid: getString(xr, 'metadata', 'uid') ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
  const refs = readOwnerReferences(composed);
  const controller = refs.find((ref) => ref.controller === true);
  if (controller && controller.uid !== owner.uid) {
    throw new Error(
      `cannot render composed resource "${key}" metadata: cannot set composite resource "${xrName}" as controller ref of composed resource: ` +
        `${getString(composed, 'metadata', 'name') ?? ''} is already controlled by ${controller.kind} ${controller.name} (UID ${controller.uid})`,
    );
  }
  const same = refs.findIndex((ref) => ref.uid === owner.uid);
  if (same >= 0) refs[same] = owner;
  else refs.push(owner);
  writeOwnerReferences(composed, refs);
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    a.reason === b.reason &&
    (a.message ?? '') === (b.message ?? '') &&
    (a.observedGeneration ?? 0) === (b.observedGeneration ?? 0)
  );
}

function readConditions(status: JsonObject): Condition[] {
  const out: Condition[] = [];
  for (const raw of asArray(status['conditions'])) {
    const type = getString(raw, 'type');
    // A list Crossplane can't read as conditions is replaced, not merged into.
    if (!isObject(raw) || type === undefined) return [];
    const condition: Condition = {
      type,
      status: getString(raw, 'status') ?? '',
      reason: getString(raw, 'reason') ?? '',
      lastTransitionTime: getString(raw, 'lastTransitionTime') ?? '',
    };
    const message = getString(raw, 'message');
    if (message) condition.message = message;
    if (typeof raw['observedGeneration'] === 'number' && raw['observedGeneration'] !== 0)
      condition.observedGeneration = raw['observedGeneration'];
    out.push(condition);
  }
  return out;
}

/**
 * Crossplane's ConditionedStatus.SetConditions on the XR's status: a
 * condition replaces the one of its type unless they are equal (then the old
 * one, with its time, stays); a new type is appended.
 */
export function setConditions(xr: JsonObject, ...conditions: Condition[]): void {
  let status = xr['status'];
  if (!isObject(status)) {
    status = {};
    xr['status'] = status;
  }
  const existing = readConditions(status);
  for (const condition of conditions) {
    let found = false;
    for (let i = 0; i < existing.length; i++) {
      if (existing[i]!.type !== condition.type) continue;
      found = true;
      if (!sameCondition(existing[i]!, condition)) existing[i] = condition;
    }
    if (!found) existing.push(condition);
  }
  status['conditions'] = existing.map((c) => {
    const out: JsonObject = { type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime, reason: c.reason };
    if (c.message) out['message'] = c.message;
    if (c.observedGeneration) out['observedGeneration'] = c.observedGeneration;
    return out;
  });
}

/** "a, b, and c" / "a, b, c, and 2 more", over the names sorted (Crossplane's StableNAndSomeMore). */
export function someNames(names: readonly string[], n = FIRST_N): string {
  const sorted = [...names].sort(compareNames);
  if (sorted.length > n) return `${sorted.slice(0, n).join(', ')}, and ${sorted.length - n} more`;
  if (sorted.length === n) return `${sorted.slice(0, n - 1).join(', ')}, and ${sorted[n - 1]!}`;
  return sorted.join(', ');
}
