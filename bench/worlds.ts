// The state of a fleet at N clusters, as Crossplane would send it: realistic
// InferenceClusters (with the metadata and conditions the API server adds),
// children and remote Objects observed Ready, XR statuses from a previous
// reconcile. Each builder returns what a scenario sends, nothing cached.

import { cacheNames, claimMount, huggingFaceMount, hydrationName, ociImageMount, type CacheMount, type JsonObject } from '#lib';

export const NAMESPACE = 'ml-team';
export const CACHE = 'qwen';
export const REPO = 'Qwen/Qwen3-0.6B';
export const TIER = { 'modelplane.ai/tier': 'a100' };
const DIGEST = 'sha256:4f5e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e';
const OCI_REPO = 'us-docker.pkg.dev/acme/models/qwen';
const STAMP = '2026-11-01T00:00:00Z';

export function clusterName(i: number): string {
  return `cluster-${String(i).padStart(4, '0')}`;
}

function conditions(...types: [string, string][]): JsonObject[] {
  return types.map(([type, reason]) => ({ type, status: 'True', reason, lastTransitionTime: STAMP }));
}

function metadata(name: string, extra: JsonObject = {}): JsonObject {
  return {
    name,
    uid: `00000000-0000-4000-8000-${name.length.toString().padStart(12, '0')}`,
    resourceVersion: '4812736',
    generation: 3,
    creationTimestamp: STAMP,
    ...extra,
  };
}

export function inferenceCluster(i: number): JsonObject {
  const name = clusterName(i);
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'InferenceCluster',
    metadata: metadata(name, { labels: { ...TIER, 'topology.kubernetes.io/region': i % 2 === 0 ? 'us-east1' : 'europe-west4' } }),
    spec: {
      cluster: { gke: { project: 'acme-ml', region: 'us-east1', kubernetesVersion: '1.35' } },
      crossplane: { compositionRef: { name: 'inferenceclusters.modelplane.ai' } },
    },
    status: {
      providerConfigRef: { name: `${name}-pc` },
      cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
      gateway: { address: `10.0.${i % 250}.1` },
      conditions: conditions(['Ready', 'Available'], ['Synced', 'ReconcileSuccess']),
    },
  };
}

export function clusters(n: number): JsonObject[] {
  return Array.from({ length: n }, (_, i) => inferenceCluster(i));
}

export type Source = 'HuggingFace' | 'OCI' | 'PersistentVolumeClaim';

export function sourceSpec(source: Source): JsonObject {
  switch (source) {
    case 'HuggingFace':
      return { source, huggingFace: { repo: REPO, revision: 'main', sizeGiB: 20 } };
    case 'OCI':
      return { source, oci: { ref: `${OCI_REPO}:v1`, imagePullSecrets: [{ name: 'regcred' }] } };
    case 'PersistentVolumeClaim':
      return { source, persistentVolumeClaim: { claimName: 'qwen-weights', subPath: 'qwen' } };
  }
}

export function mountFor(source: Source): CacheMount {
  switch (source) {
    case 'HuggingFace':
      return huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: REPO });
    case 'OCI':
      return ociImageMount({ reference: `${OCI_REPO}@${DIGEST}`, imagePullSecrets: ['regcred'] });
    case 'PersistentVolumeClaim':
      return claimMount({ claimName: 'qwen-weights', subPath: 'qwen' });
  }
}

/** A ready cluster entry / child status for a source. */
export function readyState(source: Source): JsonObject {
  const state: JsonObject = { phase: 'Ready', mount: mountFor(source) as unknown as JsonObject };
  if (source === 'OCI') Object.assign(state, { digest: DIGEST, artifactKind: 'Image', resolvedRef: `${OCI_REPO}:v1` });
  if (source === 'PersistentVolumeClaim') state['accessModes'] = ['ReadOnlyMany'];
  return state;
}

export function modelCache(n: number, steady: boolean, source: Source = 'HuggingFace'): JsonObject {
  const xr: JsonObject = {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: metadata(CACHE, { namespace: NAMESPACE }),
    spec: {
      ...sourceSpec(source),
      clusterSelector: { matchLabels: TIER },
      crossplane: { compositionRef: { name: 'modelcaches.modelplane.ai' } },
    },
  };
  if (steady) {
    xr['status'] = {
      summary: { ready: `${n}/${n}` },
      clusters: Array.from({ length: n }, (_, i) => ({ name: clusterName(i), ...readyState(source) })),
      conditions: conditions(
        ['ClustersMatched', 'Matched'],
        ['ArtifactReady', 'Staged'],
        ['Ready', 'Available'],
        ['Synced', 'ReconcileSuccess'],
      ),
    };
  }
  return xr;
}

/** The children of a steady ModelCache, observed Ready, keyed as composed. */
export function children(n: number, source: Source = 'HuggingFace'): Record<string, JsonObject> {
  return childrenFor(
    Array.from({ length: n }, (_, i) => clusterName(i)),
    source,
  );
}

/** The child of cluster i, Ready: what a replica reads of its cluster (docs/design/fleet.md). */
export function childOf(i: number, source: Source = 'HuggingFace'): JsonObject {
  return Object.values(childrenFor([clusterName(i)], source))[0]!;
}

export function childrenFor(names: readonly string[], source: Source = 'HuggingFace'): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const cluster of names) {
    out[`hydration-${cluster}`] = {
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelCacheHydration',
      metadata: metadata(hydrationName(NAMESPACE, CACHE, cluster), {
        namespace: NAMESPACE,
        labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/cluster': cluster, 'crossplane.io/composite': CACHE },
        annotations: { 'crossplane.io/composition-resource-name': `hydration-${cluster}` },
      }),
      spec: {
        clusterName: cluster,
        cacheName: CACHE,
        ...sourceSpec(source),
        crossplane: { compositionRef: { name: 'modelcachehydrations.modelplane.ai' } },
      },
      status: {
        ...readyState(source),
        conditions: conditions(['ArtifactReady', 'Staged'], ['Ready', 'Available'], ['Synced', 'ReconcileSuccess']),
      },
    };
  }
  return out;
}

/** A provider-kubernetes Object as observed: what was asked, what the remote object is, Ready. */
export function observedObject(manifest: JsonObject, remoteStatus: JsonObject, extra: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
    kind: 'Object',
    metadata: metadata(`obj-${typeof manifest['kind'] === 'string' ? manifest['kind'] : 'object'}`.toLowerCase(), { namespace: NAMESPACE }),
    spec: {
      forProvider: { manifest },
      providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-0000-pc' },
      managementPolicies: ['*'],
      ...extra,
    },
    status: {
      atProvider: {
        manifest: {
          ...manifest,
          metadata: { ...(manifest['metadata'] as JsonObject), uid: 'u', resourceVersion: '1' },
          status: remoteStatus,
        },
      },
      conditions: conditions(['Ready', 'Available'], ['Synced', 'ReconcileSuccess']),
    },
  };
}
