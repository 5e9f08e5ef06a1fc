// Issue 13, points 1 and 3, on the parent, through gRPC: the ModelCache's
// retry request reaches every child (stamped or retained) under a key of its
// own, the attempt count is rolled up, and a retained cluster that failed
// still says why.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, serveForFile, type TestResource, type TestResponse } from '#testing';
import { cacheXr, cluster, observedChild, replica } from './fixtures.js';
import { reconcileFleet, worldOf, type RequestParts } from './fleet.js';

const served = serveForFile('compose-model-cache');

/** Both levels reconciled (fleet.ts): what the fleet desires, as one level. */
async function run(parts: RequestParts): Promise<TestResponse> {
  return (await reconcileFleet(served.client, worldOf(parts, [cluster('cluster-a')]))).merged;
}

function withRetry(xr: TestResource, value: string): TestResource {
  const body = structuredClone(xr.resource);
  (body['metadata'] as JsonObject)['annotations'] = { 'modelplane.ai/retry': value };
  return { resource: body };
}

const FAILED = 'hydration Job modelcache-ml-team-qwen-hydrate-256ec on cluster-b failed (attempt 3 of 3): BackoffLimitExceeded';

describe('the ModelCache retry request', () => {
  it('is copied onto every child, stamped or retained, as modelplane.ai/cache-retry', async () => {
    const rsp = await run({
      xr: withRetry(cacheXr(), 'after-proxy-fix'),
      clusters: [cluster('cluster-a')],
      replicas: [replica('r1', 'cluster-b')],
      observed: { 'hydration-cluster-b': observedChild('cluster-b', { phase: 'Failed', message: FAILED }) },
    });
    for (const key of ['hydration-cluster-a', 'hydration-cluster-b']) {
      expect((desiredResources(rsp)[key]!['metadata'] as JsonObject)['annotations']).toEqual({
        'modelplane.ai/cache-retry': 'after-proxy-fix',
      });
    }
  });

  it('without one, a child carries no annotations', async () => {
    const rsp = await run({ clusters: [cluster('cluster-a')] });
    expect((desiredResources(rsp)['hydration-cluster-a']!['metadata'] as JsonObject)['annotations']).toBeUndefined();
  });
});

describe('a retained cluster that failed', () => {
  it('keeps both the retained note and the child’s reason, in status.clusters[] and in HydrationFailed', async () => {
    const child = observedChild('cluster-b', { phase: 'Failed', message: FAILED });
    (child.resource['status'] as JsonObject)['attempts'] = 3;
    const rsp = await run({
      clusters: [cluster('cluster-a')],
      replicas: [replica('r1', 'cluster-b')],
      observed: { 'hydration-cluster-b': child },
    });
    const entry = (compositeStatus(rsp)['clusters'] as JsonObject[]).find((c) => c['name'] === 'cluster-b');
    expect(entry).toEqual({
      name: 'cluster-b',
      phase: 'Failed',
      message: `retained: no longer selected; in use by ModelReplica r1; ${FAILED}`,
      attempts: 3,
    });
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({ reason: 'HydrationFailed', message: `cluster-b: ${FAILED}` });
  });
});
