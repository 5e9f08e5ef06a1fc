// Upgrading in place (docs/design/fleet.md): the children of the layout before
// shards move to shards across consecutive reconciles of the cache, each
// observing what the one before asked for. The invariant throughout: a child
// is dropped (and so deleted) only once it says deleting it orphans what it
// staged, and its shard is seen listing the cluster with what it inherits.

import { describe, expect, it } from 'vitest';
import { ORPHAN_ON_DELETE_ANNOTATION, cacheNames, huggingFaceMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, desiredResources, inProcessClient, items, request, type TestResource, type TestResponse } from '#testing';
import { compose } from '../src/fn.js';
import {
  CACHE,
  NAMESPACE,
  cacheRequest,
  cacheXr,
  childSpec,
  cluster,
  expectWellFormed,
  lastStatus,
  observedChild,
  replica,
  type ChildReport,
} from './fixtures.js';

const client = inProcessClient('compose-model-cache', compose);
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const READY: ChildReport = { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' };

/** A child of the layout before shards, on the cache itself; `orphanOnDelete` as its status says. */
function flatChild(cluster: string, orphanOnDelete?: boolean, report: ChildReport = READY): TestResource {
  const child = observedChild(cluster, report);
  const status = child.resource['status'] as JsonObject;
  status['staged'] = 'Qwen/Qwen3-0.6B';
  if (orphanOnDelete !== undefined) status['orphanOnDelete'] = orphanOnDelete;
  return child;
}

/** The cache's shard as observed: its spec as the cache asked, its status as its own reconcile left it. */
async function observedShardOf(
  rsp: TestResponse,
  required: Record<string, JsonObject[]> = {},
  resources: Record<string, TestResource> = {},
): Promise<TestResource> {
  const shard = desiredResources(rsp)['shard-0']!;
  const composite = { resource: { ...shard, metadata: { ...(shard['metadata'] as JsonObject), uid: 'uid-shard-0' } } };
  const requiredResources = Object.fromEntries(Object.entries(required).map(([k, v]) => [k, items(...v)]));
  const own = await client.run(request({ observed: { composite, resources }, requiredResources }));
  return { resource: { ...composite.resource, status: compositeStatus(own) } };
}

/** The cache was Ready before: moving its children tells nobody anything new. */
const XR = cacheXr({}, lastStatus([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }], true));

async function run(observed: Record<string, TestResource>, clusters = [cluster('a')], replicas: JsonObject[] = []): Promise<TestResponse> {
  const req = cacheRequest({ xr: XR, clusters, replicas, observed });
  const rsp = await client.run(req);
  expectWellFormed(rsp);
  // The invariant: a child of the layout before shards that is turning its Delete policy on or off (false), or
  // whose cluster stays, is dropped only once it orphans on delete and its shard lists it with what it inherits.
  const staying = new Set(clusters.map((c) => (c['metadata'] as JsonObject)['name']));
  for (const [key, resource] of Object.entries(observed)) {
    if (!key.startsWith('hydration-') || key in desiredResources(rsp)) continue;
    const orphanOnDelete = (resource.resource['status'] as JsonObject)['orphanOnDelete'];
    if (orphanOnDelete === undefined && !staying.has(key.slice('hydration-'.length))) continue; // a plain leave
    expect(orphanOnDelete, `${key} dropped before it orphans on delete`).toBe(true);
    const listed = (((observed['shard-0']?.resource['spec'] as JsonObject | undefined)?.['clusters'] ?? []) as JsonObject[]).find(
      (m) => `hydration-${m['name'] as string}` === key,
    );
    expect(listed?.['inheritedStatus'], `${key} dropped before its shard lists it`).toBeDefined();
  }
  return rsp;
}

const annotations = (rsp: TestResponse, key: string) =>
  (desiredResources(rsp)[key]?.['metadata'] as JsonObject | undefined)?.['annotations'];
const members = (rsp: TestResponse) =>
  ((desiredResources(rsp)['shard-0']?.['spec'] as JsonObject | undefined)?.['clusters'] ?? []) as JsonObject[];

describe('a Ready child of the layout before shards moves to a shard in three steps', () => {
  it('orphans, is listed with its status to inherit, is released, and its cluster reads Ready throughout', async () => {
    // 1. Orphan on delete: the child is re-desired, stamped from the spec, with the annotation; no shard lists it yet.
    const r1 = await run({ 'hydration-a': flatChild('a') });
    expect(Object.keys(desiredResources(r1))).toEqual(['hydration-a']);
    expect(desiredResources(r1)['hydration-a']!['spec']).toEqual(childSpec('a'));
    expect(annotations(r1, 'hydration-a')).toEqual({ [ORPHAN_ON_DELETE_ANNOTATION]: 'true' });
    expect(compositeStatus(r1)['clusters']).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }]);
    expect(r1.results).toEqual([]); // nothing new to tell

    // 2. The child says deleting it now orphans what it staged: its shard lists it, with its status to inherit.
    const r2 = await run({ 'hydration-a': flatChild('a', true) });
    expect(Object.keys(desiredResources(r2)).sort()).toEqual(['hydration-a', 'shard-0']);
    expect(members(r2)).toEqual([{ name: 'a', inheritedStatus: { phase: 'Ready', mount: HF_MOUNT, staged: 'Qwen/Qwen3-0.6B' } }]);
    expect(compositeStatus(r2)['clusters']).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }]);

    // The shard waits: the cache still controls the old child.
    const oldChild = {
      ...flatChild('a', true).resource,
      metadata: { name: 'x', ownerReferences: [{ controller: true, uid: 'uid-of-the-cache' }] },
    };
    const shard3 = await observedShardOf(r2, { 'hand-over-a': [oldChild] });
    expect(((shard3.resource['status'] as JsonObject)['clusters'] as JsonObject[])[0]).toMatchObject({ phase: 'Ready' });

    // 3. The shard is seen listing it: the cache lets the child go.
    const r3 = await run({ 'hydration-a': flatChild('a', true), 'shard-0': shard3 });
    expect(Object.keys(desiredResources(r3))).toEqual(['shard-0']);
    expect(members(r3)[0]?.['inheritedStatus']).toBeDefined();
    expect(compositeStatus(r3)['clusters']).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }]);

    // The old child is gone; until the shard's new child reports, the cache keeps telling it what to inherit.
    const shard4 = await observedShardOf(r3, { 'hand-over-a': [] });
    const r4 = await run({ 'shard-0': shard4 });
    expect(members(r4)[0]?.['inheritedStatus']).toEqual({ phase: 'Ready', mount: HF_MOUNT, staged: 'Qwen/Qwen3-0.6B' });
    expect(compositeStatus(r4)['clusters']).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }]);

    // The new child reported: nothing inherited any more; a plain member.
    const newChild = observedChild('a', READY, childSpec('a', { inheritedStatus: { phase: 'Ready' } }));
    const shard5 = await observedShardOf(r4, {}, { 'hydration-a': newChild });
    const r5 = await run({ 'shard-0': shard5 });
    expect(members(r5)).toEqual([{ name: 'a' }]);
    expect(compositeStatus(r5)['clusters']).toEqual([{ name: 'a', phase: 'Ready', mount: HF_MOUNT }]);
    expect(r5.desired?.composite?.ready).toBe('READY_TRUE');
  });

  it('keeps a child whose Objects have not all given up Delete (false), and lists nothing for it', async () => {
    const rsp = await run({ 'hydration-a': flatChild('a', false) });
    expect(Object.keys(desiredResources(rsp))).toEqual(['hydration-a']);
    expect(members(rsp)).toEqual([]);
  });

  it('moves 50 clusters at a time: the rest stay as they are, not orphaned, until their turn', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const observed = Object.fromEntries(names.map((n) => [`hydration-${n}`, flatChild(n)]));
    const rsp = await run(
      observed,
      names.map((n) => cluster(n)),
    );
    const annotated = names.filter((n) => annotations(rsp, `hydration-${n}`) !== undefined);
    expect(annotated).toEqual(names.slice(0, 50));
    expect(names.every((n) => `hydration-${n}` in desiredResources(rsp))).toBe(true);
  });

  it('keeps a retained child where it is, as observed, not orphaned', async () => {
    const rsp = await run({ 'hydration-b': flatChild('b') }, [cluster('a')], [replica('r1', 'b')]);
    expect(annotations(rsp, 'hydration-b')).toBeUndefined();
    expect((compositeStatus(rsp)['clusters'] as JsonObject[]).find((e) => e['name'] === 'b')?.['message']).toBe(
      'retained: no longer selected; in use by ModelReplica r1',
    );
  });

  it('gives a child whose cluster left mid hand-over its Delete back before it goes with what it staged', async () => {
    const leaving = await run({ 'hydration-a': flatChild('a', true) }, []);
    expect(Object.keys(desiredResources(leaving))).toEqual(['hydration-a']);
    expect(annotations(leaving, 'hydration-a')).toBeUndefined();
    expect((compositeStatus(leaving)['clusters'] as JsonObject[])[0]?.['message']).toContain('leaving: no longer selected');
    // Still turning (false) or never orphaned (absent): the first keeps it, the second lets it go.
    expect(Object.keys(desiredResources(await run({ 'hydration-a': flatChild('a', false) }, [])))).toEqual(['hydration-a']);
    expect(Object.keys(desiredResources(await run({ 'hydration-a': flatChild('a') }, [])))).toEqual([]);
  });
});
