// Issue 29, point 5, through gRPC: every object a cache composes on a
// workload cluster is its own. Two caches of one name in two namespaces
// compose disjoint remote names for every kind and source, in the shared
// `default` workload namespace; what was staged before owners were written
// keeps its name; an object another cache owns is never written again, and
// the cluster says whose it is (docs/design/names.md).

import { describe, expect, it } from 'vitest';
import { OBSERVE_ONLY, cacheNames, ownerAnnotation, type JsonObject } from '#lib';
import { composite, compositeStatus, condition, desiredResources, manifestOf, serveForFile, type TestResponse } from '#testing';
import { CLUSTER_A, TOKEN_B64, observe, resolved, run, type Remote } from './support.js';

const served = serveForFile('compose-model-cache-hydration');

const CACHE = 'qwen';
const HF = { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 } };
const HF_UNSIZED = { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B' } };
const HF_AUTH = (namespace: string) => ({ ...HF, authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace } });
const OCI = { source: 'OCI', oci: { ref: 'registry.example.com/models/qwen:v1' } };

function xr(namespace: string, spec: JsonObject, cache = CACHE, status?: JsonObject) {
  return composite(
    'ModelCacheHydration',
    namespace,
    `hydration-${namespace}`,
    { clusterName: 'cluster-a', cacheName: cache, ...spec },
    status,
  );
}
function secret(namespace: string): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace }, data: { HF_TOKEN: TOKEN_B64 } };
}

/** "Kind namespace/name" of every remote object a response composes. */
function remoteIds(rsp: TestResponse): string[] {
  return Object.values(desiredResources(rsp)).map((object) => {
    const manifest = manifestOf(object) as { kind: string; metadata: { name: string; namespace?: string } };
    return `${manifest.kind} ${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}`;
  });
}

/** A Bound claim, a running Job, everything else just there: the second reconcile composes the rest. */
const clusterAnswer = (key: string): Remote | undefined =>
  key === 'pvc'
    ? { status: { phase: 'Bound' }, ready: true }
    : key === 'hydrate' || key === 'size'
      ? { status: { active: 1 } }
      : { ready: true };

/** Everything one cache composes on cluster-a over its first two reconciles. */
async function composedBy(namespace: string, spec: JsonObject): Promise<string[]> {
  const world = { xr: xr(namespace, spec), ...('authSecret' in spec ? { secret: secret(namespace) } : {}) };
  const first = await run(resolved(world), served.client);
  const observed: Record<string, JsonObject> = {};
  for (const [key, desired] of Object.entries(desiredResources(first))) observed[key] = observe(desired, clusterAnswer(key));
  const second = await run(resolved({ ...world, observed }), served.client);
  return [...new Set([...remoteIds(first), ...remoteIds(second)])];
}

describe('two caches of one name in two namespaces', () => {
  it.each([
    ['HuggingFace (PVC, Job and its access)', HF, ['PersistentVolumeClaim', 'Job', 'ServiceAccount', 'Role', 'RoleBinding']],
    [
      'HuggingFace with a token (and its Secret)',
      'auth',
      ['PersistentVolumeClaim', 'Job', 'Secret', 'ServiceAccount', 'Role', 'RoleBinding'],
    ],
    ['HuggingFace without sizeGiB (the sizing Job)', HF_UNSIZED, ['Job', 'ServiceAccount', 'Role', 'RoleBinding']],
    ['OCI (resolver Job, its access, its result ConfigMap)', OCI, ['Job', 'ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap']],
  ] as const)('%s: disjoint remote names for every kind, in default', async (_what, source, kinds) => {
    const spec = (namespace: string): JsonObject => (source === 'auth' ? HF_AUTH(namespace) : { ...source });
    const a = await composedBy('team-a', spec('team-a'));
    const b = await composedBy('team-b', spec('team-b'));
    expect(new Set([...a, ...b].map((id) => id.split(' ')[0]))).toEqual(new Set(kinds));
    for (const id of [...a, ...b]) expect(id).toContain(' default/');
    expect(a.filter((id) => b.includes(id))).toEqual([]);
  });

  it('a PersistentVolumeClaim source composes nothing it writes: the claim is the user’s, observed only', async () => {
    const rsp = await run(
      resolved({ xr: xr('team-a', { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'weights' } }) }),
      served.client,
    );
    expect(Object.values(desiredResources(rsp)).map((o) => (o['spec'] as JsonObject)['managementPolicies'])).toEqual([[...OBSERVE_ONLY]]);
  });

  it('every remote object names its owner: labels, and an annotation of its own per cache', async () => {
    const rsp = await run(resolved({ xr: xr('team-a', HF) }), served.client);
    const metadata = (manifestOf(desiredResources(rsp)['pvc']) as { metadata: JsonObject }).metadata;
    expect(metadata['labels']).toEqual({ 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'team-a' });
    expect(metadata['annotations']).toEqual({
      [ownerAnnotation({ kind: 'ModelCache', namespace: 'team-a', name: CACHE }).key]: 'ModelCache qwen in namespace team-a',
    });
  });
});

/** A Ready cache of team-a as the release before this one left it: its PVC Object observed Bound, the remote unmarked. */
function readyBefore(remoteFields: JsonObject = {}, objectAnnotations: JsonObject = {}) {
  const names = cacheNames('team-a', CACHE);
  const mount = {
    volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: names.pvc } }],
    volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models' }],
    env: [
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
    ],
  };
  const status = { phase: 'Ready', staged: 'Qwen/Qwen3-0.6B', mount };
  const pvc: JsonObject = {
    apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
    kind: 'Object',
    metadata: { name: 'hydration-team-a-pvc-x1', annotations: { 'crossplane.io/external-name': names.pvc, ...objectAnnotations } },
    spec: {
      forProvider: {
        manifest: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: {
            name: names.pvc,
            namespace: 'default',
            labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/namespace': 'team-a' },
          },
          spec: { accessModes: ['ReadWriteMany'], storageClassName: 'modelplane-rwx', resources: { requests: { storage: '20Gi' } } },
        },
      },
      providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
      readiness: { policy: 'DeriveFromCelQuery', celQuery: 'object.status.phase == "Bound"' },
    },
  };
  const remote = structuredClone((pvc['spec'] as { forProvider: { manifest: JsonObject } }).forProvider.manifest);
  Object.assign(remote['metadata'] as JsonObject, { uid: 'pvc-uid-1' }, remoteFields);
  remote['status'] = { phase: 'Bound' };
  pvc['status'] = { atProvider: { manifest: remote }, conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] };
  return { xr: xr('team-a', HF, CACHE, status), observed: { pvc }, names };
}

describe('upgrading: what exists keeps its name', () => {
  it('a Ready cache’s PVC, staged before owners were written, keeps its name and its mount, and is marked as the cache’s', async () => {
    const before = readyBefore();
    const rsp = await run(resolved({ xr: before.xr, observed: before.observed }), served.client);
    const pvc = manifestOf(desiredResources(rsp)['pvc']) as { metadata: JsonObject };
    expect(pvc.metadata['name']).toBe(before.names.pvc);
    expect(pvc.metadata['name']).toBe('modelcache-team-a-qwen-90498');
    expect(Object.keys(pvc.metadata['annotations'] as JsonObject)).toEqual([
      ownerAnnotation({ kind: 'ModelCache', namespace: 'team-a', name: CACHE }).key,
    ]);
    expect([compositeStatus(rsp)['phase'], condition(rsp, 'ArtifactReady')?.reason]).toEqual(['Ready', 'Staged']);
    expect((compositeStatus(rsp)['mount'] as { volumes: JsonObject[] }).volumes).toEqual([
      { name: 'model-cache', persistentVolumeClaim: { claimName: before.names.pvc } },
    ]);
  });
});

describe('an object another cache owns is left alone', () => {
  const other = ownerAnnotation({ kind: 'ModelCache', namespace: 'ml', name: 'team-qwen' });

  it.each<[string, JsonObject]>([
    ['another cache’s owner annotation', { annotations: { [other.key]: other.value } }],
    [
      'another namespace’s labels (from before the annotation)',
      { labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/namespace': 'team-b' } },
    ],
    ['another cache’s labels', { labels: { 'modelplane.ai/modelcache': 'other', 'modelplane.ai/namespace': 'team-a' } }],
  ])('%s: observe-only, Failed/OwnedElsewhere naming the owner, nothing new, no mount', async (_what, fields) => {
    const before = readyBefore(fields);
    const rsp = await run(resolved({ xr: before.xr, observed: before.observed }), served.client);
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['pvc']);
    expect((desired['pvc']!['spec'] as JsonObject)['managementPolicies']).toEqual([...OBSERVE_ONLY]);
    expect([compositeStatus(rsp)['phase'], condition(rsp, 'ArtifactReady')?.reason, compositeStatus(rsp)['mount']]).toEqual([
      'Failed',
      'OwnedElsewhere',
      undefined,
    ]);
    expect(condition(rsp, 'ArtifactReady')?.message).toMatch(
      new RegExp(
        `^PersistentVolumeClaim ${before.names.pvc} on cluster-a belongs to ModelCache (team-qwen in namespace ml|qwen in namespace team-b|other in namespace team-a):`,
      ),
    );
    expect(rsp.results?.some((r) => r.reason === 'OwnedElsewhere' && r.severity === 'SEVERITY_WARNING')).toBe(true);
  });

  it('…unless this very Object created it: then the other is the intruder, and this cache goes on', async () => {
    const before = readyBefore(
      { annotations: { [other.key]: other.value } },
      { 'crossplane.io/external-create-succeeded': '2026-11-30T11:11:28Z' },
    );
    const rsp = await run(resolved({ xr: before.xr, observed: before.observed }), served.client);
    expect([compositeStatus(rsp)['phase'], condition(rsp, 'ArtifactReady')?.reason]).toEqual(['Ready', 'Staged']);
    expect((desiredResources(rsp)['pvc']!['spec'] as JsonObject)['managementPolicies']).toBeUndefined();
  });

  it('two caches whose names join alike (ml/team-qwen, ml-team/qwen) share upstream’s PVC name: the second, seeing the first’s owner, writes nothing', async () => {
    expect(cacheNames('ml', 'team-qwen').pvc).toBe(cacheNames('ml-team', 'qwen').pvc);
    const first = await run(resolved({ xr: xr('ml-team', HF) }), served.client);
    const theirs = observe(desiredResources(first)['pvc']!, { status: { phase: 'Bound' }, ready: true });
    const intruder = xr('ml', HF, 'team-qwen');
    const rsp = await run(resolved({ xr: intruder, observed: { pvc: theirs } }), served.client);
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect((desiredResources(rsp)['pvc']!['spec'] as JsonObject)['managementPolicies']).toEqual([...OBSERVE_ONLY]);
    expect(condition(rsp, 'ArtifactReady')?.message).toContain('belongs to ModelCache qwen in namespace ml-team');
  });

  it('a hand-over (another ModelCacheHydration of the same cache) adopts it: the owner is the cache, not the XR', async () => {
    const before = readyBefore({ annotations: { [ownerAnnotation({ kind: 'ModelCache', namespace: 'team-a', name: CACHE }).key]: 'x' } });
    const rsp = await run(resolved({ xr: before.xr, observed: before.observed, cluster: CLUSTER_A }), served.client);
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
  });
});
