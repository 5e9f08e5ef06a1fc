// Issue 13, points 1 and 2, through gRPC against the built server: a failure
// stays failed (bounded automatic attempts spaced by the Job's TTL, then a
// latch a person lifts with the retry annotation), events fire once per
// transition, and a hold of one reconcile keeps a Ready cluster Ready.

import { describe, expect, it } from 'vitest';
import { manifestOf, compositeStatus, condition, desiredResources, serveForFile, type TestResource, type TestResponse } from '#testing';
import type { JsonObject } from '#lib';
import {
  BOUND_CLAIM,
  CLUSTER_A,
  HF,
  HF_AUTH,
  REPO,
  hydration,
  jobRemote,
  observe,
  resolved,
  results,
  run,
  tokenSecret,
  withStatusFrom,
  type World,
} from './support.js';

const served = serveForFile('compose-model-cache-hydration');
const JOB = 'modelcache-ml-team-qwen-hydrate-256ec';

/** One reconcile through gRPC; the XR carries the status the last answer wrote. */
async function reconcile(world: World): Promise<TestResponse> {
  return run(resolved(world), served.client);
}

const phase = (rsp: TestResponse) => compositeStatus(rsp)['phase'];
const keys = (rsp: TestResponse) => Object.keys(desiredResources(rsp));
const jobOf = (rsp: TestResponse) => manifestOf(desiredResources(rsp)['hydrate']) as { metadata: JsonObject; spec: JsonObject };
const severities = (rsp: TestResponse) => rsp.results.map((r) => [r.severity, r.reason]);

/** The XR with annotations on its metadata. */
function annotated(xr: TestResource, annotations: Record<string, string>): TestResource {
  const body = structuredClone(xr.resource);
  (body['metadata'] as JsonObject)['annotations'] = annotations;
  return { resource: body };
}

describe('a failed download stays failed: bounded attempts, then a latch (gRPC)', () => {
  it('three attempts spaced by a TTL that doubles, then Failed through the Job’s removal, with one Warning per failure', async () => {
    let xr = hydration(HF);
    const first = await reconcile({ xr });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
    xr = withStatusFrom(xr, first);
    let last = first;

    for (const attempt of [1, 2, 3]) {
      // What provider-kubernetes creates: the last desired Job (for attempts 2 and 3, the failed one's manifest).
      const desiredJob = desiredResources(last)['hydrate']!;
      expect(jobOf(last).metadata['annotations']).toMatchObject({ 'modelplane.ai/attempt': String(Math.max(attempt - 1, 1)) });

      // The Job runs (for attempts 2 and 3: provider-kubernetes created it again after the TTL).
      const running = await reconcile({ xr, observed: { pvc, hydrate: observe(desiredJob, jobRemote('running')) } });
      expect([phase(running), compositeStatus(running)['attempts']]).toEqual(['Hydrating', attempt]);
      expect(severities(running)).toEqual(attempt === 1 ? [] : [['SEVERITY_NORMAL', 'Retrying']]);
      xr = withStatusFrom(xr, running);
      const runningJob = desiredResources(running)['hydrate']!;
      // The new Job is counted: its attempt and TTL raised (both mutable on a running Job).
      expect(jobOf(running).metadata['annotations']).toMatchObject({ 'modelplane.ai/attempt': String(attempt) });
      expect(jobOf(running).spec['ttlSecondsAfterFinished']).toBe(180 * 2 ** (attempt - 1));

      // It fails: Failed, one Warning; the same observation again says nothing new.
      const failed = await reconcile({ xr, observed: { pvc, hydrate: observe(runningJob, jobRemote('failed')) } });
      expect([phase(failed), compositeStatus(failed)['attempts'], condition(failed, 'ArtifactReady')?.reason]).toEqual([
        'Failed',
        attempt,
        'HydrationFailed',
      ]);
      expect(compositeStatus(failed)['message']).toContain(`failed (attempt ${attempt} of 3)`);
      expect(severities(failed)).toEqual([['SEVERITY_WARNING', 'HydrationFailed']]);
      xr = withStatusFrom(xr, failed);
      const again = await reconcile({ xr, observed: { pvc, hydrate: observe(runningJob, jobRemote('failed')) } });
      expect([phase(again), results(again)]).toEqual(['Failed', []]);
      if (attempt < 3) {
        // The failed Job stays desired as it is, so that its removal brings the next attempt.
        expect(keys(failed)).toEqual(['pvc', 'hydrate-account', 'hydrate-role', 'hydrate-binding', 'hydrate']);
        expect(desiredResources(failed)['hydrate']).toEqual(runningJob);
        expect(compositeStatus(failed)['message']).toContain(
          `attempt ${attempt + 1} starts when Kubernetes removes the failed Job, ${180 * 2 ** (attempt - 1)}s after it failed`,
        );
      } else {
        // Spent: the Job is no longer desired (orphaned; its TTL removes it), so nothing creates it again.
        expect(keys(failed)).toEqual(['pvc']);
        expect(compositeStatus(failed)['message']).toContain('no attempts left');
        expect(compositeStatus(failed)['message']).toContain('modelplane.ai/retry');
      }
      last = failed;
    }

    // The Job is gone (its TTL): still Failed, quietly, and nothing is composed to run again.
    const gone = await reconcile({ xr, observed: { pvc } });
    expect([phase(gone), keys(gone), results(gone), compositeStatus(gone)['attempts']]).toEqual(['Failed', ['pvc'], [], 3]);
    expect(compositeStatus(gone)['message']).toBe(compositeStatus(last)['message']);
    const later = await reconcile({ xr: withStatusFrom(xr, gone), observed: { pvc } });
    expect([phase(later), keys(later), results(later)]).toEqual(['Failed', ['pvc'], []]);

    // A hold of one reconcile keeps the latch: when the cluster is back, no attempt starts.
    const held = await reconcile({ xr: withStatusFrom(xr, later), cluster: null, observed: { pvc } });
    expect([phase(held), results(held), compositeStatus(held)['attempts']]).toEqual(['Failed', [], 3]);
    const back = await reconcile({ xr: withStatusFrom(xr, held), observed: { pvc } });
    expect([phase(back), keys(back), results(back)]).toEqual(['Failed', ['pvc'], []]);
  });

  it('a retry request on the ModelCacheHydration starts a new round; a failed Job of the old round is waited out, not read', async () => {
    const failedStatus = {
      phase: 'Failed',
      message: 'hydration Job failed (attempt 3 of 3): BackoffLimitExceeded',
      attempts: 3,
      attemptsFor: REPO,
    };
    const xr = annotated(hydration(HF, failedStatus), { 'modelplane.ai/retry': 'fixed-the-proxy' });
    const first = await reconcile({ xr: hydration(HF) });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);

    const retried = await reconcile({ xr, observed: { pvc } });
    expect([phase(retried), keys(retried), severities(retried)]).toEqual([
      'Hydrating',
      ['pvc', 'hydrate-account', 'hydrate-role', 'hydrate-binding', 'hydrate'],
      [['SEVERITY_NORMAL', 'RetryRequested']],
    ]);
    expect(compositeStatus(retried)).toMatchObject({ attempts: 1, attemptsFor: REPO, retryRequest: 'own:fixed-the-proxy' });
    expect(jobOf(retried).spec).toMatchObject({
      template: { metadata: { annotations: { 'modelplane.ai/retry-round': 'own:fixed-the-proxy' } } },
    });

    // The old round's failed Job is still there: it is not this round's result.
    const oldJob = observe(desiredResources(first)['hydrate']!, jobRemote('failed'));
    const waiting = await reconcile({ xr: withStatusFrom(xr, retried), observed: { pvc, hydrate: oldJob } });
    expect([phase(waiting), results(waiting)]).toEqual(['Hydrating', []]);
    expect(compositeStatus(waiting)['message']).toBe(
      `waiting for the hydration Job ${JOB} on cluster-a, left from before the retry request, to finish and be removed (its TTL is 180s) before staging ${REPO}`,
    );

    // The same request again, once Failed, retries nothing.
    const spent = await reconcile({
      xr: annotated(hydration(HF, { ...failedStatus, retryRequest: 'own:fixed-the-proxy' }), { 'modelplane.ai/retry': 'fixed-the-proxy' }),
      observed: { pvc },
    });
    expect([phase(spent), keys(spent), results(spent)]).toEqual(['Failed', ['pvc'], []]);
  });

  it('the ModelCache’s request (copied down) reaches a failed cluster and is only recorded on a Ready one', async () => {
    const first = await reconcile({ xr: hydration(HF) });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
    const failed = { phase: 'Failed', message: 'failed (attempt 3 of 3)', attempts: 3, attemptsFor: REPO };
    const onFailed = await reconcile({ xr: annotated(hydration(HF, failed), { 'modelplane.ai/cache-retry': '1' }), observed: { pvc } });
    expect([phase(onFailed), severities(onFailed)]).toEqual(['Hydrating', [['SEVERITY_NORMAL', 'RetryRequested']]]);

    const ready = { phase: 'Ready', staged: REPO, attempts: 1, attemptsFor: REPO };
    const onReady = await reconcile({ xr: annotated(hydration(HF, ready), { 'modelplane.ai/cache-retry': '1' }), observed: { pvc } });
    expect([phase(onReady), keys(onReady), results(onReady)]).toEqual(['Ready', ['pvc'], []]);
    expect(compositeStatus(onReady)).toMatchObject({ attempts: 1, retryRequest: 'cache:1' });
  });

  it('the OCI resolver: spent attempts drop the resolver and its access, and the cluster stays Failed', async () => {
    const ref = 'registry.example.com/models/qwen:v1';
    const oci = { source: 'OCI', oci: { ref } };
    const cluster = { ...CLUSTER_A };
    const first = await reconcile({ xr: hydration(oci), cluster });
    const result = observe(desiredResources(first)['resolve-result']!, { fields: { data: { ref, error: 'UNAUTHORIZED' } }, ready: true });
    const status = { phase: 'Failed', message: 'resolver failed (attempt 2 of 3)', attempts: 2, attemptsFor: ref };
    const third = await reconcile({
      xr: hydration(oci, status),
      cluster,
      observed: { 'resolve-result': result, resolve: observe(desiredResources(first)['resolve']!, jobRemote('running')) },
    });
    expect([phase(third), compositeStatus(third)['attempts'], severities(third)]).toEqual([
      'Pending',
      3,
      [['SEVERITY_NORMAL', 'Retrying']],
    ]);
    const failed = await reconcile({
      xr: withStatusFrom(hydration(oci, status), third),
      cluster,
      observed: { 'resolve-result': result, resolve: observe(desiredResources(third)['resolve']!, jobRemote('failed')) },
    });
    expect([phase(failed), keys(failed), severities(failed)]).toEqual([
      'Failed',
      ['resolve-result'],
      [['SEVERITY_WARNING', 'HydrationFailed']],
    ]);
    const gone = await reconcile({ xr: withStatusFrom(hydration(oci, status), failed), cluster, observed: { 'resolve-result': result } });
    expect([phase(gone), keys(gone), results(gone)]).toEqual(['Failed', ['resolve-result'], []]);
  });

  it('a missing token warns once, not every reconcile', async () => {
    const first = await reconcile({ xr: hydration(HF_AUTH), secret: null });
    expect(severities(first)).toEqual([
      ['SEVERITY_WARNING', 'AuthSecretMissing'],
      ['SEVERITY_NORMAL', 'Staging'],
    ]);
    const pvc = observe(desiredResources(first)['pvc']!, { status: { phase: 'Pending' } });
    const second = await reconcile({ xr: withStatusFrom(hydration(HF_AUTH), first), secret: null, observed: { pvc } });
    expect([condition(second, 'ArtifactReady')?.reason, results(second)]).toEqual(['AuthSecretMissing', []]);
  });
});

describe('a hold keeps the last Ready result (gRPC)', () => {
  it('Ready, token since removed; the cluster unreadable for one reconcile: still Ready with its mount, then Staged again', async () => {
    const first = await reconcile({ xr: hydration(HF_AUTH), secret: tokenSecret() });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
    const ready = await reconcile({
      xr: hydration(HF_AUTH),
      secret: tokenSecret(),
      observed: { pvc, hydrate: observe(desiredResources(first)['hydrate']!, jobRemote('complete')) },
    });
    expect(phase(ready)).toBe('Ready');
    const mount = compositeStatus(ready)['mount'];
    let xr = withStatusFrom(hydration(HF_AUTH), ready);

    const holds: [string, World['cluster']][] = [
      ['the InferenceCluster is gone', null],
      ['it lost its providerConfigRef', { ...CLUSTER_A, status: { cache: { storageClassName: 'modelplane-rwx' } } }],
      ['it lost its storage class', { ...CLUSTER_A, status: { providerConfigRef: { name: 'cluster-a-pc' } } }],
    ];
    for (const [why, cluster] of holds) {
      const held = await reconcile({ xr, cluster, secret: tokenSecret({}), observed: { pvc } });
      expect([why, phase(held), compositeStatus(held)['mount'], condition(held, 'ArtifactReady')?.status]).toEqual([
        why,
        'Ready',
        mount,
        'STATUS_CONDITION_TRUE',
      ]);
      expect(condition(held, 'ArtifactReady')?.reason).toBe('Held');
      expect(compositeStatus(held)).toMatchObject({ staged: `${REPO}@main` });
      expect(held.desired?.composite?.ready).toBe('READY_TRUE');
      expect(desiredResources(held)['pvc']).toBeDefined();
      expect(results(held)).toEqual([]);

      // The cluster is back, the token still gone: Ready, the same mount, no AuthSecretMissing.
      const back = await reconcile({ xr: withStatusFrom(xr, held), secret: tokenSecret({}), observed: { pvc } });
      expect([phase(back), condition(back, 'ArtifactReady')?.reason, compositeStatus(back)['mount'], results(back)]).toEqual([
        'Ready',
        'Staged',
        mount,
        [],
      ]);
      xr = withStatusFrom(xr, back);
    }
  });

  it('a hold does not keep Ready for another artifact', async () => {
    const xr = hydration(
      { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-8B', sizeGiB: 20 } },
      { phase: 'Ready', staged: REPO, mount: {} },
    );
    const held = await reconcile({ xr, cluster: null });
    expect([phase(held), condition(held, 'ArtifactReady')?.reason, compositeStatus(held)['mount']]).toEqual([
      'Pending',
      'ClusterNotFound',
      undefined,
    ]);
  });
});
