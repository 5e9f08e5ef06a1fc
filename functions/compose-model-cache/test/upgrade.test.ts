// The upgrade from the single-function ModelCache, across consecutive
// requests, each observing what the previous response asked for. The
// invariant throughout: a legacy Object that could still delete its remote
// object (the PVC, with the staged weights) is never dropped.

import { describe, expect, it } from 'vitest';
import { JOB_POLICIES, READY_QUERY, cacheNames, type JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  inProcessClient,
  request,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';
import { compose } from '../src/fn.js';
import { CACHE, NAMESPACE, cacheRequest, cacheXr, childSpec, cluster, expectWellFormed, lastStatus, replica } from './fixtures.js';
import { reconcileFleet } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);

/** The shard a cache's response desires, reconciled with no children yet. */
async function shardOf(rsp: TestResponse): Promise<TestResponse> {
  const shard = desiredResources(rsp)['shard-0']!;
  return client.run(
    request({ observed: { composite: { resource: { ...shard, metadata: { ...(shard['metadata'] as JsonObject), uid: 'u' } } } } }),
  );
}
const names = cacheNames(NAMESPACE, CACHE);
const TOKEN = 'aGYtdG9rZW4tdmFsdWU=';
const XR = cacheXr(
  { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, authSecret: { name: 'hf-token' } } },
  lastStatus([{ name: 'cluster-a', phase: 'Hydrating' }], false),
);
const ALL_BUT_DELETE = ['Observe', 'Create', 'Update', 'LateInitialize'];
const labels = { 'modelplane.ai/modelcache': CACHE };

/** The single-function layout's Objects for one cluster, as upstream v0.3.1 composed them. */
function legacyManifests(): Record<'pvc' | 'hydrate' | 'auth', JsonObject> {
  return {
    pvc: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: names.pvc, namespace: 'default', labels },
      spec: { accessModes: ['ReadWriteMany'], storageClassName: 'modelplane-rwx', resources: { requests: { storage: '20Gi' } } },
    },
    hydrate: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: names.job, namespace: 'default', labels },
      spec: {
        backoffLimit: 3,
        ttlSecondsAfterFinished: 180,
        template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'hydrate' }] } },
      },
    },
    auth: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: names.authSecret, namespace: 'default', labels },
      data: { HF_TOKEN: TOKEN },
    },
  };
}

const REMOTE_STATUS: Record<'pvc' | 'hydrate' | 'auth', JsonObject | undefined> = {
  pvc: { phase: 'Bound' },
  hydrate: { active: 1 },
  auth: undefined,
};

/** An Object as Crossplane observes it: the spec as applied, the remote object under atProvider, Crossplane's Ready. */
function observedObject(spec: JsonObject, kind: 'pvc' | 'hydrate' | 'auth', ready: boolean): TestResource {
  const remote: JsonObject = { ...legacyManifests()[kind], ...(REMOTE_STATUS[kind] ? { status: REMOTE_STATUS[kind] } : {}) };
  return {
    resource: {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { name: `qwen-${kind}-x7k2p`, annotations: { 'crossplane.io/composition-resource-name': `${kind}-cluster-a` } },
      spec: { ...spec, deletionPolicy: 'Delete' },
      status: {
        atProvider: { manifest: remote },
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Unavailable' }],
      },
    },
  };
}

/** What the single-function cache left behind mid-hydration: PVC (default policies), Job (no Delete), Secret (default). */
function monolithObjects(cluster: string): Record<string, TestResource> {
  const manifests = legacyManifests();
  const pc = { kind: 'ClusterProviderConfig', name: `${cluster}-pc` };
  return {
    [`pvc-${cluster}`]: observedObject(
      {
        forProvider: { manifest: manifests.pvc },
        providerConfigRef: pc,
        readiness: { policy: 'DeriveFromCelQuery', celQuery: READY_QUERY.pvcBound },
      },
      'pvc',
      true,
    ),
    [`hydrate-${cluster}`]: observedObject(
      {
        forProvider: { manifest: manifests.hydrate },
        providerConfigRef: pc,
        readiness: { policy: 'DeriveFromCelQuery', celQuery: READY_QUERY.jobComplete },
        managementPolicies: [...JOB_POLICIES],
      },
      'hydrate',
      false,
    ),
    [`auth-${cluster}`]: observedObject({ forProvider: { manifest: manifests.auth }, providerConfigRef: pc }, 'auth', true),
  };
}

/** The next request observes what this response desired, applied (policies and manifests as asked), remote state unchanged. */
function applied(rsp: TestResponse, before: Record<string, TestResource>): Record<string, TestResource> {
  const out: Record<string, TestResource> = {};
  for (const [key, desired] of Object.entries(desiredResources(rsp))) {
    const previous = before[key]?.resource;
    if (!previous || desired['kind'] !== 'Object') continue;
    out[key] = { resource: { ...previous, spec: { ...(desired['spec'] as JsonObject), deletionPolicy: 'Delete' } } };
  }
  return out;
}

function canDelete(resource: JsonObject): boolean {
  const policies = ((resource['spec'] as JsonObject)['managementPolicies'] as string[] | undefined) ?? [];
  return policies.length === 0 || policies.includes('*') || policies.includes('Delete');
}

/** The invariant, on every response: no observed legacy Object that could delete is dropped, and none desired can delete. */
function expectNothingDeletable(req: TestRequest, rsp: TestResponse): void {
  expectWellFormed(rsp);
  const desired = desiredResources(rsp);
  for (const [key, observed] of Object.entries(req.observed?.resources ?? {})) {
    if (!/^(pvc|hydrate|auth)-/.test(key)) continue;
    if (canDelete(observed.resource)) expect(Object.keys(desired), `${key} could delete and was dropped`).toContain(key);
  }
  for (const [key, resource] of Object.entries(desired)) {
    if (/^(pvc|hydrate|auth)-/.test(key)) expect(canDelete(resource), `${key} desired with Delete`).toBe(false);
  }
  expect(JSON.stringify(rsp)).not.toContain(TOKEN);
}

describe('the two-step upgrade from the single-function ModelCache', () => {
  it('re-desires the old Objects without Delete, then hands the cluster to its child, then keeps only the child', async () => {
    // Request 1: the old Objects, as the single-function cache left them.
    const observed1 = monolithObjects('cluster-a');
    const req1 = cacheRequest({ xr: XR, observed: observed1 });
    const rsp1 = await client.run(req1);
    expectNothingDeletable(req1, rsp1);
    expect(Object.keys(desiredResources(rsp1)).sort()).toEqual(['auth-cluster-a', 'hydrate-cluster-a', 'pvc-cluster-a']);
    const pvc1 = desiredResources(rsp1)['pvc-cluster-a']!;
    const observedPvcSpec = observed1['pvc-cluster-a']!.resource['spec'] as JsonObject;
    // Unchanged but for the policies: same manifest (same claim, adopted by name later), provider config, readiness.
    expect(pvc1['spec']).toEqual({
      forProvider: observedPvcSpec['forProvider'],
      providerConfigRef: observedPvcSpec['providerConfigRef'],
      readiness: observedPvcSpec['readiness'],
      managementPolicies: ALL_BUT_DELETE,
    });
    expect(desiredResources(rsp1)['hydrate-cluster-a']!['spec']).toMatchObject({ managementPolicies: [...JOB_POLICIES] });
    // The token Secret: observe-only, and its token left out (this function never copies one).
    expect(desiredResources(rsp1)['auth-cluster-a']!['spec']).toEqual({
      forProvider: { manifest: { apiVersion: 'v1', kind: 'Secret', metadata: { name: names.authSecret, namespace: 'default', labels } } },
      providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
      managementPolicies: ['Observe'],
    });
    expect(rsp1.desired?.resources['pvc-cluster-a']?.ready).toBe('READY_TRUE');
    expect(rsp1.desired?.resources['hydrate-cluster-a']?.ready).toBe('READY_UNSPECIFIED');
    expect(compositeStatus(rsp1)['clusters']).toEqual([
      {
        name: 'cluster-a',
        phase: 'Pending',
        message:
          'upgrading from the single-function ModelCache: its PVC, Job and token Secret are kept without the Delete policy until a ModelCacheHydration takes the cluster over',
      },
    ]);
    expect(rsp1.results).toEqual([]); // not a first compose: the cache staged before
    expect(rsp1.desired?.composite?.ready).toBe('READY_FALSE');

    // Request 2: Crossplane applied the policies. Every old Object is now unable to delete: hand over.
    const observed2 = applied(rsp1, observed1);
    const req2 = cacheRequest({ xr: XR, observed: observed2 });
    const rsp2 = await client.run(req2);
    expectNothingDeletable(req2, rsp2);
    // The cluster goes to a shard, whose child stamps the spec the old layout's cluster had.
    expect(Object.keys(desiredResources(rsp2))).toEqual(['shard-0']);
    expect((desiredResources(rsp2)['shard-0']!['spec'] as JsonObject)['clusters']).toEqual([{ name: 'cluster-a' }]);
    const shard2 = await shardOf(rsp2);
    expect(desiredResources(shard2)['hydration-cluster-a']!['spec']).toEqual(
      childSpec('cluster-a', { authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE } }),
    );
    // The child adopts the very claim the old layout made: its PVC name is derived the same way.
    expect(((observed2['pvc-cluster-a']!.resource['spec'] as JsonObject)['forProvider'] as JsonObject)['manifest']).toMatchObject({
      metadata: { name: 'modelcache-ml-team-qwen-17db2' },
    });
    expect(rsp2.results).toEqual([]);

    // Request 3: the child runs in its shard (it adopted the Bound PVC); the old Objects may still be seen on their way out.
    const fleet3 = await reconcileFleet(client, {
      xr: XR,
      clusters: [cluster('cluster-a')],
      observed: observed2,
      children: { 'cluster-a': { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' } },
    });
    const rsp3 = fleet3.cache;
    expectNothingDeletable(cacheRequest({ xr: XR, observed: observed2 }), rsp3);
    expect(Object.keys(desiredResources(rsp3))).toEqual(['shard-0']);
    expect(Object.keys(desiredResources(fleet3.merged))).toEqual(['hydration-cluster-a']);
    expect(compositeStatus(rsp3)['clusters']).toEqual([{ name: 'cluster-a', phase: 'Hydrating', message: 'downloading' }]);
    expect(condition(rsp3, 'ArtifactReady')).toMatchObject({ reason: 'Hydrating' });
    expect(rsp3.results).toEqual([]);
  });

  it('waits while any old Object could still delete (Crossplane applied only some policies)', async () => {
    const observed1 = monolithObjects('cluster-a');
    const rsp1 = await client.run(cacheRequest({ xr: XR, observed: observed1 }));
    const observed2 = applied(rsp1, observed1);
    observed2['pvc-cluster-a'] = observed1['pvc-cluster-a']!; // the PVC Object's update has not landed yet
    const req2 = cacheRequest({ xr: XR, observed: observed2 });
    const rsp2 = await client.run(req2);
    expectNothingDeletable(req2, rsp2);
    expect(Object.keys(desiredResources(rsp2)).sort()).toEqual(['auth-cluster-a', 'hydrate-cluster-a', 'pvc-cluster-a']);
  });

  it('hands over a Ready cluster that has only its PVC left, without reporting it Ready before its child is', async () => {
    // The old layout staged flat; the child re-stages in the hub layout (its own marker), so Ready must come from the child.
    const xr = cacheXr({}, lastStatus([{ name: 'cluster-a', phase: 'Ready' }], true));
    const observed1 = { 'pvc-cluster-a': monolithObjects('cluster-a')['pvc-cluster-a']! };
    const req1 = cacheRequest({ xr, observed: observed1 });
    const rsp1 = await client.run(req1);
    expectNothingDeletable(req1, rsp1);
    expect(Object.keys(desiredResources(rsp1))).toEqual(['pvc-cluster-a']);
    expect((compositeStatus(rsp1)['clusters'] as JsonObject[])[0]).toMatchObject({ name: 'cluster-a', phase: 'Pending' });
    expect(rsp1.desired?.composite?.ready).toBe('READY_FALSE');
    expect(rsp1.results).toEqual([]);

    const rsp2 = await client.run(cacheRequest({ xr, observed: applied(rsp1, observed1) }));
    expect(Object.keys(desiredResources(rsp2))).toEqual(['shard-0']);
  });

  it('stamps new clusters at once while an old one is handed over', async () => {
    const req = cacheRequest({ xr: XR, clusters: [cluster('cluster-a'), cluster('cluster-b')], observed: monolithObjects('cluster-a') });
    const rsp = await client.run(req);
    expectNothingDeletable(req, rsp);
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(['auth-cluster-a', 'hydrate-cluster-a', 'pvc-cluster-a', 'shard-0']);
    expect((desiredResources(rsp)['shard-0']!['spec'] as JsonObject)['clusters']).toEqual([{ name: 'cluster-b' }]);
  });

  it('keeps the old Objects without Delete for a selected cluster that turned unreadable, and hands over when it is back', async () => {
    const observed1 = monolithObjects('cluster-a');
    const req = cacheRequest({ xr: XR, clusters: [cluster('cluster-a', { provisioned: false })], observed: observed1 });
    const rsp = await client.run(req);
    expectNothingDeletable(req, rsp);
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(['auth-cluster-a', 'hydrate-cluster-a', 'pvc-cluster-a']);
    expect((compositeStatus(rsp)['clusters'] as JsonObject[])[0]?.['message']).toContain('kept as it was');

    const back = await client.run(cacheRequest({ xr: XR, clusters: [cluster('cluster-a')], observed: applied(rsp, observed1) }));
    expect(Object.keys(desiredResources(back))).toEqual(['shard-0']);
  });

  it('keeps them, without Delete, for a cluster that left the selector while a replica of this cache runs there', async () => {
    const req = cacheRequest({ xr: XR, clusters: [], replicas: [replica('r1', 'cluster-a')], observed: monolithObjects('cluster-a') });
    const rsp = await client.run(req);
    expectNothingDeletable(req, rsp);
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(['auth-cluster-a', 'hydrate-cluster-a', 'pvc-cluster-a']);
    expect((compositeStatus(rsp)['clusters'] as JsonObject[])[0]?.['message']).toBe(
      'retained: no longer selected; in use by ModelReplica r1',
    );
  });

  it('drops them for a cluster that left the selector with nothing using it, as the single-function cache did', async () => {
    const rsp = await client.run(cacheRequest({ xr: XR, clusters: [], observed: monolithObjects('cluster-a') }));
    expectWellFormed(rsp);
    expect(Object.keys(desiredResources(rsp))).toEqual([]);
  });
});
