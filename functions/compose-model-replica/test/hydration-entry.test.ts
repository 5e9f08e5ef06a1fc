// Where a replica finds its cluster's entry (docs/design/fleet.md): its own
// ModelCacheHydration, by name, at any fleet size; the cache's status.clusters[]
// entry when that child is not there (not stamped yet, or between the two
// halves of a hand-over); and neither: Hydrating when the cache selects the
// cluster, CacheNotOnCluster when it does not.

import { describe, expect, it } from 'vitest';
import { huggingFaceMount, type JsonObject } from '#lib';
import { condition, desiredResources, type TestResponse } from '#testing';
import {
  cluster,
  engineOf,
  entry,
  hydration,
  manifest,
  modelCache,
  podTemplates,
  replica,
  requestFor,
  run,
  standaloneEngine,
} from './support.js';

const HF = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' }) as unknown as JsonObject;
const OTHER = huggingFaceMount({
  claimName: 'modelcache-ml-team-qwen-17db2',
  repo: 'Qwen/Qwen3-0.6B',
  revision: 'v2',
}) as unknown as JsonObject;
const TIER = { 'modelplane.ai/tier': 'a100' };

/** A cache selecting the tier, listing `entries`. */
function cacheListing(entries: JsonObject[]): JsonObject {
  const cache = modelCache('qwen', entries);
  (cache['spec'] as JsonObject)['clusterSelector'] = { matchLabels: TIER };
  return cache;
}

async function compose(entries: JsonObject[], child: JsonObject | null, labels: Record<string, string> = TIER): Promise<TestResponse> {
  return run(
    requestFor({
      xr: replica({ cache: 'qwen', engines: [standaloneEngine('main')] }),
      cluster: cluster('cluster-a', { labels }),
      cache: cacheListing(entries),
      hydration: child,
    }),
  );
}

const accepted = (rsp: TestResponse) => condition(rsp, 'ModelAccepted');
const served = (rsp: TestResponse) => 'model-serving-main' in desiredResources(rsp);

describe('the cluster’s ModelCacheHydration comes first', () => {
  it('serves with the child’s mount when the cache lists nothing (a fleet above 100 lists only what is not Ready)', async () => {
    const rsp = await compose([], hydration('qwen', 'cluster-a', { phase: 'Ready', mount: HF }));
    expect(served(rsp)).toBe(true);
    const pod = podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template;
    expect(engineOf(pod)['env']).toContainEqual({ name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' });
  });

  it.each([
    ['another cache', { clusterName: 'cluster-a', cacheName: 'qwen-a' }],
    ['another cluster', { clusterName: 'b', cacheName: 'qwen' }],
  ])(
    'a ModelCacheHydration of that name staging %s (names join with "-") is not this cluster’s: nothing served from it',
    async (_what, spec) => {
      const rsp = await compose([], { ...hydration('qwen', 'cluster-a', { phase: 'Ready', mount: HF }), spec });
      expect(served(rsp)).toBe(false);
      expect(accepted(rsp)?.reason).toBe('Hydrating');
    },
  );

  it('waits on the child’s word when the cache’s copy is older', async () => {
    const rsp = await compose(
      [entry('cluster-a', 'Ready', { mount: HF })],
      hydration('qwen', 'cluster-a', { phase: 'Hydrating', message: 're-staging v2' }),
    );
    expect(served(rsp)).toBe(false);
    expect(accepted(rsp)).toMatchObject({
      reason: 'Hydrating',
      message: 'waiting for ModelCache qwen on cluster-a: Hydrating (re-staging v2)',
    });
  });

  it('mounts exactly what the child publishes, not the cache’s older copy', async () => {
    const rsp = await compose(
      [entry('cluster-a', 'Ready', { mount: HF })],
      hydration('qwen', 'cluster-a', { phase: 'Ready', mount: OTHER }),
    );
    const pod = podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template;
    expect(engineOf(pod)['env']).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: 'v2' });
  });

  it('fails with the child’s own words when it Failed', async () => {
    const rsp = await compose(
      [],
      hydration('qwen', 'cluster-a', { phase: 'Failed', message: 'hydration Job failed: BackoffLimitExceeded' }),
    );
    expect(accepted(rsp)).toMatchObject({ reason: 'HydrationFailed', message: 'hydration Job failed: BackoffLimitExceeded' });
    expect(served(rsp)).toBe(false);
  });

  it('refuses a mount outside the contract, whichever object carries it', async () => {
    const bad = { ...HF, volumes: [{ name: 'model-cache', hostPath: { path: '/' } }] };
    const rsp = await compose([], hydration('qwen', 'cluster-a', { phase: 'Ready', mount: bad }));
    expect(accepted(rsp)).toMatchObject({ reason: 'InvalidCacheMount' });
  });

  it('reads a child that has not reported yet as absent: the cache’s entry stands', async () => {
    const rsp = await compose([entry('cluster-a', 'Ready', { mount: HF })], hydration('qwen', 'cluster-a', {}));
    expect(served(rsp)).toBe(true);
  });
});

describe('without the child', () => {
  it('reads the cache’s entry (between the two halves of a hand-over)', async () => {
    expect(served(await compose([entry('cluster-a', 'Ready', { mount: HF })], null))).toBe(true);
  });

  it('is Hydrating when the cache selects the cluster: its child is on its way', async () => {
    const rsp = await compose([], null);
    expect(accepted(rsp)).toMatchObject({
      reason: 'Hydrating',
      message: 'waiting for ModelCache qwen on cluster-a: its ModelCacheHydration is not there yet',
    });
  });

  it('is CacheNotOnCluster when the cache does not select it', async () => {
    const rsp = await compose([], null, { 'modelplane.ai/tier': 'h100' });
    expect(accepted(rsp)).toMatchObject({ reason: 'CacheNotOnCluster' });
  });
});
