// Lifecycles through gRPC against the built server (functions/compose-model-cache/dist/main.js):
// each request observes what the last response asked for, and the XR carries
// the status and conditions Crossplane wrote back from it. A ModelCache on each
// source switching a cluster from Pending to Ready; three clusters staged one
// by one to 3/3; a cluster failing and recovering.

import { describe, expect, it } from 'vitest';
import { cacheNames, childName, claimMount, huggingFaceMount, ociImageMount, ociModelArtifactMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, request, serveForFile, type TestResponse } from '#testing';
import { CACHE, CLAIM_SPEC, NAMESPACE, OCI_SPEC, cacheXr, cluster, expectWellFormed, summaryOf, type ChildReport } from './fixtures.js';
import { lifecycle, type Step } from './fleet.js';

const served = serveForFile('compose-model-cache');

/** Run a lifecycle: the requirements call, then one reconcile of both levels per step (fleet.ts). */
async function run(spec: JsonObject, steps: Step[]): Promise<TestResponse[]> {
  const xr = cacheXr(spec);
  const first = await served.client.run(request({ observed: { composite: xr } }));
  expect(Object.keys(first.requirements?.resources ?? {})).toEqual(['clusters', 'replicas']);
  expect(first.desired?.resources).toEqual({});
  const fleets = await lifecycle(served.client, xr, steps);
  for (const fleet of fleets) {
    for (const rsp of [fleet.cache, ...Object.values(fleet.shards)]) {
      expectWellFormed(rsp);
      expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    }
  }
  return fleets.map((fleet) => fleet.merged);
}

const digest = `sha256:${'c'.repeat(64)}`;
const OCI_REF = `us-docker.pkg.dev/acme/models/qwen@${digest}`;
const SOURCES: [string, JsonObject, ChildReport, ChildReport, string][] = [
  [
    'HuggingFace',
    {},
    { phase: 'Hydrating', message: 'hydration Job modelcache-ml-team-qwen-hydrate-256ec is running', reason: 'Hydrating' },
    { phase: 'Ready', mount: toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' })) },
    'Qwen/Qwen3-0.6B',
  ],
  [
    'OCI image',
    OCI_SPEC,
    { phase: 'Pending', message: 'resolving us-docker.pkg.dev/acme/models/qwen:v1 on cluster-a', reason: 'Pending' },
    {
      phase: 'Ready',
      mount: toJson(ociImageMount({ reference: OCI_REF, imagePullSecrets: ['regcred'] })),
      digest,
      artifactKind: 'Image',
    },
    'us-docker.pkg.dev/acme/models/qwen:v1',
  ],
  [
    'OCI model artifact',
    OCI_SPEC,
    { phase: 'Pending', message: 'resolving us-docker.pkg.dev/acme/models/qwen:v1 on cluster-a', reason: 'Pending' },
    {
      phase: 'Ready',
      mount: toJson(ociModelArtifactMount({ reference: OCI_REF, subPath: 'weights' })),
      digest,
      artifactKind: 'ModelArtifact',
    },
    'us-docker.pkg.dev/acme/models/qwen:v1',
  ],
  [
    'PersistentVolumeClaim',
    CLAIM_SPEC,
    { phase: 'Pending', message: 'claim qwen-weights not found in namespace default on cluster-a', reason: 'Pending' },
    { phase: 'Ready', mount: toJson(claimMount({ claimName: 'qwen-weights' })), accessModes: ['ReadOnlyMany'] },
    'qwen-weights',
  ],
];

describe('compose-model-cache over gRPC: a cluster switching from Pending to Ready', () => {
  it.each(SOURCES)('%s', async (_source, spec, pending, ready, artifact) => {
    const clusters = [cluster('cluster-a')];
    const [stamped, waiting, staged, steady] = await run(spec, [
      { clusters },
      { clusters, reports: { 'cluster-a': pending } },
      { clusters, reports: { 'cluster-a': { ...ready, reason: 'Staged' } } },
      { clusters, reports: { 'cluster-a': { ...ready, reason: 'Staged' } } },
    ]);

    expect(Object.keys(desiredResources(stamped!))).toEqual(['hydration-cluster-a']);
    expect(stamped!.results.map((r) => r.message)).toEqual([`Staging ${artifact} to 1 clusters: cluster-a`]);

    expect(compositeStatus(waiting!)).toEqual({
      summary: summaryOf('0/1', pending.phase === 'Hydrating' ? { hydrating: 1 } : { pending: 1 }),
      clusters: [{ name: 'cluster-a', phase: pending.phase, message: pending.message }],
    });
    expect(waiting!.desired?.resources['hydration-cluster-a']?.ready).toBe('READY_UNSPECIFIED');
    expect(waiting!.desired?.composite?.ready).toBe('READY_FALSE');
    expect(waiting!.results).toEqual([]);

    // Ready: the child's contract, copied unchanged, with its consumer facts.
    expect(compositeStatus(staged!)).toEqual({ summary: summaryOf('1/1'), clusters: [{ name: 'cluster-a', ...ready }] });
    expect(staged!.desired?.resources['hydration-cluster-a']?.ready).toBe('READY_TRUE');
    expect(staged!.desired?.composite?.ready).toBe('READY_TRUE');
    expect(condition(staged!, 'ArtifactReady')).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
    expect(staged!.results.map((r) => r.message)).toEqual(['Artifact staged on all 1 clusters']);

    // And it stays so, quietly.
    expect(compositeStatus(steady!)).toEqual(compositeStatus(staged!));
    expect(steady!.results).toEqual([]);
  });
});

describe('compose-model-cache over gRPC: three clusters', () => {
  const clusters = ['us-east', 'eu-west', 'ap-south'].map((name) => cluster(name));
  const mount = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
  const hydrating: ChildReport = { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' };
  const ready: ChildReport = { phase: 'Ready', mount, reason: 'Staged' };

  it('stages one child per cluster and rolls up 0/3, 1/3 Partial, 3/3 Staged and ready', async () => {
    const [first, partial, staged] = await run({}, [
      { clusters },
      { clusters, reports: { 'us-east': hydrating, 'eu-west': ready, 'ap-south': hydrating } },
      { clusters, reports: { 'us-east': ready, 'eu-west': ready, 'ap-south': ready } },
    ]);
    expect(Object.values(desiredResources(first!)).map((c) => (c['metadata'] as JsonObject)['name'])).toEqual(
      ['ap-south', 'eu-west', 'us-east'].map((name) => childName('modelcache', NAMESPACE, CACHE, name)),
    );
    expect(compositeStatus(first!)['summary']).toEqual(summaryOf('0/3', { pending: 3 }));

    expect(compositeStatus(partial!)['summary']).toEqual(summaryOf('1/3', { hydrating: 2 }));
    expect(condition(partial!, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'Partial',
      message: '1/3 clusters ready; waiting for ap-south (Hydrating), us-east (Hydrating)',
    });

    expect(compositeStatus(staged!)['summary']).toEqual(summaryOf('3/3'));
    expect(condition(staged!, 'ArtifactReady')).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
    expect(staged!.desired?.composite?.ready).toBe('READY_TRUE');
    expect(staged!.results.map((r) => r.message)).toEqual(['Artifact staged on all 3 clusters']);
  });

  it('surfaces a failed hydration on one cluster, warns once, and recovers when the child does', async () => {
    const failed: ChildReport = {
      phase: 'Failed',
      message: 'hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
      reason: 'HydrationFailed',
    };
    const [, broken, stillBroken, recovered] = await run({}, [
      { clusters },
      { clusters, reports: { 'us-east': ready, 'eu-west': failed, 'ap-south': ready } },
      { clusters, reports: { 'us-east': ready, 'eu-west': failed, 'ap-south': ready } },
      { clusters, reports: { 'us-east': ready, 'eu-west': ready, 'ap-south': ready } },
    ]);
    expect(condition(broken!, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'HydrationFailed',
      message: 'eu-west: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
    });
    expect(broken!.results).toEqual([
      {
        severity: 'SEVERITY_WARNING',
        reason: 'HydrationFailed',
        message: 'Staging failed on eu-west: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
      },
    ]);
    expect(broken!.desired?.composite?.ready).toBe('READY_FALSE');
    expect(stillBroken!.results).toEqual([]); // a transition warns once
    expect(condition(recovered!, 'ArtifactReady')).toMatchObject({ reason: 'Staged' });
    expect(recovered!.results.map((r) => r.message)).toEqual(['Artifact staged on all 3 clusters']);
  });
});
