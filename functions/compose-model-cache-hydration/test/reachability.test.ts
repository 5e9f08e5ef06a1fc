// Issue 29, point 6, through gRPC against the built server: a cluster whose
// API server can't be reached says so (status.unreachable, ClusterReachable,
// the message), since the earliest Synced=False of its Objects, and keeps
// what it had: a Ready cluster stays Ready with its mount, a Hydrating one
// stays Hydrating (saying unreachable, not "downloading"), a Failed one keeps
// its failure; nothing it composed is dropped. It clears once the Objects
// sync again. An error the API server answered (403, 404, a validation, a
// webhook) is not "unreachable", and no credential in an error is echoed.

import { describe, expect, it } from 'vitest';
import { compositeStatus, condition, desiredResources, serveForFile, type TestResponse } from '#testing';
import type { JsonObject } from '#lib';
import {
  BOUND_CLAIM,
  HF,
  HF_AUTH,
  REPO,
  TOKEN,
  TOKEN_B64,
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
const T0 = '2026-12-02T05:00:00Z';
const T1 = '2026-12-02T05:00:07Z';
const T2 = '2026-12-02T05:01:30Z';
const REFUSED =
  'observe failed: cannot get object: Get "https://127.0.0.1:6444/api/v1/namespaces/default/persistentvolumeclaims/modelcache-ml-team-qwen-3f1a2": dial tcp 127.0.0.1:6444: connect: connection refused';

async function reconcile(world: World): Promise<TestResponse> {
  return run(resolved(world), served.client);
}

/** The Object with its Synced condition replaced by `synced`, as provider-kubernetes writes it. */
function withSynced(object: JsonObject, synced: JsonObject): JsonObject {
  const status = structuredClone((object['status'] as JsonObject | undefined) ?? {});
  const conditions = ((status['conditions'] as JsonObject[] | undefined) ?? []).filter((c) => c['type'] !== 'Synced');
  conditions.push({ type: 'Synced', ...synced });
  return { ...object, status: { ...status, conditions } };
}

/** The Object as observed while its last reconcile failed with `message` (crossplane-runtime's ReconcileError). */
const failing = (object: JsonObject, message: string, since: string): JsonObject =>
  withSynced(object, { status: 'False', reason: 'ReconcileError', message, lastTransitionTime: since });

/** The Object synced again. */
const synced = (object: JsonObject, since: string): JsonObject =>
  withSynced(object, { status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: since });

/** The error an Object's Synced condition reports. */
function observedError(object: JsonObject): string {
  const conditions = (object['status'] as JsonObject)['conditions'] as JsonObject[];
  return conditions.find((c) => c['type'] === 'Synced')!['message'] as string;
}

const phase = (rsp: TestResponse) => compositeStatus(rsp)['phase'];
const keys = (rsp: TestResponse) => Object.keys(desiredResources(rsp));
const reach = (rsp: TestResponse) => [condition(rsp, 'ClusterReachable')?.status, condition(rsp, 'ClusterReachable')?.reason];

/** A Ready HuggingFace cluster: its XR with the status written, and the PVC Object as observed. */
async function readyCluster(): Promise<{ ready: TestResponse; pvc: JsonObject }> {
  const first = await reconcile({ xr: hydration(HF_AUTH), secret: tokenSecret() });
  const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
  const job = observe(desiredResources(first)['hydrate']!, jobRemote('complete'));
  const ready = await reconcile({ xr: withStatusFrom(hydration(HF_AUTH), first), secret: tokenSecret(), observed: { pvc, hydrate: job } });
  expect(phase(ready)).toBe('Ready');
  return { ready, pvc };
}

describe('a cluster that cannot be reached says so, and keeps what it had (gRPC)', () => {
  it('Ready: stays Ready with its mount, says unreachable since the earliest Synced=False, once; clears when Synced=True', async () => {
    const { ready, pvc } = await readyCluster();
    const mount = compositeStatus(ready)['mount'];
    expect(reach(ready)).toEqual(['STATUS_CONDITION_TRUE', 'Reachable']);
    expect(compositeStatus(ready)['unreachable']).toBeUndefined();
    const xr = withStatusFrom(hydration(HF_AUTH), ready);

    const down = await reconcile({ xr, secret: tokenSecret(), observed: { pvc: failing(pvc, REFUSED, T1) } });
    expect([phase(down), compositeStatus(down)['mount'], down.desired?.composite?.ready, keys(down)]).toEqual([
      'Ready',
      mount,
      'READY_TRUE',
      ['pvc'],
    ]);
    expect(compositeStatus(down)['unreachable']).toEqual({ since: T1, error: REFUSED });
    expect(reach(down)).toEqual(['STATUS_CONDITION_FALSE', 'Unreachable']);
    expect([condition(down, 'ArtifactReady')?.status, condition(down, 'ArtifactReady')?.reason]).toEqual(['STATUS_CONDITION_TRUE', 'Held']);
    expect(compositeStatus(down)['message']).toBe(
      `${REPO}@main stays Ready as last seen, its mount published: cluster cluster-a unreachable since ${T1} (${REFUSED}), so nothing on the cluster can be checked or changed now`,
    );
    expect(results(down)).toEqual([['SEVERITY_WARNING', `cluster cluster-a unreachable since ${T1} (${REFUSED})`]]);

    // Still down; the Object's error changed (a timeout now), and with it its lastTransitionTime: the first time stands, no new event.
    const timeout = REFUSED.replace('connect: connection refused', 'i/o timeout');
    const still = await reconcile({ xr: withStatusFrom(xr, down), secret: tokenSecret(), observed: { pvc: failing(pvc, timeout, T2) } });
    expect([phase(still), compositeStatus(still)['mount'], compositeStatus(still)['unreachable'], results(still)]).toEqual([
      'Ready',
      mount,
      { since: T1, error: timeout },
      [],
    ]);

    // Back: Synced=True. Reachable, Staged, the same mount, said once.
    const back = await reconcile({ xr: withStatusFrom(xr, still), secret: tokenSecret(), observed: { pvc: synced(pvc, T2) } });
    expect([phase(back), compositeStatus(back)['mount'], compositeStatus(back)['unreachable'], compositeStatus(back)['message']]).toEqual([
      'Ready',
      mount,
      undefined,
      undefined,
    ]);
    expect([reach(back), condition(back, 'ArtifactReady')?.reason]).toEqual([['STATUS_CONDITION_TRUE', 'Reachable'], 'Staged']);
    expect(results(back)).toEqual([['SEVERITY_NORMAL', `cluster cluster-a answers again (unreachable since ${T1})`]]);
  });

  it('Hydrating: stays Hydrating, says unreachable (not "downloading"), composes all it did; since the earliest of its Objects', async () => {
    const first = await reconcile({ xr: hydration(HF) });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
    const job = observe(desiredResources(first)['hydrate']!, jobRemote('running'));
    let xr = withStatusFrom(hydration(HF), first);
    const hydrating = await reconcile({ xr, observed: { pvc, hydrate: job } });
    expect(phase(hydrating)).toBe('Hydrating');
    expect(compositeStatus(hydrating)['message']).toMatch(/^downloading /);
    xr = withStatusFrom(xr, hydrating);

    const observed = { pvc: failing(pvc, REFUSED, T1), hydrate: failing(job, REFUSED.replace('persistentvolumeclaims', 'jobs'), T0) };
    const down = await reconcile({ xr, observed });
    expect([phase(down), keys(down), compositeStatus(down)['unreachable']]).toEqual([
      'Hydrating',
      keys(hydrating),
      { since: T0, error: observedError(observed.hydrate) },
    ]);
    const message = compositeStatus(down)['message'] as string;
    expect(message).toMatch(new RegExp(`^cluster cluster-a unreachable since ${T0} \\(`));
    expect(message).toContain('Hydrating as last seen');
    expect(message).not.toContain('downloading');
    expect(condition(down, 'ArtifactReady')?.message).toBe(message);
    expect(reach(down)).toEqual(['STATUS_CONDITION_FALSE', 'Unreachable']);

    // One Object synced again, the other still failing: still unreachable (since the first), until both sync.
    const half = await reconcile({ xr: withStatusFrom(xr, down), observed: { pvc: synced(pvc, T2), hydrate: observed.hydrate } });
    expect((compositeStatus(half)['unreachable'] as JsonObject | undefined)?.['since']).toBe(T0);
    const back = await reconcile({ xr: withStatusFrom(xr, half), observed: { pvc: synced(pvc, T2), hydrate: synced(job, T2) } });
    expect([phase(back), compositeStatus(back)['unreachable'], reach(back)]).toEqual([
      'Hydrating',
      undefined,
      ['STATUS_CONDITION_TRUE', 'Reachable'],
    ]);
    expect(compositeStatus(back)['message']).toMatch(/^downloading /);
  });

  it('Failed: keeps its failure in its own words (the latch), and says unreachable beside it', async () => {
    const first = await reconcile({ xr: hydration(HF) });
    const pvc = observe(desiredResources(first)['pvc']!, BOUND_CLAIM);
    const job = observe(desiredResources(first)['hydrate']!, jobRemote('failed'));
    const xr = withStatusFrom(hydration(HF), first);
    const failed = await reconcile({ xr, observed: { pvc, hydrate: job } });
    expect(phase(failed)).toBe('Failed');
    const down = await reconcile({ xr: withStatusFrom(xr, failed), observed: { pvc: failing(pvc, REFUSED, T1), hydrate: job } });
    expect([phase(down), compositeStatus(down)['message'], condition(down, 'ArtifactReady')?.reason]).toEqual([
      'Failed',
      compositeStatus(failed)['message'],
      'HydrationFailed',
    ]);
    expect(compositeStatus(down)['unreachable']).toEqual({ since: T1, error: REFUSED });
  });

  it('held by the gate too (its InferenceCluster gone): Ready as last seen, saying both', async () => {
    const { ready, pvc } = await readyCluster();
    const held = await reconcile({
      xr: withStatusFrom(hydration(HF_AUTH), ready),
      cluster: null,
      secret: tokenSecret(),
      observed: { pvc: failing(pvc, REFUSED, T1) },
    });
    expect([phase(held), condition(held, 'ArtifactReady')?.reason, compositeStatus(held)['mount'], keys(held)]).toEqual([
      'Ready',
      'Held',
      compositeStatus(ready)['mount'],
      ['pvc'],
    ]);
    expect(compositeStatus(held)['message']).toMatch(/InferenceCluster cluster-a not found.*; cluster cluster-a unreachable since /);
  });

  it('an error the API server answered is not "unreachable" (403, 404, a validation, a webhook it could not call)', async () => {
    const { ready, pvc } = await readyCluster();
    const xr = withStatusFrom(hydration(HF_AUTH), ready);
    const answered = [
      'observe failed: cannot get object: persistentvolumeclaims "modelcache-ml-team-qwen-3f1a2" is forbidden: User "system:serviceaccount:crossplane-system:provider-kubernetes" cannot get resource "persistentvolumeclaims"',
      'create failed: cannot create object: the server could not find the requested resource',
      'update failed: cannot patch object: PersistentVolumeClaim "x" is invalid: spec: Forbidden: spec is immutable after creation',
      'create failed: cannot create object: Internal error occurred: failed calling webhook "validate.kyverno.svc": failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/validate": dial tcp 10.96.0.12:443: connect: connection refused',
      'connect failed: cannot get credentials: cannot get credentials secret: Secret "cluster-a-kubeconfig" not found',
    ];
    for (const error of answered) {
      const rsp = await reconcile({ xr, secret: tokenSecret(), observed: { pvc: failing(pvc, error, T1) } });
      expect([error, reach(rsp), compositeStatus(rsp)['unreachable'], condition(rsp, 'ArtifactReady')?.reason, results(rsp)]).toEqual([
        error,
        ['STATUS_CONDITION_TRUE', 'Reachable'],
        undefined,
        'Staged',
        [],
      ]);
    }
  });

  it('never echoes a credential or the token from the error, and bounds what it quotes', async () => {
    const { ready, pvc } = await readyCluster();
    const xr = withStatusFrom(hydration(HF_AUTH), ready);
    const error = `observe failed: Get "https://admin:hunter2-secret@10.0.0.9:6443/api/v1/pvc?token=${TOKEN}": dial tcp 10.0.0.9:6443: connect: connection refused; Authorization: Bearer ${TOKEN_B64} ${'x'.repeat(2000)}`;
    const rsp = await reconcile({ xr, secret: tokenSecret(), observed: { pvc: failing(pvc, error, T1) } });
    const quoted = (compositeStatus(rsp)['unreachable'] as JsonObject)['error'] as string;
    expect(quoted.length).toBeLessThanOrEqual(256);
    expect(quoted).toContain('<redacted>');
    const text = JSON.stringify(rsp);
    for (const secret of ['hunter2', TOKEN, TOKEN_B64]) expect([secret, text.includes(secret)]).toEqual([secret, false]);
    expect((compositeStatus(rsp)['message'] as string).length).toBeLessThan(700);
  });
});
