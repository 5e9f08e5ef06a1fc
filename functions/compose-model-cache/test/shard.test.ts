// A ModelCacheShard on its own (docs/design/fleet.md): it stamps exactly the
// clusters its cache lists, keeps what it is told to keep, drops only what it
// is told to drop, takes a cluster over from the layout before shards only
// once the old child is gone, and rolls its children up for the cache.

import { describe, expect, it } from 'vitest';
import { KIND, MODELPLANE_API_VERSION, cacheNames, hydrationName, huggingFaceMount, toJson, type JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  inProcessClient,
  items,
  request,
  type TestResource,
  type TestResponse,
} from '#testing';
import { compose } from '../src/fn.js';
import { CACHE, NAMESPACE, childSpec, expectWellFormed, observedChild, type ChildReport } from './fixtures.js';
import { shardXr } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const READY: ChildReport = { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' };

/** A child as its shard observes it: under the shard's key, controlled by it. */
function child(cluster: string, report: ChildReport, spec?: JsonObject): TestResource {
  const observed = observedChild(cluster, report, ...(spec ? [spec] : []));
  const metadata = observed.resource['metadata'] as JsonObject;
  return { resource: { ...observed.resource, metadata: { ...metadata, ownerReferences: [{ controller: true, uid: 'uid-shard-0' }] } } };
}

async function run(
  xr: TestResource,
  resources: Record<string, TestResource> = {},
  required?: Record<string, JsonObject[]>,
): Promise<TestResponse> {
  const requiredResources = required ? Object.fromEntries(Object.entries(required).map(([k, v]) => [k, items(...v)])) : undefined;
  const rsp = await client.run(request({ observed: { composite: xr, resources }, ...(requiredResources ? { requiredResources } : {}) }));
  expectWellFormed(rsp);
  return rsp;
}

const keys = (rsp: TestResponse) => Object.keys(desiredResources(rsp)).sort();
const entries = (rsp: TestResponse) => compositeStatus(rsp)['clusters'] as JsonObject[];

describe('stamping', () => {
  it('stamps one child per listed cluster, named and labelled as a cache names them, and asks for nothing', async () => {
    const rsp = await run(shardXr(['b', 'a']));
    expect(keys(rsp)).toEqual(['hydration-a', 'hydration-b']);
    expect(desiredResources(rsp)['hydration-a']).toEqual({
      apiVersion: MODELPLANE_API_VERSION,
      kind: KIND.ModelCacheHydration,
      metadata: {
        name: hydrationName(NAMESPACE, CACHE, 'a'),
        namespace: NAMESPACE,
        labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/cluster': 'a' },
      },
      spec: childSpec('a'),
    });
    // No requirements message: Crossplane would call again for an empty one.
    expect(rsp.requirements).toBeUndefined();
    expect(rsp.results).toEqual([]);
  });

  it('copies the token reference and the cache’s retry and re-verify requests to every child', async () => {
    const auth = { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE };
    const xr = shardXr(['a'], { authSecret: auth }, { 'modelplane.ai/cache-retry': 'r1', 'modelplane.ai/cache-reverify': 'v1' });
    const stamped = desiredResources(await run(xr))['hydration-a']!;
    expect(stamped['spec']).toEqual(childSpec('a', { authSecret: auth }));
    expect((stamped['metadata'] as JsonObject)['annotations']).toEqual({
      'modelplane.ai/cache-retry': 'r1',
      'modelplane.ai/cache-reverify': 'v1',
    });
  });

  it('marks a child ready only on its Ready=True condition, and the shard ready only when every cluster is Ready', async () => {
    const rsp = await run(shardXr(['a', 'b']), {
      'hydration-a': child('a', READY),
      'hydration-b': child('b', { ...READY, ready: false }),
    });
    expect(rsp.desired?.resources['hydration-a']?.ready).toBe('READY_TRUE');
    expect(rsp.desired?.resources['hydration-b']?.ready).toBe('READY_UNSPECIFIED');
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    const partly = await run(shardXr(['a', 'b']), { 'hydration-a': child('a', READY) });
    expect(partly.desired?.composite?.ready).toBe('READY_FALSE');
    expect(condition(partly, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'Partial',
      message: '1/2 clusters ready',
    });
  });
});

describe('what the shard is told to keep and to drop', () => {
  it('keeps a kept cluster’s child exactly as observed, the note first in its entry', async () => {
    // Staged at revision v1 before the cache moved on: kept at v1, not restamped from the shard's spec.
    const v1 = childSpec('b', { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, revision: 'v1' } });
    const note = 'retained: no longer selected; in use by ModelReplica r1';
    const rsp = await run(shardXr(['a', { name: 'b', keep: true, note }]), { 'hydration-b': child('b', READY, v1) });
    expect(desiredResources(rsp)['hydration-b']!['spec']).toEqual(v1);
    expect(entries(rsp)[1]).toEqual({ name: 'b', phase: 'Ready', message: note, mount: HF_MOUNT });
  });

  it('stamps nothing for a kept cluster without a child', async () => {
    const rsp = await run(shardXr([{ name: 'b', keep: true, note: 'kept as it was: x' }]));
    expect(keys(rsp)).toEqual([]);
    expect(entries(rsp)[0]).toMatchObject({ name: 'b', phase: 'Pending' });
  });

  it('keeps a child it holds but no longer lists, until its cache names it in drop', async () => {
    const kept = await run(shardXr(['a']), { 'hydration-b': child('b', READY) });
    expect(keys(kept)).toEqual(['hydration-a', 'hydration-b']);
    expect(entries(kept)[1]?.['message']).toBe(
      'kept as it was: not assigned to this shard; waiting for ModelCache qwen to assign or drop it',
    );
    const dropped = await run(shardXr(['a'], { drop: ['b'] }), { 'hydration-b': child('b', READY) });
    expect(keys(dropped)).toEqual(['hydration-a']);
    expect(entries(dropped).map((e) => e['name'])).toEqual(['a']);
  });
});

describe('taking a cluster over from the layout before shards', () => {
  const inherited: JsonObject = {
    phase: 'Ready',
    mount: HF_MOUNT,
    staged: 'Qwen/Qwen3-0.6B',
    sizeGiB: 20,
    attempts: 1,
    attemptsFor: 'Qwen/Qwen3-0.6B',
  };
  const member = { name: 'a', inheritedStatus: inherited };
  const oldChild = (controller: string): JsonObject => ({
    ...observedChild('a', READY).resource,
    metadata: {
      name: hydrationName(NAMESPACE, CACHE, 'a'),
      namespace: NAMESPACE,
      ownerReferences: [{ controller: true, uid: controller }],
    },
  });

  it('asks for the child it is to take over by name, and changes nothing until it is fetched', async () => {
    const rsp = await run(shardXr([member, 'b']));
    expect(rsp.requirements?.resources).toEqual({
      'hand-over-a': {
        apiVersion: MODELPLANE_API_VERSION,
        kind: 'ModelCacheHydration',
        matchName: hydrationName(NAMESPACE, CACHE, 'a'),
        namespace: NAMESPACE,
      },
    });
    expect(rsp.desired?.resources).toEqual({});
    expect(rsp.desired?.composite).toBeUndefined();
  });

  it('stamps nothing for it while its cache still controls the old child, and reports what it inherits', async () => {
    const rsp = await run(shardXr([member]), {}, { 'hand-over-a': [oldChild('uid-of-the-cache')] });
    expect(keys(rsp)).toEqual([]);
    expect(entries(rsp)).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT, attempts: 1, sizeGiB: 20 }]);
    expect(compositeStatus(rsp)['composed']).toEqual([]);
  });

  it('stamps it with the inherited status once the old child is gone', async () => {
    const rsp = await run(shardXr([member]), {}, { 'hand-over-a': [] });
    expect(desiredResources(rsp)['hydration-a']!['spec']).toEqual(childSpec('a', { inheritedStatus: inherited }));
    expect(entries(rsp)[0]).toMatchObject({ phase: 'Ready', mount: HF_MOUNT });
  });

  it('stamps it when the child of that name is already its own, or no one’s', async () => {
    for (const controller of ['uid-shard-0']) {
      const rsp = await run(shardXr([member]), {}, { 'hand-over-a': [oldChild(controller)] });
      expect(keys(rsp)).toEqual(['hydration-a']);
    }
    const orphan = { ...oldChild('x'), metadata: { name: hydrationName(NAMESPACE, CACHE, 'a'), namespace: NAMESPACE } };
    expect(keys(await run(shardXr([member]), {}, { 'hand-over-a': [orphan] }))).toEqual(['hydration-a']);
  });

  it('reports the new child’s own status, not the inherited one, once it has one, and lists it as composed', async () => {
    const rsp = await run(shardXr([member]), {
      'hydration-a': child('a', { phase: 'Hydrating', message: 'verifying', reason: 'Hydrating' }),
    });
    expect(rsp.requirements).toBeUndefined();
    expect(entries(rsp)).toEqual([{ name: 'a', phase: 'Hydrating', message: 'verifying' }]);
    expect(compositeStatus(rsp)['composed']).toEqual(['a']);
  });
});

describe('the roll-up', () => {
  it('counts each phase, lists the children that reported and those without their token', async () => {
    const rsp = await run(shardXr(['a', 'b', 'c', 'd']), {
      'hydration-a': child('a', READY),
      'hydration-b': child('b', { phase: 'Failed', message: 'boom', reason: 'HydrationFailed' }),
      'hydration-c': child('c', { phase: 'Pending', message: 'no token', reason: 'AuthSecretMissing', reasonMessage: 'no token' }),
    });
    expect(compositeStatus(rsp)['summary']).toEqual({ ready: '1/4', clusters: 4, pending: 2, hydrating: 0, failed: 1 });
    expect(compositeStatus(rsp)['composed']).toEqual(['a', 'b', 'c']);
    expect(compositeStatus(rsp)['authMissing']).toEqual(['c']);
    expect(entries(rsp)[3]).toEqual({
      name: 'd',
      phase: 'Pending',
      message: `waiting for ModelCacheHydration ${hydrationName(NAMESPACE, CACHE, 'd')} to report its status`,
    });
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({ reason: 'HydrationFailed', message: '1/4 clusters ready, 1 failed' });
  });

  it('cuts a child’s message to 512 characters: a parent never grows past its bound', async () => {
    const rsp = await run(shardXr(['a']), {
      'hydration-a': child('a', { phase: 'Failed', message: 'x'.repeat(5000), reason: 'HydrationFailed' }),
    });
    const message = entries(rsp)[0]!['message'] as string;
    expect(message).toHaveLength(512);
    expect(message.endsWith('…')).toBe(true);
  });

  it('stays under 100 kB of status with 100 Ready children', async () => {
    const members = Array.from({ length: 100 }, (_, i) => `cluster-${String(i).padStart(3, '0')}`);
    const resources = Object.fromEntries(members.map((m) => [`hydration-${m}`, child(m, READY)]));
    const rsp = await run(shardXr(members), resources);
    expect(Object.keys(desiredResources(rsp))).toHaveLength(100);
    expect(JSON.stringify(compositeStatus(rsp)).length).toBeLessThan(100_000);
  });
});

describe('a malformed shard is refused naming the field', () => {
  it.each<[string, TestResource, string]>([
    ['a cluster listed twice', shardXr(['a', 'a']), 'spec.clusters[1].name lists cluster a twice'],
    ['a cluster name that is not a DNS label', shardXr(['Bad_Name']), 'spec.clusters[0].name must be'],
    ['no clusters', shardXr([], { clusters: undefined }), 'spec.clusters is required'],
    [
      'an inherited status that is not an object',
      shardXr([{ name: 'a', inheritedStatus: 'Ready' }]),
      'spec.clusters[0].inheritedStatus must be an object',
    ],
    [
      'a token reference into another namespace',
      shardXr(['a'], { authSecret: { name: 'tok', namespace: 'other-team' } }),
      'spec.authSecret.namespace must be this ModelCacheShard',
    ],
    ['more than 100 clusters', shardXr(Array.from({ length: 101 }, (_, i) => `c${i}`)), 'spec.clusters must have at most 100'],
  ])('%s', async (_name, xr, message) => {
    const rsp = await client.run(request({ observed: { composite: xr } }));
    const fatal = rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.message).toContain(message);
  });

  it('refuses a kind it does not compose', async () => {
    const xr = shardXr(['a']);
    xr.resource['kind'] = 'ModelReplica';
    const rsp = await client.run(request({ observed: { composite: xr } }));
    expect(rsp.results.find((r) => r.severity === 'SEVERITY_FATAL')?.message).toBe(
      'observed composite resource kind must be ModelCache or ModelCacheShard: this function composes nothing else (got "ModelReplica")',
    );
  });
});
