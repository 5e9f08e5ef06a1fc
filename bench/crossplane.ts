// Requests shaped like the ones Crossplane really sends (issue 17). The lean
// scenarios carry what the functions read; a real request carries every
// object as the API server stores it, and Crossplane forwards it whole:
//
// - metadata: uid, resourceVersion, generation, creationTimestamp; the labels
//   and annotations Crossplane adds (`crossplane.io/composite`,
//   `crossplane.io/composition-resource-name`, a managed resource's
//   `crossplane.io/external-name` and create annotations); the owner reference
//   to the XR that composed it; Crossplane's finalizers; and managedFields,
//   one entry per field manager (Crossplane's server-side apply of the
//   composed resource, the status writer, kubectl for what a person applied),
//   each with the fieldsV1 tree of every field it owns;
// - an XR's `spec.crossplane` (composition and revision refs, update policy,
//   the refs of every resource it composed) and statuses with
//   lastTransitionTime and observedGeneration;
// - a provider-kubernetes Object carries its remote manifest twice: as asked
//   (`spec.forProvider.manifest`) and as observed (`status.atProvider.manifest`:
//   the remote object with its own metadata, managedFields, last-applied
//   annotation and status).
//
// These are built from the shapes Kubernetes and Crossplane document
// (ObjectMeta and ManagedFieldsEntry, Crossplane v2's composite and composed
// resource metadata, provider-kubernetes v1's Object), and held against
// requests captured from a real Crossplane v2.4.0 with provider-kubernetes
// v1.2.1 on the local control plane (bench/captured/, recorded by
// test/e2e/capture.e2e.ts; test/bench/calibration.test.ts fails when a field
// they carry is missing here, or a kind's size is off by over 2×). Every
// value is derived from the lean object, so a request stays deterministic, it
// scales to any N, and the functions read the same fields.

import { LABEL_CLUSTER, LABEL_MODELCACHE, isObject, shardName, type JsonObject, type JsonValue } from '#lib';

const CREATED = '2026-11-01T09:14:27Z';
const UPDATED = '2026-11-29T17:02:41Z';
const HASH = '7c9e2f4';

/** A deterministic UID for a name, shaped like the API server's. */
function uid(seed: string): string {
  let h = 0x811c9dc5;
  const words: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
    h = Math.imul(h ^ round, 0x01000193) >>> 0;
    words.push(h.toString(16).padStart(8, '0'));
  }
  const hex = words.join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A composed resource's name as Crossplane generates it: its XR's name and 12 hex digits. */
function generatedName(root: string, seed: string): string {
  return `${root}-${uid(seed).replace(/-/g, '').slice(0, 12)}`;
}

/** A field as a string ('' when it is not one). */
export function text(value: JsonValue | undefined, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

/**
 * The fieldsV1 tree of a value, as the API server records a manager's fields:
 * `f:<field>` per key, `k:{"name":…}` per keyed list item, `v:` per set item.
 */
function fieldsV1(value: JsonValue | undefined, depth = 0): JsonObject {
  const out: JsonObject = {};
  if (depth > 12) return out;
  if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) out[`f:${key}`] = fieldsV1(child, depth + 1);
  } else if (Array.isArray(value)) {
    for (const item of value) {
      if (isObject(item) && typeof item['name'] === 'string') {
        out[`k:{"name":"${item['name']}"}`] = { '.': {}, ...fieldsV1(item, depth + 1) };
      } else if (isObject(item) && typeof item['type'] === 'string') {
        out[`k:{"type":"${item['type']}"}`] = { '.': {}, ...fieldsV1(item, depth + 1) };
      } else if (typeof item === 'string') {
        out[`v:"${item}"`] = {};
      }
    }
  }
  return out;
}

function managedField(
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  fields: JsonObject,
  subresource?: string,
): JsonObject {
  const entry: JsonObject = { manager, operation, apiVersion, time: UPDATED, fieldsType: 'FieldsV1', fieldsV1: fieldsV1(fields) };
  if (subresource) entry['subresource'] = subresource;
  return entry;
}

function withConditionTimes(status: JsonValue | undefined, generation: number): JsonObject {
  const out: JsonObject = isObject(status) ? { ...status } : {};
  const conditions = Array.isArray(out['conditions']) ? out['conditions'] : [];
  out['conditions'] = conditions.map((c) =>
    isObject(c) ? { lastTransitionTime: CREATED, observedGeneration: generation, message: '', ...c } : c,
  );
  return out;
}

export interface Owner {
  apiVersion: string;
  kind: string;
  name: string;
  /** Where a namespaced XR lives: what it composes lives there too. */
  namespace?: string;
}

function ownerReference(owner: Owner): JsonObject {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: uid(`${owner.kind}/${owner.name}`),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** What composed an XR another XR composed: the owner, the resource name it is composed under, the labels its composer put on it. */
export interface ComposedBy {
  owner: Owner;
  key: string;
  labels: JsonObject;
}

/**
 * A hydration as its cache's shard composes it (docs/design/fleet.md): owned
 * by the shard, under the key `hydration-<cluster>`, with its cache's and
 * cluster's labels. The bench's clusters are few, so the shard is the first.
 */
export function hydrationComposedBy(hydration: JsonObject): ComposedBy {
  const metadata = isObject(hydration['metadata']) ? hydration['metadata'] : {};
  const spec = isObject(hydration['spec']) ? hydration['spec'] : {};
  const namespace = text(metadata['namespace']);
  const cache = text(spec['cacheName']);
  const cluster = text(spec['clusterName']);
  return {
    owner: { apiVersion: text(hydration['apiVersion']), kind: 'ModelCacheShard', name: shardName(namespace, cache, 0), namespace },
    key: `hydration-${cluster}`,
    labels: { [LABEL_MODELCACHE]: cache, [LABEL_CLUSTER]: cluster },
  };
}

/**
 * The XR's own shape: metadata as stored, spec.crossplane with the refs of
 * what it composed, a timed status. An XR another XR composed (a hydration,
 * composed by its cache's shard) also carries what its composer's Crossplane added:
 * the owner reference, the resource name annotation, the root's label.
 */
export function compositeAsStored(xr: JsonObject, composed: JsonObject[], composedBy?: ComposedBy): JsonObject {
  const metadata = isObject(xr['metadata']) ? xr['metadata'] : {};
  const name = text(metadata['name'], 'xr');
  const spec = isObject(xr['spec']) ? xr['spec'] : {};
  const apiVersion = text(xr['apiVersion']);
  const kind = text(xr['kind']);
  const plural = `${kind.toLowerCase()}s.${apiVersion.split('/')[0] ?? ''}`;
  const crossplane: JsonObject = {
    compositionRef: { name: plural },
    compositionRevisionRef: { name: `${plural}-${HASH}` },
    compositionUpdatePolicy: 'Automatic',
    ...(isObject(spec['crossplane']) ? spec['crossplane'] : {}),
    resourceRefs: composed.map((c) => ({
      apiVersion: c['apiVersion'] ?? '',
      kind: c['kind'] ?? '',
      name: isObject(c['metadata']) ? (c['metadata']['name'] ?? '') : '',
    })),
  };
  const userSpec: JsonObject = { ...spec };
  delete userSpec['crossplane'];
  const applied = { apiVersion, kind, metadata: { name, namespace: metadata['namespace'] ?? '' }, spec: userSpec };
  const status = 'status' in xr ? withConditionTimes(xr['status'], 3) : undefined;
  const out: JsonObject = {
    ...xr,
    metadata: {
      ...metadata,
      uid: uid(`${kind}/${name}`),
      resourceVersion: '48127361',
      generation: 3,
      creationTimestamp: CREATED,
      labels: {
        'crossplane.io/composite': composedBy?.owner.name ?? name,
        ...composedBy?.labels,
        ...(isObject(metadata['labels']) ? metadata['labels'] : {}),
      },
      annotations: composedBy
        ? {
            'crossplane.io/composition-resource-name': composedBy.key,
            ...(isObject(metadata['annotations']) ? metadata['annotations'] : {}),
          }
        : {
            'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n`,
            ...(isObject(metadata['annotations']) ? metadata['annotations'] : {}),
          },
      ...(composedBy ? { ownerReferences: [ownerReference(composedBy.owner)] } : {}),
      finalizers: ['composite.apiextensions.crossplane.io'],
      managedFields: [
        managedField('kubectl-client-side-apply', 'Update', apiVersion, {
          metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '' } },
          spec: userSpec,
        }),
        managedField('apiextensions.crossplane.io/composite', 'Update', apiVersion, {
          metadata: { finalizers: ['composite.apiextensions.crossplane.io'], labels: { 'crossplane.io/composite': name } },
          spec: { crossplane },
        }),
        ...(status ? [managedField('apiextensions.crossplane.io/composite', 'Apply', apiVersion, { status }, 'status')] : []),
      ],
    },
    spec: { ...spec, crossplane },
  };
  if (status) out['status'] = status;
  return out;
}

/** A composed resource as Crossplane observes it: what was desired, with the metadata the API server and Crossplane add. */
export function composedAsStored(resource: JsonObject, key: string, owner: Owner): JsonObject {
  const metadata = isObject(resource['metadata']) ? resource['metadata'] : {};
  const apiVersion = text(resource['apiVersion']);
  const kind = text(resource['kind']);
  const name = text(metadata['name'], key);
  const managed = kind === 'Object';
  // An XR composing another XR (a cache its hydrations) names it itself; anything else Crossplane names from the root XR.
  const nestedComposite = !managed && kind !== 'Usage' && apiVersion.startsWith('modelplane.ai/');
  const ownerRef = ownerReference(owner);
  const labels = { ...(isObject(metadata['labels']) ? metadata['labels'] : {}), 'crossplane.io/composite': owner.name };
  const annotations: JsonObject = {
    ...(isObject(metadata['annotations']) ? metadata['annotations'] : {}),
    'crossplane.io/composition-resource-name': key,
  };
  // Crossplane writes a Usage's reason into an annotation for `kubectl get usages`.
  const usageReason = kind === 'Usage' && isObject(resource['spec']) ? resource['spec']['reason'] : undefined;
  if (typeof usageReason === 'string') annotations['crossplane.io/usage-details'] = usageReason;
  if (managed) {
    Object.assign(annotations, {
      'crossplane.io/external-name': name,
      'crossplane.io/external-create-pending': CREATED,
      'crossplane.io/external-create-succeeded': CREATED,
    });
  }
  const spec: JsonObject = isObject(resource['spec']) ? { ...resource['spec'] } : {};
  if (managed) {
    spec['deletionPolicy'] ??= 'Delete';
    spec['readiness'] ??= { policy: 'SuccessfulCreate' };
    spec['watch'] ??= false;
    const forProvider = isObject(spec['forProvider']) ? spec['forProvider'] : {};
    const manifest = isObject(forProvider['manifest']) ? forProvider['manifest'] : undefined;
    if (manifest) spec['forProvider'] = { ...forProvider, manifest };
  } else {
    spec['crossplane'] = {
      compositionRef: { name: `${kind.toLowerCase()}s.${apiVersion.split('/')[0] ?? ''}` },
      compositionRevisionRef: { name: `${kind.toLowerCase()}s.${apiVersion.split('/')[0] ?? ''}-${HASH}` },
      compositionUpdatePolicy: 'Automatic',
      // What the nested XR composed in turn (a hydration at rest keeps its claim's Object).
      resourceRefs: [{ apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind: 'Object', name: generatedName(owner.name, name) }],
      ...(isObject(spec['crossplane']) ? spec['crossplane'] : {}),
    };
  }
  let status = withConditionTimes(resource['status'], 2);
  if (managed) {
    const atProvider = isObject(status['atProvider']) ? status['atProvider'] : {};
    const remote = isObject(atProvider['manifest']) ? atProvider['manifest'] : undefined;
    if (remote) status = { ...status, atProvider: { ...atProvider, manifest: remoteAsStored(remote) } };
  }
  const desired = {
    metadata: { labels, annotations: { 'crossplane.io/composition-resource-name': key }, ownerReferences: [ownerRef] },
    spec,
  };
  return {
    ...resource,
    metadata: {
      ...(nestedComposite ? {} : { generateName: `${owner.name}-` }),
      ...(owner.namespace && kind !== 'Namespace' ? { namespace: owner.namespace } : {}),
      ...metadata,
      name,
      uid: uid(`${kind}/${name}/${key}`),
      resourceVersion: '48127455',
      generation: 2,
      creationTimestamp: CREATED,
      labels,
      annotations,
      ownerReferences: [ownerRef],
      finalizers: [managed ? 'finalizer.managedresource.crossplane.io' : 'composite.apiextensions.crossplane.io'],
      managedFields: [
        managedField(`apiextensions.crossplane.io/composed/${HASH}`, 'Apply', apiVersion, desired),
        managedField(managed ? 'provider-kubernetes' : 'apiextensions.crossplane.io/composite', 'Update', apiVersion, {
          metadata: { annotations: managed ? { 'crossplane.io/external-name': '' } : {}, finalizers: ['x'] },
        }),
        managedField(
          managed ? 'provider-kubernetes' : 'apiextensions.crossplane.io/composite',
          managed ? 'Update' : 'Apply',
          apiVersion,
          { status },
          'status',
        ),
      ],
    },
    spec,
    status,
  };
}

/** The remote object provider-kubernetes reports in status.atProvider.manifest: as the workload cluster stores it. */
function remoteAsStored(remote: JsonObject): JsonObject {
  const metadata = isObject(remote['metadata']) ? remote['metadata'] : {};
  const apiVersion = text(remote['apiVersion'], 'v1');
  const applied = { ...remote };
  delete applied['status'];
  const status = isObject(remote['status']) ? remote['status'] : undefined;
  const kind = text(remote['kind']);
  // What the workload cluster adds: a claim's protection finalizer, a claim template's defaulted metadata.
  const finalizers = kind === 'PersistentVolumeClaim' ? { finalizers: ['kubernetes.io/pvc-protection'] } : {};
  const spec = isObject(remote['spec']) ? remote['spec'] : undefined;
  const defaulted = kind === 'ResourceClaimTemplate' && spec ? { spec: { metadata: {}, ...spec } } : {};
  return {
    ...remote,
    ...defaulted,
    metadata: {
      ...metadata,
      ...finalizers,
      uid: uid(`remote/${text(remote['kind'])}/${text(metadata['name'])}`),
      resourceVersion: '918273',
      generation: 1,
      creationTimestamp: CREATED,
      annotations: {
        ...(isObject(metadata['annotations']) ? metadata['annotations'] : {}),
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(applied),
      },
      managedFields: [
        managedField('provider-kubernetes', 'Update', apiVersion, applied),
        ...(status ? [managedField('kube-controller-manager', 'Update', apiVersion, { status }, 'status')] : []),
      ],
    },
  };
}

/** A required resource (an InferenceCluster, a ModelCache, a Secret) as the API server returns it. */
export function requiredAsStored(resource: JsonObject): JsonObject {
  const kind = text(resource['kind']);
  if (kind === 'Secret' || kind === 'ConfigMap')
    return composedAsStored(resource, 'required', { apiVersion: 'v1', kind: 'Namespace', name: 'ml-team' });
  const metadata = isObject(resource['metadata']) ? resource['metadata'] : {};
  const name = text(metadata['name']);
  if (kind === 'InferenceCluster') {
    // The XRD's default, written by the API server: a cluster's stack is Standard unless it says otherwise.
    const spec = isObject(resource['spec']) ? resource['spec'] : {};
    // An InferenceCluster is an XR upstream: it composed node pools, Helm releases and Objects of its own.
    const pools = ['system', 'a100', 'h100', 'gpu-operator', 'lws', 'gateway', 'pc', 'rbac', 'storage'];
    const composed = pools.map((pool, i) => ({
      apiVersion:
        i < 3 ? 'container.gcp.m.upbound.io/v1beta1' : i < 6 ? 'helm.m.crossplane.io/v1beta1' : 'kubernetes.m.crossplane.io/v1alpha1',
      kind: i < 3 ? 'NodePool' : i < 6 ? 'Release' : 'Object',
      metadata: { name: `${name}-${pool}` },
    }));
    return compositeAsStored({ ...resource, spec: { stack: 'Standard', ...spec } }, composed);
  }
  if (kind === 'ModelCacheHydration') {
    // A replica's cluster's hydration, as its shard composed it; at rest it keeps its claim's Object, named from the root XR.
    const cache = isObject(resource['spec']) ? text(resource['spec']['cacheName']) : '';
    const claim = {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { name: generatedName(cache, name) },
    };
    return compositeAsStored(resource, [claim], hydrationComposedBy(resource));
  }
  if (kind !== 'ModelCache') return compositeAsStored(resource, []);
  // A ModelCache composed one hydration per cluster it lists.
  const listed = isObject(resource['status']) && Array.isArray(resource['status']['clusters']) ? resource['status']['clusters'] : [];
  const composed = listed.map((entry) => ({
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCacheHydration',
    metadata: { name: `${name}-${isObject(entry) ? text(entry['name']) : ''}` },
  }));
  // Only a replica requires a cache, and its Usage has Crossplane mark the cache in use.
  const labels = { ...(isObject(metadata['labels']) ? metadata['labels'] : {}), 'crossplane.io/in-use': 'true' };
  return compositeAsStored({ ...resource, metadata: { ...metadata, labels } }, composed);
}
