// Lifecycle safety on the real control plane (issue 13): bounded retries that
// end in a latched failure, a retry asked for by a person, a Ready cluster
// that stays Ready while its InferenceCluster can't be read, a staged claim
// another team can't mount, and a ReadWriteOnce claim refused for several
// pods. Each step is asserted on what the API servers hold.
//
// The failed Job's TTL is the spacing between attempts (3, then 6 minutes);
// the kubelet stand-in's `expire-job` plays the TTL controller early, so the
// story takes a minute instead of ten. Everything else is real.

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, cacheNames, composedManifest, getIn, getString, hydrationName, isObject, type JsonObject } from '#lib';
import {
  clusterEntry,
  apply,
  condition,
  eventually,
  getObject,
  kubectl,
  kubectlOk,
  kubelet,
  list,
  setInferenceClusterStatus,
  engineDeployments,
  reasonOf,
  messageOf,
  standInPlane,
  modelCache as cacheManifest,
} from './plane.js';

const NAMESPACE = 'e2e-safety';
const OTHER_TEAM = 'e2e-safety-other';
const REMOTE = REMOTE_NAMESPACE;
const TIER = 'modelplane.ai/tier';
const SELECTOR = { [TIER]: 'e2e-safety' };
/** InferenceCluster -> the workload cluster of `make up` it stands for. */
const CLUSTERS = { 'safety-a': 'cluster-a', 'safety-b': 'cluster-b' } as const;

const flaky = cacheNames(NAMESPACE, 'flaky');
const child = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, 'flaky', 'safety-a'), NAMESPACE);
const artifactReason = (object: JsonObject | undefined): string | undefined => reasonOf(object, 'ArtifactReady');
const artifactMessage = (object: JsonObject | undefined): string => messageOf(object, 'ArtifactReady') ?? '';
const remoteJob = (): JsonObject | undefined => getObject('cluster-a', 'job', flaky.job, REMOTE);
const attemptOf = (job: JsonObject | undefined): string | undefined =>
  getString(job ?? {}, 'metadata', 'annotations', 'modelplane.ai/attempt');

function provision(name: keyof typeof CLUSTERS, status: JsonObject = {}): void {
  const full = { providerConfigRef: { name: CLUSTERS[name] }, cache: { storageClassName: 'modelplane-rwx' }, ...status };
  setInferenceClusterStatus(name, full);
}

const modelCache = (name: string, namespace: string, source: JsonObject): JsonObject => cacheManifest(namespace, name, source, SELECTOR);

function describeChild(): string {
  return JSON.stringify({ status: getIn(child(), 'status'), job: getIn(remoteJob(), 'metadata', 'annotations') });
}

/** Fail the current attempt's Job and wait until the cluster reports that failure. */
async function failAttempt(attempt: number): Promise<void> {
  await eventually(
    `attempt ${attempt}'s Job on cluster-a`,
    () => attemptOf(remoteJob()) === String(attempt) && getIn(remoteJob(), 'status', 'failed') === undefined,
    {
      describe: describeChild,
    },
  );
  kubelet('cluster-a', 'fail-job', flaky.job);
  await eventually(
    `the cluster Failed after attempt ${attempt}`,
    () => artifactReason(child()) === 'HydrationFailed' && getIn(child(), 'status', 'attempts') === attempt,
    {
      describe: describeChild,
    },
  );
}

describe.skipIf(!standInPlane('safety.e2e.ts'))('lifecycle safety on a real control plane', () => {
  afterAll(async () => {
    for (const namespace of [NAMESPACE, OTHER_TEAM]) {
      kubectl('control-plane', ['delete', 'modelreplicas,modelcaches', '--all', '-n', namespace, '--wait=false']);
    }
    await eventually('every XR gone', () =>
      [NAMESPACE, OTHER_TEAM].every((ns) =>
        ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, ns).length === 0),
      ),
    );
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, OTHER_TEAM, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', ...Object.keys(CLUSTERS), '--ignore-not-found']);
    kubectl('cluster-b', ['delete', 'pvc', 'rwo-weights', '-n', REMOTE, '--ignore-not-found']);
    for (const cluster of ['cluster-a', 'cluster-b'] as const) kubectl(cluster, ['delete', 'jobs', '--all', '-n', REMOTE]);
  });

  it("retries a failed download a bounded number of times, spaced by the failed Job's TTL, then stays Failed after the Job is gone", async () => {
    for (const namespace of [NAMESPACE, OTHER_TEAM])
      apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    for (const name of Object.keys(CLUSTERS) as (keyof typeof CLUSTERS)[]) {
      apply('control-plane', {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'InferenceCluster',
        metadata: { name, labels: SELECTOR },
        spec: {},
      });
      provision(name);
    }
    apply('control-plane', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hf-token', namespace: NAMESPACE },
      stringData: { HF_TOKEN: 'hf_e2e' },
    });
    // Only safety-a: the claim of the ownership step below is this one.
    kubectlOk('control-plane', ['label', 'inferencecluster', 'safety-b', `${TIER}=e2e-safety-later`, '--overwrite']);
    apply(
      'control-plane',
      modelCache('flaky', NAMESPACE, {
        source: 'HuggingFace',
        huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main', sizeGiB: 10, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } },
      }),
    );
    await eventually('the claim on cluster-a', () => getObject('cluster-a', 'pvc', flaky.pvc, REMOTE));
    kubelet('cluster-a', 'bind-claims');

    await failAttempt(1);
    expect(getIn(remoteJob(), 'spec', 'ttlSecondsAfterFinished')).toBe(180);
    kubelet('cluster-a', 'expire-job', flaky.job);
    await failAttempt(2);
    // The spacing grows: attempt 2's Job waits twice as long before attempt 3.
    expect(getIn(remoteJob(), 'spec', 'ttlSecondsAfterFinished')).toBe(360);
    kubelet('cluster-a', 'expire-job', flaky.job);
    await failAttempt(3);

    // Attempts spent: the Job is no longer desired. Once its TTL removes it, nothing creates it again.
    kubelet('cluster-a', 'expire-job', flaky.job);
    await eventually('the Job Object dropped', () =>
      list('control-plane', 'objects.kubernetes.m.crossplane.io', NAMESPACE).every((o) => getString(composedManifest(o), 'kind') !== 'Job'),
    );
    await sleep(15_000); // three provider polls, three XR polls
    expect(remoteJob(), 'a Job was created again after the last attempt').toBeUndefined();
    const latched = child()!;
    expect(getString(latched, 'status', 'phase')).toBe('Failed');
    expect(artifactReason(latched)).toBe('HydrationFailed');
    expect(getIn(latched, 'status', 'attempts')).toBe(3);
    expect(artifactMessage(latched)).toMatch(/BackoffLimitExceeded|backoff limit/);
    const cache = getObject('control-plane', 'modelcache', 'flaky', NAMESPACE);
    const entry = clusterEntry(cache, 'safety-a');
    expect(entry?.['phase']).toBe('Failed');
    expect(entry?.['attempts']).toBe(3);
  });

  it('starts a new round when a person sets modelplane.ai/retry on the ModelCache, and reaches Ready', async () => {
    kubectlOk('control-plane', [
      'annotate',
      'modelcache',
      'flaky',
      '-n',
      NAMESPACE,
      'modelplane.ai/retry=after-fixing-egress',
      '--overwrite',
    ]);
    await eventually(
      'a new Job on cluster-a',
      () => attemptOf(remoteJob()) === '1' && getIn(remoteJob(), 'status', 'failed') === undefined,
      { describe: describeChild },
    );
    kubelet('cluster-a', 'complete-job', flaky.job);
    await eventually('the cluster Ready', () => getString(child() ?? {}, 'status', 'phase') === 'Ready', { describe: describeChild });
  });

  it('keeps a Ready cluster Ready, mount and all, while its InferenceCluster cannot be read, and says so', async () => {
    const mount = getIn(child(), 'status', 'mount');
    expect(mount).toBeDefined();
    // The cluster loses its providerConfigRef for a while (its own composition is re-provisioning it).
    kubectlOk('control-plane', [
      'patch',
      'inferencecluster',
      'safety-a',
      '--subresource',
      'status',
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/status/providerConfigRef"}]',
    ]);
    const held = await eventually('the cluster Held', () => (artifactReason(child()) === 'Held' ? child() : undefined), {
      describe: describeChild,
    });
    expect(getString(held, 'status', 'phase')).toBe('Ready');
    expect(getIn(held, 'status', 'mount')).toEqual(mount);
    expect(artifactMessage(held)).toMatch(/to be provisioned/);
    provision('safety-a');
    await eventually('Staged again', () => artifactReason(child()) === 'Staged', { describe: describeChild });
    expect(getIn(child(), 'status', 'mount')).toEqual(mount);
  });

  it("refuses another team's cache that names this team's staged claim", async () => {
    const claim = getObject('cluster-a', 'pvc', flaky.pvc, REMOTE)!;
    expect(getString(claim, 'metadata', 'labels', 'modelplane.ai/namespace')).toBe(NAMESPACE);
    apply(
      'control-plane',
      modelCache('borrowed', OTHER_TEAM, { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: flaky.pvc } }),
    );
    const refused = await eventually('the other team refused', () => {
      const found = getObject('control-plane', 'modelcachehydration', hydrationName(OTHER_TEAM, 'borrowed', 'safety-a'), OTHER_TEAM);
      return artifactReason(found) === 'ClaimOwnedElsewhere' ? found : undefined;
    });
    expect(artifactMessage(refused)).toContain(NAMESPACE);
    expect(getIn(refused, 'status', 'mount')).toBeUndefined();
  });

  it('refuses several pods of one engine on a ReadWriteOnce claim (CacheNotShareable), and serves one', async () => {
    kubectlOk('control-plane', ['label', 'inferencecluster', 'safety-b', `${TIER}=e2e-safety`, '--overwrite']);
    apply('cluster-b', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'rwo-weights', namespace: REMOTE },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'platform-rwo' },
    });
    kubelet('cluster-b', 'bind-claims');
    apply(
      'control-plane',
      modelCache('rwo', NAMESPACE, { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'rwo-weights' } }),
    );
    await eventually('the RWO cache Ready on safety-b', () => {
      const cache = getObject('control-plane', 'modelcache', 'rwo', NAMESPACE);
      return asArray(getIn(cache, 'status', 'clusters'))
        .filter(isObject)
        .some((e) => e['name'] === 'safety-b' && e['phase'] === 'Ready');
    });
    const replica = (name: string, copies: number): JsonObject => ({
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelReplica',
      metadata: { name, namespace: NAMESPACE, labels: { 'modelplane.ai/deployment': name, 'modelplane.ai/cluster': 'safety-b' } },
      spec: {
        clusterName: 'safety-b',
        modelCacheRef: { name: 'rwo' },
        serving: { mode: 'Unified' },
        engines: [
          {
            name: 'main',
            copies,
            members: [
              {
                role: 'Standalone',
                nodePoolName: 'a100',
                deviceRequests: [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 1 }],
                template: {
                  spec: { containers: [{ name: 'engine', image: 'vllm/vllm-openai:v0.11.0', args: ['--model=$(MODELPLANE_MODEL)'] }] },
                },
              },
            ],
          },
        ],
      },
    });
    apply('control-plane', replica('rwo-four', 4), replica('rwo-one', 1));
    const refused = await eventually('four copies refused', () => {
      const found = getObject('control-plane', 'modelreplica', 'rwo-four', NAMESPACE);
      return getString(condition(found, 'ModelAccepted') ?? {}, 'reason') === 'CacheNotShareable' ? found : undefined;
    });
    expect(getString(condition(refused, 'ModelAccepted')!, 'message')).toMatch(/ReadWriteOnce/);
    const engines = (name: string): JsonObject[] => engineDeployments('cluster-b', name);
    await eventually('one copy served', () => engines('rwo-one').length === 1);
    expect(engines('rwo-four')).toEqual([]);
  });
});
