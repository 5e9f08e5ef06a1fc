// Whose a remote object is (docs/design/names.md). Every object a cache or a
// replica composes on a workload cluster says which XR it belongs to; before
// an XR writes an object again, it reads what provider-kubernetes observed
// there, and an object that another XR owns is left alone.

import { LABEL_MODELCACHE, LABEL_MODELREPLICA, LABEL_NAMESPACE, OWNED_LABELS_KINDS } from './constants.js';
import { getIn, getObject, getString, isObject, type JsonObject } from './json.js';
import { OWNER_ANNOTATION_PREFIX, describeOwner, ownerAnnotation, type Owner } from './names.js';
import { OBJECT_KIND, OBSERVE_ONLY, composedManifest, keepObservedObject, remoteManifest } from './remote.js';

/**
 * crossplane-runtime writes this on a managed resource once its Create call
 * succeeded: the Object made its remote object, rather than finding one there.
 */
export const CREATE_SUCCEEDED_ANNOTATION = 'crossplane.io/external-create-succeeded';
/** provider-kubernetes applies each Object's manifest as the field manager `provider-kubernetes/<Object name>`. */
const FIELD_MANAGER_PREFIX = 'provider-kubernetes/';
/** What of a cluster-written owner annotation reaches a condition: a tenant on the cluster may write anything there. */
const OWNER_TEXT_MAX = 160;

export type Ownership = { ours: true } | { ours: false; owner: string };

export interface OwnershipOptions {
  /**
   * Also count another provider-kubernetes Object that applied the object as
   * another owner. Only for names that left the namespace out (upstream's
   * replica names): several teams' Objects may have applied one object under
   * such a name before owners were written. Never for the cache's names,
   * which other XRs of the same cache adopt by name on purpose (a hand-over
   * leaves the earlier Object's field manager behind).
   */
  sharedName?: boolean;
}

/**
 * Whether the remote object behind an observed Object is this XR's to write.
 * Ours: not observed yet; or made by this very Object (it created it, so any
 * other that writes it is the intruder); or nothing on it names another
 * owner. Another's: it carries another owner's annotation, or labels of
 * another cache or replica or namespace (objects from before the annotation),
 * or (sharedName) another Object applied it.
 */
export function ownershipOf(observed: JsonObject | undefined, owner: Owner, options: OwnershipOptions = {}): Ownership {
  const remote = remoteManifest(observed);
  if (remote === undefined) return { ours: true };
  if (getString(observed, 'metadata', 'annotations', CREATE_SUCCEEDED_ANNOTATION) !== undefined) return { ours: true };
  const own = ownerAnnotation(owner).key;
  const annotations = getObject(remote, 'metadata', 'annotations') ?? {};
  for (const key of Object.keys(annotations).sort()) {
    if (!key.startsWith(OWNER_ANNOTATION_PREFIX) || key === own) continue;
    const value = annotations[key];
    return { ours: false, owner: typeof value === 'string' && value.length > 0 ? cut(value) : `the owner of annotation ${key}` };
  }
  const labels = getObject(remote, 'metadata', 'labels') ?? {};
  const byLabels = labelledOwner(labels, owner);
  if (byLabels !== undefined) return { ours: false, owner: byLabels };
  if (options.sharedName) {
    const self = getString(observed, 'metadata', 'name');
    for (const entry of arrayOf(getIn(remote, 'metadata', 'managedFields'))) {
      const manager = getString(entry, 'manager');
      if (manager === undefined || !manager.startsWith(FIELD_MANAGER_PREFIX)) continue;
      const other = manager.slice(FIELD_MANAGER_PREFIX.length);
      if (self !== undefined && other !== self) return { ours: false, owner: cut(`the XR of provider-kubernetes Object ${other}`) };
    }
  }
  return { ours: true };
}

/** The owner the labels name, when it is not `owner`: a namespace label of another namespace, or another XR's name label. */
function labelledOwner(labels: JsonObject, owner: Owner): string | undefined {
  const namespace = labels[LABEL_NAMESPACE];
  for (const [kind, label] of OWNED_LABELS_KINDS) {
    const name = labels[label];
    if (typeof name !== 'string') continue;
    const ns = typeof namespace === 'string' ? namespace : owner.namespace;
    if (kind !== owner.kind || name !== owner.name || ns !== owner.namespace) return cut(describeOwner({ kind, name, namespace: ns }));
  }
  return undefined;
}

function arrayOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function cut(text: string): string {
  return text.length > OWNER_TEXT_MAX ? `${text.slice(0, OWNER_TEXT_MAX - 1)}…` : text;
}

/** The owner's labels and annotation on a manifest's metadata (kept beside what it has). */
export function ownerMetadata(owner: Owner): { labels: Record<string, string>; annotations: Record<string, string> } {
  const { key, value } = ownerAnnotation(owner);
  const label = owner.kind === 'ModelCache' ? LABEL_MODELCACHE : LABEL_MODELREPLICA;
  return { labels: { [label]: owner.name, [LABEL_NAMESPACE]: owner.namespace }, annotations: { [key]: value } };
}

/**
 * A desired provider-kubernetes Object with its manifest marked as the owner's
 * (labels and the owner annotation added to what its metadata has). Anything
 * else, and an observe-only Object (it never writes), is returned unchanged.
 * `observed`, the same key's Object as observed: a Deployment it composed
 * without the annotation (a release before owners were written) is given the
 * labels only (keepsItsAnnotations).
 */
export function withOwner(resource: JsonObject, owner: Owner, observed?: JsonObject): JsonObject {
  if (resource['kind'] !== OBJECT_KIND) return resource;
  const spec = getObject(resource, 'spec');
  const policies = spec?.['managementPolicies'];
  if (Array.isArray(policies) && policies.length === OBSERVE_ONLY.length && policies[0] === OBSERVE_ONLY[0]) return resource;
  const forProvider = getObject(spec, 'forProvider');
  const manifest = getObject(forProvider, 'manifest');
  if (spec === undefined || forProvider === undefined || manifest === undefined) return resource;
  const metadata = getObject(manifest, 'metadata') ?? {};
  const mark = ownerMetadata(owner);
  const marked: JsonObject = { ...metadata, labels: { ...(getObject(metadata, 'labels') ?? {}), ...mark.labels } };
  const annotations = {
    ...(getObject(metadata, 'annotations') ?? {}),
    ...(keepsItsAnnotations(manifest, owner, observed) ? {} : mark.annotations),
  };
  if (Object.keys(annotations).length > 0) marked['annotations'] = annotations;
  return { ...resource, spec: { ...spec, forProvider: { ...forProvider, manifest: { ...manifest, metadata: marked } } } };
}

/**
 * Whether the owner annotation is left off: a Deployment's generation counts
 * its annotations as well as its spec (the API server copies them onto its
 * ReplicaSets), so one its Object composed without the annotation (a release
 * before owners were written, so under upstream's names, whose owner its
 * labels and field managers tell) keeps its annotations as they are. Every
 * other kind's generation is its spec's alone, and a new Deployment is
 * created with the annotation.
 */
function keepsItsAnnotations(desired: JsonObject, owner: Owner, observed: JsonObject | undefined): boolean {
  if (desired['apiVersion'] !== 'apps/v1' || desired['kind'] !== 'Deployment') return false;
  const before = composedManifest(observed);
  if (before === undefined) return false;
  // The same object: a replica that moved to new names composes a new one under this key.
  for (const path of [['apiVersion'], ['kind'], ['metadata', 'name'], ['metadata', 'namespace']]) {
    if (getString(before, ...path) !== getString(desired, ...path)) return false;
  }
  return getString(before, 'metadata', 'annotations', ownerAnnotation(owner).key) === undefined;
}

/** An observed Object desired again as it is, but observe-only: its remote object is another XR's, never written or deleted. */
export function leaveToOwner(observed: JsonObject): JsonObject {
  const kept = keepObservedObject(observed);
  const spec = getObject(kept, 'spec') ?? {};
  return { ...kept, spec: { ...spec, managementPolicies: [...OBSERVE_ONLY] } };
}

/** The remote object's kind and name, for a message: "Deployment qwen-chat-a-main-a3fe4". */
export function remoteTitle(observed: JsonObject | undefined): string {
  const manifest = composedManifest(observed);
  return `${getString(manifest, 'kind') ?? 'object'} ${getString(manifest, 'metadata', 'name') ?? '(unnamed)'}`;
}
