// The cache lifecycle through gRPC, against the built server as Crossplane
// runs it: a replica waits while its cache hydrates, composes its engines with
// the cache's contract (and the user's args exactly as written) once the
// entry is Ready, serves, and keeps serving if the cache flaps; a Failed entry
// fails it instead of leaving it waiting.

import { describe, expect, it } from 'vitest';
import { claimMount, huggingFaceMount, type CacheMount, type JsonObject } from '#lib';
import { condition, desiredResources, request, serveForFile, type TestRequest, type TestResponse } from '#testing';
import {
  LEADER_ENV,
  RANK_ENV,
  at,
  checkResponse,
  cluster,
  engineOf,
  entry,
  gangEngine,
  manifest,
  modelCache,
  observeAll,
  observedSet,
  podTemplates,
  replica,
  standaloneEngine,
  type ReplicaOptions,
} from './support.js';

const served = serveForFile('compose-model-replica');

async function call(req: TestRequest): Promise<TestResponse> {
  const rsp = await served.client.run(req);
  checkResponse(rsp);
  expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
  return rsp;
}

/** One reconcile as Crossplane runs it: first without required resources, then with them. */
async function reconcile(xr: ReplicaOptions, cache: JsonObject, observed: Record<string, JsonObject> = {}): Promise<TestResponse> {
  const base: TestRequest = request({ observed: { composite: replica(xr), resources: observedSet(observed) } });
  const first = await call(base);
  expect(desiredResources(first)).toEqual({});
  expect(Object.keys(first.requirements?.resources ?? {}).sort()).toEqual(['cache', 'cluster']);
  return call({ ...base, requiredResources: { cluster: { items: [{ resource: cluster() }] }, cache: { items: [{ resource: cache }] } } });
}

const ARGS = ['--model=$(MODELPLANE_MODEL)', '--max-model-len=32768'];
const json = (mount: CacheMount): JsonObject => structuredClone(mount) as unknown as JsonObject;
const workloads = (rsp: TestResponse) =>
  Object.keys(desiredResources(rsp)).filter((k) => k.startsWith('model-serving-') || k.startsWith('resource-claim-'));

describe('HuggingFace cache, native engine: Hydrating, then Ready, then serving', () => {
  const xr: ReplicaOptions = { cache: 'qwen', engines: [standaloneEngine('main', { args: ARGS })] };
  const hf = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });

  it('composes nothing while the entry hydrates, then the workload with the contract, then reports it serving', async () => {
    const hydrating = await reconcile(xr, modelCache('qwen', [entry('cluster-a', 'Hydrating', { message: 'Job running' })]));
    expect(workloads(hydrating)).toEqual([]);
    expect(Object.keys(desiredResources(hydrating))).toEqual(['model-cache-usage']);
    expect(condition(hydrating, 'ModelAccepted')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'Hydrating',
      message: 'waiting for ModelCache qwen on cluster-a: Hydrating (Job running)',
    });
    expect(hydrating.desired?.composite?.ready).toBe('READY_FALSE');

    const ready = await reconcile(xr, modelCache('qwen', [entry('cluster-a', 'Ready', { mount: json(hf) })]));
    const pod = podTemplates(manifest(ready, 'model-serving-main'))[0]!.template;
    expect(at(pod, 'spec', 'volumes')).toEqual([
      { name: 'dshm', emptyDir: { medium: 'Memory' } },
      { name: 'model-cache', persistentVolumeClaim: { claimName: 'modelcache-ml-team-qwen-17db2' } },
    ]);
    expect(engineOf(pod)['volumeMounts']).toEqual([
      { name: 'dshm', mountPath: '/dev/shm' },
      { name: 'model-cache', mountPath: '/mnt/models' },
    ]);
    expect(engineOf(pod)['env']).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
    ]);
    expect(engineOf(pod)['args']).toEqual(ARGS);
    expect(ready.results).toEqual([
      { severity: 'SEVERITY_NORMAL', reason: 'Composing', message: 'Composing vllm/vllm-openai:latest on cluster-a' },
    ]);
    expect(ready.desired?.composite).toBeUndefined();

    const observed = observeAll(ready);
    const serving = await reconcile(xr, modelCache('qwen', [entry('cluster-a', 'Ready', { mount: json(hf) })]), observed);
    expect(condition(serving, 'ModelReady')).toEqual({ status: 'STATUS_CONDITION_TRUE', reason: 'Serving' });
    expect(serving.results).toEqual([]);
    expect(Object.values(serving.desired?.resources ?? {}).every((r) => r.ready === 'READY_TRUE')).toBe(true);

    // The cache flaps back to Hydrating: what runs stays exactly as it is.
    const flapped = await reconcile(xr, modelCache('qwen', [entry('cluster-a', 'Hydrating')]), observed);
    expect(desiredResources(flapped)).toEqual(desiredResources(ready));
    expect(condition(flapped, 'ModelAccepted')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'Hydrating' });
    expect(flapped.desired?.composite?.ready).toBe('READY_FALSE');
  });
});

describe('a read-only claim, LeaderWorkerSet: the contract in the leader and the worker', () => {
  const xr: ReplicaOptions = {
    cache: 'kimi',
    engines: [
      gangEngine('main', { leader: { args: ARGS }, worker: { command: ['/bin/sh', '-c', 'exec join $(MODELPLANE_LEADER_ADDRESS)'] } }),
    ],
  };
  const claim = claimMount({ claimName: 'kimi-weights', subPath: 'kimi-k2' });

  it('waits while Pending, then shapes both templates, with a writable HOME', async () => {
    const pending = await reconcile(xr, modelCache('kimi', [entry('cluster-a', 'Pending', { message: 'claim kimi-weights is Pending' })]));
    expect(workloads(pending)).toEqual([]);
    expect(condition(pending, 'ModelAccepted')).toMatchObject({ reason: 'Hydrating' });

    const ready = await reconcile(
      xr,
      modelCache('kimi', [entry('cluster-a', 'Ready', { mount: json(claim), accessModes: ['ReadOnlyMany'] })]),
    );
    expect(workloads(ready).sort()).toEqual(['model-serving-main', 'resource-claim-main-leader', 'resource-claim-main-worker']);
    for (const { name, template } of podTemplates(manifest(ready, 'model-serving-main'))) {
      expect(at(template, 'spec', 'volumes'), name).toEqual([
        { name: 'dshm', emptyDir: { medium: 'Memory' } },
        { name: 'model-cache', persistentVolumeClaim: { claimName: 'kimi-weights', readOnly: true } },
        { name: 'modelplane-home', emptyDir: { sizeLimit: '20Gi' } },
      ]);
      expect(engineOf(template)['volumeMounts'], name).toEqual([
        { name: 'dshm', mountPath: '/dev/shm' },
        { name: 'model-cache', mountPath: '/mnt/models/kimi-k2', subPath: 'kimi-k2', readOnly: true },
        { name: 'modelplane-home', mountPath: '/modelplane-home' },
      ]);
      expect(engineOf(template)['env'], name).toEqual([
        { name: 'MODELPLANE_MODEL', value: '/mnt/models/kimi-k2' },
        LEADER_ENV,
        RANK_ENV,
        { name: 'HOME', value: '/modelplane-home' },
      ]);
    }
    const [leader, worker] = podTemplates(manifest(ready, 'model-serving-main'));
    expect(engineOf(leader!.template)['args']).toEqual(ARGS);
    expect(engineOf(worker!.template)).not.toHaveProperty('args');
    expect(engineOf(worker!.template)['command']).toEqual(['/bin/sh', '-c', 'exec join $(MODELPLANE_LEADER_ADDRESS)']);
  });

  it('refuses a ReadWriteOnce claim for the multi-node gang', async () => {
    const rsp = await reconcile(
      xr,
      modelCache('kimi', [entry('cluster-a', 'Ready', { mount: json(claim), accessModes: ['ReadWriteOnce'] })]),
    );
    expect(workloads(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ reason: 'CacheNotShareable' });
  });
});

describe('a Failed entry fails the replica instead of waiting', () => {
  it('with the entry’s message and a Warning', async () => {
    const message = 'hydration Job failed: BackoffLimitExceeded';
    const rsp = await reconcile({ cache: 'qwen' }, modelCache('qwen', [entry('cluster-a', 'Failed', { message })]));
    expect(workloads(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message });
    expect(condition(rsp, 'ModelReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message });
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_WARNING', reason: 'HydrationFailed', message }]);
  });
});
