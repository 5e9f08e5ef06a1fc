// The fan-out's bounds at fleet scale (docs/design/fleet.md, "Limits"):
// every XR composes about a hundred resources at most, every status stays
// under 100 kB, every response under 1 MiB, and above 100 clusters a
// ModelCache lists only what is not Ready. Sizes, not times: the benchmark
// measures time.

import { describe, expect, it } from 'vitest';
import { cacheNames, huggingFaceMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, desiredResources, inProcessClient, responseBytes, type TestResponse } from '#testing';
import { compose } from '../src/fn.js';
import { CACHE, NAMESPACE, cluster, type ChildReport } from './fixtures.js';
import { reconcileFleet } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const names = (count: number) => Array.from({ length: count }, (_, i) => `cluster-${String(i).padStart(5, '0')}`);
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const MIB = 1024 * 1024;
const size = (rsp: TestResponse): number => responseBytes.get(rsp) ?? Number.POSITIVE_INFINITY;

describe.each([250, 1000])('a ModelCache on %i clusters', (count) => {
  const clusters = names(count).map((name) => cluster(name));
  const children: Record<string, ChildReport> = {};
  names(count).forEach((name, i) => {
    // Every 97th failed, every 13th still downloading, the rest Ready.
    children[name] =
      i % 97 === 0
        ? { phase: 'Failed', message: 'hydration Job failed: BackoffLimitExceeded', reason: 'HydrationFailed' }
        : i % 13 === 0
          ? { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' }
          : { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' };
  });

  it('composes one shard per 100 clusters, each composing at most 100 children, and lists only what is not Ready', async () => {
    const fleet = await reconcileFleet(client, { clusters, children });
    const shards = Object.keys(desiredResources(fleet.cache));
    expect(shards).toHaveLength(Math.ceil(count / 100));
    for (const rsp of Object.values(fleet.shards)) expect(Object.keys(desiredResources(rsp)).length).toBeLessThanOrEqual(100);

    const status = compositeStatus(fleet.cache);
    const failed = names(count).filter((_, i) => i % 97 === 0).length;
    const hydrating = names(count).filter((_, i) => i % 97 !== 0 && i % 13 === 0).length;
    expect(status['summary']).toMatchObject({
      ready: `${count - failed - hydrating}/${count}`,
      clusters: count,
      failed,
      hydrating,
      pending: 0,
      shards: shards.length,
      listed: 'NotReady',
    });
    const listed = status['clusters'] as JsonObject[];
    expect(listed.length).toBe(Math.min(50, failed + hydrating));
    // Failed first: every failed cluster is listed before any that is only on its way.
    expect(listed.filter((e) => e['phase'] === 'Failed')).toHaveLength(Math.min(50, failed));
    expect(listed.every((e) => e['phase'] !== 'Ready')).toBe(true);
    expect(listed.map((e) => e['name'])).toEqual([...listed.map((e) => e['name'] as string)].sort());
  });

  it('keeps every status under 100 kB and every response under 1 MiB', async () => {
    const fleet = await reconcileFleet(client, { clusters, children });
    expect(bytes(compositeStatus(fleet.cache))).toBeLessThan(100_000);
    expect(size(fleet.cache)).toBeLessThan(MIB);
    for (const rsp of Object.values(fleet.shards)) {
      expect(bytes(compositeStatus(rsp))).toBeLessThan(100_000);
      expect(size(rsp)).toBeLessThan(MIB);
    }
  });
});

describe('10,000 clusters, the design point', () => {
  it('is 100 shards of 100, its first compose under 1 MiB and its status under 100 kB', async () => {
    const fleet = await reconcileFleet(client, { clusters: names(10_000).map((name) => cluster(name)) });
    const shards = Object.values(desiredResources(fleet.cache));
    expect(shards).toHaveLength(100);
    expect(shards.every((s) => ((s['spec'] as JsonObject)['clusters'] as JsonObject[]).length === 100)).toBe(true);
    expect(size(fleet.cache)).toBeLessThan(MIB);
    expect(bytes(compositeStatus(fleet.cache))).toBeLessThan(100_000);
    for (const rsp of Object.values(fleet.shards)) expect(size(rsp)).toBeLessThan(MIB);
  });
});

describe('a fleet that fits the bound', () => {
  it('lists every cluster with its mount, up to 100', async () => {
    const clusters = names(100).map((name) => cluster(name));
    const children = Object.fromEntries(
      names(100).map((name): [string, ChildReport] => [name, { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }]),
    );
    const status = compositeStatus((await reconcileFleet(client, { clusters, children })).cache);
    expect(status['summary']).toMatchObject({ ready: '100/100', listed: 'All', shards: 1 });
    expect((status['clusters'] as JsonObject[]).every((e) => e['mount'] !== undefined)).toBe(true);
    expect(status['clusters']).toHaveLength(100);
  });
});
