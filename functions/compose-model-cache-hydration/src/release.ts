// What a Job needs only while it runs (its ServiceAccount, Role and
// RoleBinding, and the HuggingFace token Secret) goes with the Job: the
// cluster's own garbage collector removes it, whatever the control plane is
// doing.
//
// Why: Crossplane deletes an Object it no longer desires with foreground
// propagation; provider-kubernetes deletes the remote object only once its
// finalizer is the Object's last, so it waits for the garbage collector to
// delete the Object's ProviderConfigUsage and drop `foregroundDeletion`; and
// the provider re-creates that usage each time it looks again. On the fleet
// benchmark's plane at 300 clusters the control plane's garbage collector
// (20 requests a second, Kubernetes' default) fell behind the re-creations,
// and about a thousand such Objects, the token Secrets' among them, stayed
// for as long as we watched (docs/fleet-benchmark.md, "Objects that outlive
// their Job"). An Object without the Delete policy leaves at once: the
// provider removes its finalizer without looking at the cluster, and nothing
// re-creates its usage.
//
// How: once the Job has finished and an object of its is no longer desired,
// it stays desired while it is handed over, in two rounds. First it is owned
// by the remote Job (an owner reference) and, a Secret, emptied: the token
// leaves the cluster in that round, as it did when the Secret was deleted.
// Once the cluster shows the reference (provider-kubernetes applies the whole
// manifest in one request), the Delete policy goes; once that is observed,
// the Object is dropped and leaves at once, and the object goes when the Job
// does, spec.ttlSecondsAfterFinished after it finished. In that order, a
// cache deleted halfway still takes everything with it: until the cluster
// shows the Job owning an object, its Object can delete it. A Job that has
// not finished (the token taken away mid-download) hands over nothing: what
// it used is deleted as before, at once.

import type { V1OwnerReference } from '@kubernetes/client-node';
import {
  asArray,
  canDeleteRemote,
  composedManifest,
  conditionOf,
  getIn,
  getObject,
  getString,
  isObject,
  isSecretManifest,
  keepObservedObject,
  managementPoliciesOf,
  remoteManifest,
  SECRET_VALUE_FIELDS,
  toJson,
  withoutDelete,
  type JsonObject,
} from '#lib';
import type { Outcome } from './outcome.js';

/** A source's Jobs (the one to hand over to first) and the objects they leave to the Job once finished. */
export interface JobScoped {
  jobs: readonly string[];
  scoped: readonly string[];
}

/**
 * Keep each object of `scoped` that the outcome dropped while it is handed to the finished Job; then
 * let it go (docs/design/fleet.md, "What a Job leaves behind").
 */
export function releaseWithJob(outcome: Outcome, observed: (key: string) => JsonObject | undefined, scoped: JobScoped): void {
  // A hold keeps every Object as observed already.
  if (outcome.keepObserved) return;
  const finished = finishedJob(scoped.jobs.map(observed));
  const desired = new Set(outcome.resources.map(([key]) => key));
  for (const key of scoped.scoped) {
    const object = observed(key);
    if (!object || desired.has(key)) continue;
    // Once given to the Job, the Object names it: the Job's own Object was dropped in that round.
    const owner = jobNamedBy(object) ?? finished;
    if (!owner) continue;
    const owned = ownedByJob(object, owner);
    // Owned by the Job on the cluster and unable to delete it: handed over, let go.
    if (owned && !canDeleteRemote(object)) continue;
    outcome.resources.push([key, handedOver(object, owner, owned)]);
  }
}

/** The owner reference to the first Job observed finished (Complete or Failed) on the cluster, with its uid. */
function finishedJob(jobs: readonly (JsonObject | undefined)[]): V1OwnerReference | undefined {
  for (const object of jobs) {
    const job = remoteManifest(object);
    if (conditionOf(job, 'Complete')?.status !== 'True' && conditionOf(job, 'Failed')?.status !== 'True') continue;
    const reference = jobReference({ ...getObject(job, 'metadata'), apiVersion: getIn(job, 'apiVersion'), kind: getIn(job, 'kind') });
    if (reference) return reference;
  }
  return undefined;
}

/** The Job this Object's manifest already names as its owner (handed over in an earlier round). */
function jobNamedBy(object: JsonObject): V1OwnerReference | undefined {
  for (const reference of asArray(getIn(composedManifest(object), 'metadata', 'ownerReferences'))) {
    const job = jobReference(reference);
    if (job) return job;
  }
  return undefined;
}

/** An owner reference to a Job, from anything with its kind, name and uid (a Job's metadata, an owner reference). */
function jobReference(value: unknown): V1OwnerReference | undefined {
  const name = getString(value, 'name');
  const uid = getString(value, 'uid');
  if (getString(value, 'kind') !== 'Job' || name === undefined || uid === undefined) return undefined;
  return { apiVersion: getString(value, 'apiVersion') ?? 'batch/v1', kind: 'Job', name, uid };
}

/** The cluster shows the object owned by the Job, and the Object asks for no data (applied in the same request). */
function ownedByJob(object: JsonObject, owner: V1OwnerReference): boolean {
  if (holdsData(composedManifest(object))) return false;
  const references = asArray(getIn(remoteManifest(object), 'metadata', 'ownerReferences'));
  return references.some((reference) => isObject(reference) && reference['uid'] === owner.uid);
}

/**
 * The Object as last desired, its remote object owned by the Job, a Secret emptied; once the cluster
 * shows that (`owned`), without the Delete policy too.
 */
function handedOver(object: JsonObject, owner: V1OwnerReference, owned: boolean): JsonObject {
  const kept = keepObservedObject(object);
  const spec = getObject(kept, 'spec') ?? {};
  const forProvider = getObject(spec, 'forProvider') ?? {};
  const asked = getObject(forProvider, 'manifest') ?? {};
  // A Secret keeps no value once its Job is done: the token leaves the cluster in this round.
  const manifest: JsonObject = isSecretManifest(asked)
    ? Object.fromEntries(Object.entries(asked).filter(([field]) => !SECRET_VALUE_FIELDS.includes(field)))
    : { ...asked };
  manifest['metadata'] = { ...(getObject(manifest, 'metadata') ?? {}), ownerReferences: [toJson(owner)] };
  const handed: JsonObject = { ...spec, forProvider: { ...forProvider, manifest } };
  if (owned) handed['managementPolicies'] = withoutDelete(managementPoliciesOf(object));
  return { ...kept, spec: handed };
}

/** A Secret manifest that still carries a value. */
function holdsData(manifest: JsonObject | undefined): boolean {
  return isSecretManifest(manifest) && SECRET_VALUE_FIELDS.some((field) => Object.keys(getObject(manifest, field) ?? {}).length > 0);
}
