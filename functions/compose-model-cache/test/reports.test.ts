// The roll-ups read what children wrote, and children write what clusters
// reported (issue 29, point 2): a ModelCacheShard checks each child's status,
// a ModelCache each shard's entry and each child it still holds, before any of
// it reaches their own status. A field that fails is not rolled up (the entry
// goes without it, its sums without it) and is named in ReportsAccepted; the
// children the shard composes stay exactly as stamped. Through gRPC.

import { describe, expect, it } from 'vitest';
import { cacheNames, hydrationName, huggingFaceMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, request, serveForFile, type TestResource, type TestResponse } from '#testing';
import { CACHE, NAMESPACE, cacheXr, cluster, observedChild, resolved } from './fixtures.js';
import { shardXr } from './fleet.js';

const served = serveForFile('compose-model-cache');
const GIB = 1024 ** 3;
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const GOOD_PROGRESS = { percent: 50, bytesDone: 5 * GIB, bytesTotal: 10 * GIB, filesDone: 20, filesTotal: 40, summary: '50%' };

/** A child with `status` fields beside its phase, as its shard observes it. */
function child(name: string, status: JsonObject): TestResource {
  const observed = observedChild(name, { phase: 'Hydrating', reason: 'Hydrating' });
  const metadata = observed.resource['metadata'] as JsonObject;
  return {
    resource: {
      ...observed.resource,
      metadata: { ...metadata, ownerReferences: [{ controller: true, uid: 'uid-shard-0' }] },
      status: { ...(observed.resource['status'] as JsonObject), ...status },
    },
  };
}

const reports = (rsp: TestResponse) => condition(rsp, 'ReportsAccepted');
const entries = (rsp: TestResponse) => compositeStatus(rsp)['clusters'] as JsonObject[];

const BAD: [string, JsonObject, string][] = [
  ['a billion GiB', { sizeGiB: 1e9 }, 'sizeGiB'],
  ['a negative size', { sizeGiB: -1 }, 'sizeGiB'],
  ['more bytes done than in total', { progress: { ...GOOD_PROGRESS, bytesDone: 11 * GIB } }, 'progress.bytesDone'],
  ['a percent its bytes do not give', { progress: { ...GOOD_PROGRESS, percent: 99 } }, 'progress.percent'],
  ['a byte total past any claim', { progress: { ...GOOD_PROGRESS, bytesTotal: 2 ** 60, bytesDone: 0, percent: 0 } }, 'progress.bytesTotal'],
  ['bytes over its own claim', { sizeGiB: 5, progress: GOOD_PROGRESS }, 'progress.bytesTotal'],
  ['attempts past any count', { attempts: 1e15 }, 'attempts'],
  ['a malformed digest', { digest: `sha256:${'Z'.repeat(64)}` }, 'digest'],
  ['a commit of 5,000 characters', { commit: 'a'.repeat(5000) }, 'commit'],
  ['a message of 100,000 characters', { message: 'm'.repeat(100_000) }, 'message'],
  ['an unknown access mode', { accessModes: ['ReadWriteEverywhere'] }, 'accessModes'],
  ['an unknown phase', { phase: 'Exploded' }, 'phase'],
];

describe('a ModelCacheShard rolling up its children', () => {
  it.each(BAD)('leaves out %s, names it, and stamps its children exactly as before', async (_what, status, field) => {
    const good = await served.client.run(
      request({
        observed: { composite: shardXr(['a', 'b']), resources: { 'hydration-a': child('a', {}), 'hydration-b': child('b', {}) } },
      }),
    );
    const rsp = await served.client.run(
      request({
        observed: { composite: shardXr(['a', 'b']), resources: { 'hydration-a': child('a', status), 'hydration-b': child('b', {}) } },
      }),
    );
    expect(desiredResources(rsp)).toEqual(desiredResources(good));
    const entry = entries(rsp).find((e) => e['name'] === 'a')!;
    const leaf = field.split('.')[0]!;
    if (leaf !== 'phase') expect(entry).not.toHaveProperty(leaf);
    expect(JSON.stringify(compositeStatus(rsp))).not.toMatch(/1e\+?15|1000000000\b|m{600}|a{600}|Z{64}|1152921504606846976/);
    const found = reports(rsp);
    expect(found).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'ReportRefused' });
    expect(found?.message).toContain(`the status of ${hydrationName(NAMESPACE, CACHE, 'a')}: ${field} `);
    expect(found?.message?.length).toBeLessThan(1000);
    expect(reports(good)).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Accepted' });
  });

  it('sums only the progress that passed: a child reporting 2^60 bytes does not become the shard’s total', async () => {
    const rsp = await served.client.run(
      request({
        observed: {
          composite: shardXr(['a', 'b']),
          resources: {
            'hydration-a': child('a', { progress: { ...GOOD_PROGRESS, bytesTotal: 2 ** 60, bytesDone: 2 ** 59, percent: 50 } }),
            'hydration-b': child('b', { progress: GOOD_PROGRESS }),
          },
        },
      }),
    );
    expect(compositeStatus(rsp)['summary']).toMatchObject({ bytesDone: 5 * GIB, bytesTotal: 10 * GIB, progress: '50%' });
  });
});

describe('a ModelCache rolling up its shards', () => {
  it.each(BAD)("leaves out a shard's entry with %s, and names it", async (_what, status, field) => {
    const shard = shardXr(['cluster-a'], {}, undefined);
    const body = shard.resource;
    body['status'] = {
      composed: ['cluster-a'],
      clusters: [{ name: 'cluster-a', phase: 'Hydrating', ...status }],
      conditions: [{ type: 'Ready', status: 'False', reason: 'Creating' }],
    };
    const rsp = await served.client.run(
      request({ observed: { composite: cacheXr(), resources: { 'shard-0': shard } }, requiredResources: resolved([cluster('cluster-a')]) }),
    );
    const entry = entries(rsp).find((e) => e['name'] === 'cluster-a')!;
    const leaf = field.split('.')[0]!;
    if (leaf !== 'phase') expect(entry).not.toHaveProperty(leaf);
    const found = reports(rsp);
    expect(found).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'ReportRefused' });
    expect(found?.message).toMatch(/^ModelCacheShard \S+'s entry for cluster-a: /);
    expect(found?.message).toContain(`: ${field} `);
    expect(found?.message?.length).toBeLessThan(1000);
  });

  it('hands on only checked fields: a child of the layout before shards with a size of a billion GiB hands on no size', async () => {
    const old = observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' });
    (old.resource['status'] as JsonObject)['sizeGiB'] = 1e9;
    (old.resource['status'] as JsonObject)['orphanOnDelete'] = true;
    (old.resource['status'] as JsonObject)['injected'] = { anything: 'x'.repeat(10_000) };
    const rsp = await served.client.run(
      request({
        observed: { composite: cacheXr(), resources: { 'hydration-cluster-a': old } },
        requiredResources: resolved([cluster('cluster-a')]),
      }),
    );
    const shard = desiredResources(rsp)['shard-0']!;
    const member = ((shard['spec'] as JsonObject)['clusters'] as JsonObject[])[0]!;
    expect(member['inheritedStatus']).toMatchObject({ phase: 'Ready', mount: HF_MOUNT });
    expect(member['inheritedStatus']).not.toHaveProperty('sizeGiB');
    expect(member['inheritedStatus']).not.toHaveProperty('injected');
    expect(reports(rsp)).toMatchObject({ status: 'STATUS_CONDITION_FALSE' });
    expect(reports(rsp)?.message).toContain('sizeGiB is 1,000,000,000, over the largest claim spec.huggingFace.sizeGiB allows (100,000)');
  });
});
