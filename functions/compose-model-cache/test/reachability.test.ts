// Issue 29, point 6: a cluster its hydration says can't be reached is said so
// at both levels of the fan-out, the shard's entry and the ModelCache's (and
// counted, and named in ArtifactReady), with its phase and mount as last
// seen; above 100 clusters the ModelCache lists it beside the clusters not
// Ready. The children's reports are what the test gives; the shards' are what
// the function makes of them (fleet.ts).

import { describe, expect, it } from 'vitest';
import { cacheNames, huggingFaceMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, condition, inProcessClient } from '#testing';
import { compose } from '../src/fn.js';
import { CACHE, NAMESPACE, cluster, type ChildReport } from './fixtures.js';
import { reconcileFleet } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const SINCE = '2026-12-02T05:00:00Z';
const DOWN = { since: SINCE, error: 'dial tcp 127.0.0.1:6444: connect: connection refused' };
const UNREACHABLE_READY: ChildReport = {
  phase: 'Ready',
  mount: HF_MOUNT,
  message: `Qwen/Qwen3-0.6B stays Ready as last seen, its mount published: cluster cluster-a unreachable since ${SINCE} (…)`,
  reason: 'Held',
  unreachable: DOWN,
};
const UNREACHABLE_HYDRATING: ChildReport = {
  phase: 'Hydrating',
  message: `cluster cluster-b unreachable since ${SINCE} (…); Hydrating as last seen`,
  reason: 'Hydrating',
  unreachable: DOWN,
};
const READY: ChildReport = { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' };

const entryOf = (status: JsonObject, name: string) => (status['clusters'] as JsonObject[]).find((entry) => entry['name'] === name);

describe('the roll-up carries an unreachable cluster', () => {
  it('the shard and the ModelCache: its entry says unreachable and since when, counted, named; phase and mount as last seen', async () => {
    const clusters = ['cluster-a', 'cluster-b', 'cluster-c'].map((name) => cluster(name));
    const fleet = await reconcileFleet(client, {
      clusters,
      children: { 'cluster-a': UNREACHABLE_READY, 'cluster-b': UNREACHABLE_HYDRATING, 'cluster-c': READY },
    });
    const shard = compositeStatus(Object.values(fleet.shards)[0]!);
    const cache = compositeStatus(fleet.cache);
    for (const status of [shard, cache]) {
      expect(entryOf(status, 'cluster-a')).toMatchObject({ phase: 'Ready', mount: HF_MOUNT, unreachable: DOWN });
      expect(entryOf(status, 'cluster-b')).toMatchObject({ phase: 'Hydrating', unreachable: DOWN });
      expect(entryOf(status, 'cluster-c')?.['unreachable']).toBeUndefined();
      expect(status['summary']).toMatchObject({ ready: '2/3', hydrating: 1, unreachable: 2 });
    }
    expect(condition(Object.values(fleet.shards)[0]!, 'ArtifactReady')?.message).toBe(
      `2/3 clusters ready; unreachable (2, each as last seen): cluster-a since ${SINCE}, cluster-b since ${SINCE}`,
    );
    expect(condition(fleet.cache, 'ArtifactReady')).toMatchObject({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'Partial',
      message: `2/3 clusters ready; waiting for cluster-b (Hydrating); unreachable (2, each as last seen): cluster-a since ${SINCE}, cluster-b since ${SINCE}`,
    });
  });

  it('every cluster reachable: no count, no word of it', async () => {
    const fleet = await reconcileFleet(client, { clusters: [cluster('cluster-a')], children: { 'cluster-a': READY } });
    expect(compositeStatus(fleet.cache)['summary']).not.toHaveProperty('unreachable');
    expect(condition(fleet.cache, 'ArtifactReady')?.message).toBe('staged on all 1 cluster');
  });

  it('above 100 clusters, the ModelCache lists an unreachable Ready cluster beside those not Ready', async () => {
    const names = Array.from({ length: 120 }, (_, i) => `cluster-${String(i).padStart(3, '0')}`);
    const children: Record<string, ChildReport> = Object.fromEntries(names.map((name) => [name, READY]));
    children['cluster-007'] = UNREACHABLE_READY;
    children['cluster-050'] = { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' };
    const fleet = await reconcileFleet(client, { clusters: names.map((name) => cluster(name)), children });
    const status = compositeStatus(fleet.cache);
    expect(status['summary']).toMatchObject({ listed: 'NotReady', unreachable: 1, ready: '119/120' });
    expect((status['clusters'] as JsonObject[]).map((entry) => [entry['name'], entry['phase'], entry['unreachable']])).toEqual([
      ['cluster-007', 'Ready', DOWN],
      ['cluster-050', 'Hydrating', undefined],
    ]);
  });
});
