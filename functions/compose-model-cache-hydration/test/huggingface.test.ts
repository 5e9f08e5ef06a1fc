// HuggingFace: upstream's 14 cases (L-cache-t TestFunctionRunner.test_compose),
// ported to one cluster's child, then what the split adds. Upstream keyed
// everything per cluster (pvc-cluster-a, hydrate-cluster-a, auth-cluster-a);
// the child stages one cluster, so its keys are pvc, hydrate and auth.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Severity, type JsonObject } from '#lib';
import { RunFunctionRequest, RunFunctionResponse } from '#lib/sdk';
import { compositeStatus, condition, desiredResources, inferenceCluster, manifestOf, type TestResponse } from '#testing';
import { compose } from '../src/fn.js';
import {
  BOUND_CLAIM,
  CLUSTER_A,
  HF,
  HF_AUTH,
  HF_SOURCE,
  REPO,
  TOKEN,
  TOKEN_B64,
  hydration,
  jobRemote,
  observe,
  readiness,
  resolved,
  results,
  run,
  tokenSecret,
  type World,
} from './support.js';

const PVC = 'modelcache-ml-team-qwen-17db2';
const JOB = 'modelcache-ml-team-qwen-hydrate-256ec';
const AUTH = 'modelcache-ml-team-qwen-auth-ae01b';
/** The progress reporter's least-privilege access, composed with the Job. */
const REPORTER_KEYS = ['hydrate-account', 'hydrate-role', 'hydrate-binding'];
const REPORTER_UNSPECIFIED = Object.fromEntries(REPORTER_KEYS.map((key) => [key, 'READY_UNSPECIFIED']));
const REPORT_ENV = [
  { name: 'MODELPLANE_JOB', value: JOB },
  { name: 'MODELPLANE_NAMESPACE', value: 'default' },
];
const marker = (artifact: string) =>
  `/mnt/artifact/.modelplane-hub-hydrated-${createHash('sha256').update(artifact).digest('hex').slice(0, 12)}`;

/** What the function desires on a first pass for this spec (the objects a later pass observes). */
async function firstPass(spec: JsonObject, world: Partial<World> = {}): Promise<Record<string, JsonObject>> {
  return desiredResources(await run(resolved({ xr: hydration(spec), ...world })));
}

/** The first pass's PVC, Bound, and its Job in `state` (as a later reconcile observes them). */
function boundWithJob(first: Record<string, JsonObject>, state: 'running' | 'complete' | 'failed'): Record<string, JsonObject> {
  return { pvc: observe(first['pvc']!, BOUND_CLAIM), hydrate: observe(first['hydrate']!, jobRemote(state)) };
}

describe('upstream cases, ported to the child', () => {
  it('GKE cluster first pass composes RWX PVC and hydration Job', async () => {
    const rsp = await run(resolved({ xr: hydration(HF) }));
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['pvc', ...REPORTER_KEYS, 'hydrate']);
    expect(desired['pvc']).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { annotations: { 'crossplane.io/external-name': 'modelcache-ml-team-qwen-17db2' } },
      spec: {
        forProvider: {
          manifest: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: {
              name: PVC,
              namespace: 'default',
              labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'ml-team' },
              annotations: { 'modelplane.ai/owner-6f168f982eb9': 'ModelCache qwen in namespace ml-team' },
            },
            spec: { accessModes: ['ReadWriteMany'], storageClassName: 'modelplane-rwx', resources: { requests: { storage: '20Gi' } } },
          },
        },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
        readiness: { policy: 'DeriveFromCelQuery', celQuery: 'object.status.phase == "Bound"' },
      },
    });
    expect(desired['hydrate']).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { annotations: { 'crossplane.io/external-name': 'modelcache-ml-team-qwen-hydrate-256ec' } },
      spec: {
        forProvider: {
          manifest: {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: {
              name: JOB,
              namespace: 'default',
              labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'ml-team' },
              annotations: {
                'modelplane.ai/artifact': REPO,
                'modelplane.ai/attempt': '1',
                'modelplane.ai/owner-6f168f982eb9': 'ModelCache qwen in namespace ml-team',
              },
            },
            spec: {
              backoffLimit: 3,
              ttlSecondsAfterFinished: 180,
              template: {
                metadata: { labels: { 'modelplane.ai/modelcache': 'qwen' } },
                spec: {
                  serviceAccountName: JOB,
                  restartPolicy: 'OnFailure',
                  containers: [
                    {
                      name: 'hydrate',
                      // The Modelplane hydration image carries huggingface_hub and the script: nothing installed, nothing inlined.
                      image: 'xpkg.upbound.io/modelplane/hydration:v0.1.0',
                      command: [
                        'python3',
                        '/opt/modelplane/hydrate.py',
                        REPO,
                        '--size-gib=20',
                        '--marker=/mnt/artifact/.modelplane-hub-hydrated-fb68f5a6d13f',
                      ],
                      env: [{ name: 'HF_HUB_CACHE', value: '/mnt/artifact' }, ...REPORT_ENV],
                      volumeMounts: [{ name: 'artifact', mountPath: '/mnt/artifact' }],
                    },
                  ],
                  volumes: [{ name: 'artifact', persistentVolumeClaim: { claimName: PVC } }],
                },
              },
            },
          },
        },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
        readiness: {
          policy: 'DeriveFromCelQuery',
          celQuery: 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")',
        },
        managementPolicies: ['Observe', 'Create', 'Update', 'LateInitialize'],
      },
    });
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: `waiting for PVC ${PVC} on cluster-a to bind (it is not created yet)`,
      attempts: 1,
      attemptsFor: REPO,
      sizeGiB: 20,
    });
    expect(condition(rsp, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'Pending',
      message: `waiting for PVC ${PVC} on cluster-a to bind (it is not created yet)`,
    });
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B on cluster-a']]);
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
    expect(readiness(rsp)).toEqual({ pvc: 'READY_UNSPECIFIED', ...REPORTER_UNSPECIFIED, hydrate: 'READY_UNSPECIFIED' });
    expect(rsp.meta.ttl).toEqual({ seconds: 60, nanos: 0 });
    expect(rsp.requirements?.resources).toEqual({
      cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'cluster-a' },
    });
  });

  it('HuggingFace revision and auth secret wire --revision and HF_TOKEN', async () => {
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret() }));
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['pvc', ...REPORTER_KEYS, 'auth', 'hydrate']);
    expect(desired['auth']).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { annotations: { 'crossplane.io/external-name': 'modelcache-ml-team-qwen-auth-ae01b' } },
      spec: {
        forProvider: {
          manifest: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: {
              name: AUTH,
              namespace: 'default',
              labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'ml-team' },
              annotations: { 'modelplane.ai/owner-6f168f982eb9': 'ModelCache qwen in namespace ml-team' },
            },
            data: { HF_TOKEN: TOKEN_B64 },
          },
        },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
      },
    });
    const container = (manifestOf(desired['hydrate']) as { spec: { template: { spec: { containers: JsonObject[] } } } }).spec.template.spec
      .containers[0]!;
    expect((container['command'] as string[]).slice(0, 5)).toEqual([
      'python3',
      '/opt/modelplane/hydrate.py',
      'Qwen/Qwen3-0.6B',
      '--revision=main',
      '--size-gib=20',
    ]);
    expect(container['env']).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/artifact' },
      { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: AUTH, key: 'HF_TOKEN' } } },
      ...REPORT_ENV,
    ]);
    expect(rsp.requirements?.resources['auth-secret']).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      matchName: 'hf-token',
      namespace: 'ml-team',
    });
  });

  it('EKS cluster PVC sources the EFS class from status.cache', async () => {
    const eks = inferenceCluster('eks-a', { providerConfig: 'eks-a-pc', storageClassName: 'modelplane-rwx-efs' });
    const rsp = await run(resolved({ xr: hydration({ ...HF, clusterName: 'eks-a' }), cluster: eks }));
    const pvc = desiredResources(rsp)['pvc']!;
    expect((manifestOf(pvc)['spec'] as JsonObject)['storageClassName']).toBe('modelplane-rwx-efs');
    expect((pvc['spec'] as JsonObject)['providerConfigRef']).toEqual({ kind: 'ClusterProviderConfig', name: 'eks-a-pc' });
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B on eks-a']]);
  });

  it('PVC bound and Job complete reports Ready', async () => {
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({
        xr: hydration(HF),
        observed: boundWithJob(first, 'complete'),
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(readiness(rsp)).toEqual({ pvc: 'READY_TRUE' });
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Ready',
      mount: {
        volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: PVC } }],
        volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models' }],
        env: [
          { name: 'HF_HUB_CACHE', value: '/mnt/models' },
          { name: 'HF_HUB_OFFLINE', value: '1' },
          { name: 'MODELPLANE_MODEL', value: REPO },
          { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
        ],
      },
      staged: REPO,
      attempts: 1,
      attemptsFor: REPO,
      // The Job completed without the script's report (an earlier release's Job): nothing says it was checked.
      verified: false,
      sizeGiB: 20,
    });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', 'Qwen/Qwen3-0.6B is ready on cluster-a']]);
  });

  it('PVC bound but Job running reports Hydrating', async () => {
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({
        xr: hydration(HF),
        observed: boundWithJob(first, 'running'),
      }),
    );
    expect(readiness(rsp)).toEqual({ pvc: 'READY_TRUE', ...REPORTER_UNSPECIFIED, hydrate: 'READY_UNSPECIFIED' });
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Hydrating',
      message: `downloading Qwen/Qwen3-0.6B to PVC ${PVC} on cluster-a`,
      attempts: 1,
      attemptsFor: REPO,
      sizeGiB: 20,
    });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Hydrating');
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
    expect(results(rsp)).toEqual([]);
  });

  it('failed Job reports Failed and takes precedence over PVC binding', async () => {
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({
        xr: hydration(HF),
        observed: boundWithJob(first, 'failed'),
      }),
    );
    const message =
      `hydration Job ${JOB} on cluster-a failed (attempt 1 of 3): BackoffLimitExceeded: Job has reached the specified backoff limit; ` +
      'attempt 2 starts when Kubernetes removes the failed Job, 180s after it failed (delete it on the workload cluster to start now)';
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc', ...REPORTER_KEYS, 'hydrate']);
    expect(compositeStatus(rsp)).toEqual({ phase: 'Failed', message, attempts: 1, attemptsFor: REPO, sizeGiB: 20 });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message });
    expect(results(rsp)).toEqual([['SEVERITY_WARNING', message]]);
    expect(rsp.results[0]!.reason).toBe('HydrationFailed');
    // The Warning marks the transition: a child that was Failed already stays quiet.
    const again = await run(resolved({ xr: hydration(HF, compositeStatus(rsp)), observed: boundWithJob(first, 'failed') }));
    expect([compositeStatus(again)['phase'], results(again)]).toEqual(['Failed', []]);
  });

  it('one of two clusters ready reports partial: each child stands alone, on its own cluster', async () => {
    // The roll-up ("1/2", Partial) is the parent's; what the child owes it is an
    // answer about its own cluster only, on that cluster's provider config.
    const clusterB = inferenceCluster('cluster-b', { providerConfig: 'cluster-b-pc', storageClassName: 'modelplane-rwx' });
    const first = await firstPass(HF);
    const a = await run(
      resolved({
        xr: hydration(HF),
        observed: boundWithJob(first, 'complete'),
      }),
    );
    const b = await run(resolved({ xr: hydration({ ...HF, clusterName: 'cluster-b' }), cluster: clusterB }));
    expect([compositeStatus(a)['phase'], compositeStatus(b)['phase']]).toEqual(['Ready', 'Pending']);
    for (const object of Object.values(desiredResources(b))) {
      expect((object['spec'] as JsonObject)['providerConfigRef']).toEqual({ kind: 'ClusterProviderConfig', name: 'cluster-b-pc' });
    }
    // Same remote names on both clusters: they differ by where they live.
    expect(manifestOf(desiredResources(b)['pvc'])['metadata']).toMatchObject({ name: PVC });
  });

  it('hydrated cluster stays Ready after its Job is TTL-cleaned', async () => {
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({ xr: hydration(HF, { phase: 'Ready', staged: REPO }), observed: { pvc: observe(first['pvc']!, BOUND_CLAIM) } }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Staged');
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    expect(results(rsp)).toEqual([]); // already Ready: no event
  });

  it('a claim already there whose token is gone is kept, and the message says staging needs the token', async () => {
    const first = await firstPass(HF);
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret: null, observed: { pvc: observe(first['pvc']!, BOUND_CLAIM) } }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    const message = condition(rsp, 'ArtifactReady')?.message ?? '';
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('AuthSecretMissing');
    expect(message).toBe(
      "authSecret ml-team/hf-token is missing or has no key 'HF_TOKEN': nothing is downloaded without it, staged weights are kept (an upgrade from upstream v0.3.1 downloads once more: docs/migration.md)",
    );
  });

  it('authSecret unresolved requires it and returns early', async () => {
    const rsp = await run({ meta: { tag: 't' }, observed: { composite: hydration(HF_AUTH) } });
    expect(rsp.requirements?.resources).toEqual({
      cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'cluster-a' },
      'auth-secret': { apiVersion: 'v1', kind: 'Secret', matchName: 'hf-token', namespace: 'ml-team' },
    });
    expect(rsp.desired?.resources ?? {}).toEqual({});
    expect(rsp.desired?.composite).toBeUndefined();
    expect([rsp.results, rsp.conditions]).toEqual([[], []]);
    // The cluster alone is not enough: the Secret is still to come.
    const half = await run({
      meta: { tag: 't' },
      observed: { composite: hydration(HF_AUTH) },
      requiredResources: { cluster: { items: [{ resource: CLUSTER_A }] } },
    });
    expect(half.desired?.composite).toBeUndefined();
    expect(half.desired?.resources ?? {}).toEqual({});
  });

  it.each([
    ['authSecret resolved without the referenced key composes PVC and warns', tokenSecret({ OTHER: TOKEN_B64 })],
    ['authSecret resolved with an empty token value composes PVC and warns', tokenSecret({ HF_TOKEN: '' })],
    ['authSecret that does not exist composes PVC and warns', null],
  ])('%s', async (_name, secret) => {
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret }));
    const warning =
      "authSecret ml-team/hf-token is missing or has no key 'HF_TOKEN': nothing is downloaded without it, staged weights are kept (an upgrade from upstream v0.3.1 downloads once more: docs/migration.md)";
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message: warning, sizeGiB: 20 });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'AuthSecretMissing', message: warning });
    expect(results(rsp)).toEqual([
      ['SEVERITY_WARNING', warning],
      ['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B@main on cluster-a'],
    ]);
    expect(rsp.results[0]!.reason).toBe('AuthSecretMissing');
  });

  it('authSecret missing while the PVC is bound reports Hydrating with AuthSecretMissing, and the failed Job is not re-run', async () => {
    const first = await firstPass(HF_AUTH, { secret: tokenSecret() });
    const rsp = await run(
      resolved({
        xr: hydration(HF_AUTH),
        secret: tokenSecret({}),
        observed: boundWithJob(first, 'failed'),
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(compositeStatus(rsp)['phase']).toBe('Hydrating');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('AuthSecretMissing');
  });

  it('Ready cluster drops the auth Secret with the Job', async () => {
    const first = await firstPass(HF_AUTH, { secret: tokenSecret() });
    const rsp = await run(
      resolved({
        xr: hydration(HF_AUTH),
        secret: tokenSecret(),
        observed: {
          auth: observe(first['auth']!, { ready: true }),
          pvc: observe(first['pvc']!, BOUND_CLAIM),
          hydrate: observe(first['hydrate']!, jobRemote('complete')),
        },
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(readiness(rsp)).toEqual({ pvc: 'READY_TRUE' });
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Staged');
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', 'Qwen/Qwen3-0.6B@main is ready on cluster-a']]);
  });

  it('token rotated away after Ready keeps the PVC and stays Ready', async () => {
    const first = await firstPass(HF_AUTH, { secret: tokenSecret() });
    const rsp = await run(
      resolved({
        xr: hydration(HF_AUTH, { phase: 'Ready', staged: `${REPO}@main` }),
        secret: tokenSecret({}),
        observed: { pvc: observe(first['pvc']!, BOUND_CLAIM) },
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Staged');
    expect(results(rsp)).toEqual([]);
  });

  it('authSecret missing with no clusters reports the missing cluster, not AuthSecretMissing', async () => {
    // Upstream: no matched clusters → NoClusters, no warning. The child's
    // equivalent: its cluster is absent, so the cluster gate speaks first.
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), cluster: null, secret: null }));
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message: 'InferenceCluster cluster-a not found' });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('ClusterNotFound');
    expect(results(rsp)).toEqual([]);
    expect(desiredResources(rsp)).toEqual({});
  });
});

describe('what the split adds', () => {
  it('no storage class: Pending with the spec message, nothing composed, observed Objects kept', async () => {
    const noClass = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' });
    const first = await firstPass(HF);
    const observedPvc = observe(first['pvc']!, BOUND_CLAIM);
    const rsp = await run(resolved({ xr: hydration(HF), cluster: noClass, observed: { pvc: observedPvc } }));
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message: 'cluster cluster-a reports no ReadWriteMany StorageClass' });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('NoStorageClass');
    expect(desiredResources(rsp)).toEqual({ pvc: first['pvc'] });
    expect(readiness(rsp)).toEqual({ pvc: 'READY_TRUE' });
    expect(results(rsp)).toEqual([]);
  });

  it('PVC lost after Ready falls back to Pending and composes the Job again', async () => {
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({
        xr: hydration(HF, { phase: 'Ready', staged: REPO }),
        observed: { pvc: observe(first['pvc']!, { status: { phase: 'Lost' }, ready: false }) },
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc', ...REPORTER_KEYS, 'hydrate']);
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: `waiting for PVC ${PVC} on cluster-a to bind (it is Lost)`,
      attempts: 1,
      attemptsFor: REPO,
      sizeGiB: 20,
    });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('the Ready latch holds only for what was staged: a new repo or revision stages again', async () => {
    const first = await firstPass(HF);
    const pvc = observe(first['pvc']!, BOUND_CLAIM);
    const moved = { source: 'HuggingFace', huggingFace: { ...HF_SOURCE, revision: 'v2' } };
    const rsp = await run(resolved({ xr: hydration(moved, { phase: 'Ready', staged: REPO }), observed: { pvc } }));
    expect(compositeStatus(rsp)['phase']).toBe('Hydrating');
    const job = manifestOf(desiredResources(rsp)['hydrate']);
    expect(job['metadata']).toMatchObject({ annotations: { 'modelplane.ai/artifact': `${REPO}@v2` } });
    expect(JSON.stringify(job)).toContain(marker(`${REPO}@v2`));
    expect(marker(`${REPO}@v2`)).not.toBe(marker(REPO));
  });

  it('a Job left from an earlier artifact is never read as this one’s result', async () => {
    const first = await firstPass(HF);
    const moved = { source: 'HuggingFace', huggingFace: { ...HF_SOURCE, repo: 'Qwen/Qwen3-8B' } };
    for (const state of ['complete', 'failed'] as const) {
      const rsp = await run(
        resolved({
          xr: hydration(moved),
          observed: { pvc: observe(first['pvc']!, BOUND_CLAIM), hydrate: observe(first['hydrate']!, jobRemote(state)) },
        }),
      );
      expect(compositeStatus(rsp)).toEqual({
        phase: 'Hydrating',
        message: `waiting for the hydration Job ${JOB} on cluster-a, left from Qwen/Qwen3-0.6B, to finish and be removed (its TTL is 180s) before staging Qwen/Qwen3-8B`,
        sizeGiB: 20,
      });
    }
  });

  it('an upstream (flat-layout) Job without the artifact annotation is not this Job either', async () => {
    const first = await firstPass(HF);
    const legacy = structuredClone(first['hydrate']!);
    delete (manifestOf(legacy)['metadata'] as JsonObject)['annotations'];
    const rsp = await run(
      resolved({
        xr: hydration(HF),
        observed: { pvc: observe(first['pvc']!, BOUND_CLAIM), hydrate: observe(legacy, jobRemote('complete')) },
      }),
    );
    expect(compositeStatus(rsp)['phase']).toBe('Hydrating');
    expect(compositeStatus(rsp)['message']).toContain('left from an earlier release');
  });

  it('sizeGiB that arrives as a double is written as an integer quantity', async () => {
    const rsp = await run(resolved({ xr: hydration({ source: 'HuggingFace', huggingFace: { repo: REPO, sizeGiB: 1000 } }) }));
    expect(manifestOf(desiredResources(rsp)['pvc'])['spec']).toMatchObject({ resources: { requests: { storage: '1000Gi' } } });
  });
});

describe('the token', () => {
  // Every form the value could take in a response.
  const forms = [TOKEN_B64, TOKEN, Buffer.from(TOKEN).toString('hex')];

  /** Run the handler on the request as the server's codec builds it, and encode the response as it goes on the wire. */
  function encodedResponse(world: World): { response: RunFunctionResponse; bytes: Buffer } {
    const req = resolved(world);
    const sdkRequest = RunFunctionRequest.fromPartial({
      meta: req.meta,
      observed: {
        composite: { resource: req.observed?.composite?.resource },
        resources: Object.fromEntries(Object.entries(req.observed?.resources ?? {}).map(([k, v]) => [k, { resource: v.resource }])),
      },
      requiredResources: Object.fromEntries(
        Object.entries(req.requiredResources ?? {}).map(([k, v]) => [k, { items: v.items.map((i) => ({ resource: i.resource })) }]),
      ),
    });
    const response = compose(sdkRequest);
    return { response, bytes: Buffer.from(RunFunctionResponse.encode(response).finish()) };
  }

  function withoutSecretData(bytes: Buffer): Buffer {
    const copy = RunFunctionResponse.decode(bytes);
    const auth = copy.desired?.resources['auth']?.resource;
    if (auth) delete manifestOf(auth)['data'];
    return Buffer.from(RunFunctionResponse.encode(copy).finish());
  }

  it('appears in the auth Secret’s data and nowhere else in the encoded response, raw or decoded', async () => {
    const first = await firstPass(HF_AUTH, { secret: tokenSecret() });
    const worlds: World[] = [
      { xr: hydration(HF_AUTH), secret: tokenSecret() },
      {
        xr: hydration(HF_AUTH),
        secret: tokenSecret(),
        observed: boundWithJob(first, 'failed'),
      },
      // The cluster gate keeps the observed Secret as it is: still only in its data.
      { xr: hydration(HF_AUTH), secret: tokenSecret(), cluster: null, observed: { auth: observe(first['auth']!, { ready: true }) } },
    ];
    for (const world of worlds) {
      const { response, bytes } = encodedResponse(world);
      expect(response.results.filter((r) => r.severity === Severity.SEVERITY_FATAL)).toEqual([]);
      // It is there (so this test can fail)...
      expect(bytes.includes(TOKEN_B64)).toBe(true);
      // ...and only in the Secret's data.
      const rest = withoutSecretData(bytes);
      for (const form of forms) expect(rest.includes(form)).toBe(false);
    }
  });

  it('through the protocol too: nowhere in conditions, results, status or requirements', async () => {
    const rsp: TestResponse = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret({ OTHER: 'x', HF_TOKEN: TOKEN_B64 }) }));
    const text = JSON.stringify([rsp.conditions, rsp.results, compositeStatus(rsp), rsp.requirements]);
    for (const form of forms) expect(text).not.toContain(form);
  });
});
