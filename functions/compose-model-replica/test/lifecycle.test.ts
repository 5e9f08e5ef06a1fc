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
  expect(Object.keys(first.requirements?.resources ?? {}).sort()).toEqual(['cache', 'cluster', 'hydration']);
  return call({
    ...base,
    requiredResources: { cluster: { items: [{ resource: cluster() }] }, cache: { items: [{ resource: cache }] }, hydration: { items: [] } },
  });
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
      { name: 'HF_HUB_OFFLINE', value: '1' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
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

describe('a contract variable outside the allowlist is refused (InvalidCacheMount), naming it', () => {
  const hf = json(huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' }));

  it.each([
    ['LD_PRELOAD', '/mnt/models/libhook.so'],
    ['PYTHONPATH', '/mnt/models'],
  ])('%s into the model volume: no engine, a Warning', async (name, value) => {
    const mount = structuredClone(hf);
    (mount['env'] as JsonObject[]).push({ name, value });
    const rsp = await reconcile({ cache: 'qwen' }, modelCache('qwen', [entry('cluster-a', 'Ready', { mount })]));
    expect(workloads(rsp)).toEqual([]);
    const accepted = condition(rsp, 'ModelAccepted');
    expect(accepted).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'InvalidCacheMount' });
    expect(accepted?.message).toContain(
      `mount.env[4].name ${name} is not a variable a cache mount may set (only MODELPLANE_MODEL, MODELPLANE_MODEL_REVISION, HF_HUB_CACHE, HF_HUB_OFFLINE, MODELPLANE_WORKLOAD_NAMESPACE)`,
    );
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_WARNING', reason: 'InvalidCacheMount', message: accepted?.message }]);
  });

  it('a published variable with a value that would send the engine to the hub is refused too', async () => {
    const mount = structuredClone(hf);
    (mount['env'] as JsonObject[])[1] = { name: 'HF_HUB_OFFLINE', value: '0' };
    const rsp = await reconcile({ cache: 'qwen' }, modelCache('qwen', [entry('cluster-a', 'Ready', { mount })]));
    expect(workloads(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')?.message).toContain('mount.env[1].value of HF_HUB_OFFLINE must be "1"');
  });
});

describe('a ReadWriteOnce claim and several pods of a Standalone engine: refused, not left to hang on multi-attach', () => {
  const claim = json(claimMount({ claimName: 'qwen-weights' }));
  const rwo = (accessModes: string[]) => modelCache('qwen', [entry('cluster-a', 'Ready', { mount: claim, accessModes })]);

  it('copies: 4 on ReadWriteOnce is CacheNotShareable, with a Warning', async () => {
    const rsp = await reconcile({ cache: 'qwen', engines: [standaloneEngine('main', { args: ARGS, copies: 4 })] }, rwo(['ReadWriteOnce']));
    expect(workloads(rsp)).toEqual([]);
    const message =
      "engine main (4 copies) runs 4 pods, which may land on several nodes, but ModelCache qwen's claim on cluster-a allows ReadWriteOnce: " +
      'it must allow ReadWriteMany or ReadOnlyMany (use such a claim, or one engine with copies: 1)';
    expect(condition(rsp, 'ModelAccepted')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'CacheNotShareable', message });
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_WARNING', reason: 'CacheNotShareable', message }]);
  });

  it('two single-copy engines on one ReadWriteOnce claim are refused alike', async () => {
    const engines = [standaloneEngine('a', { args: ARGS }), standaloneEngine('b', { args: ARGS })];
    const rsp = await reconcile({ cache: 'qwen', engines }, rwo(['ReadWriteOnce']));
    expect(workloads(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')?.message).toMatch(/^engines a \(1 copy\), b \(1 copy\) run 2 pods, which may land/);
  });

  it.each<[string, string[], number]>([
    ['one copy on ReadWriteOnce', ['ReadWriteOnce'], 1],
    ['copies: 4 on ReadOnlyMany', ['ReadOnlyMany'], 4],
    ['copies: 4 on ReadWriteMany', ['ReadWriteMany'], 4],
  ])('%s is served', async (_name, accessModes, copies) => {
    const rsp = await reconcile({ cache: 'qwen', engines: [standaloneEngine('main', { args: ARGS, copies })] }, rwo(accessModes));
    expect(manifest(rsp, 'model-serving-main')['spec']).toMatchObject({ replicas: copies });
  });
});

describe('HuggingFace: the engine stays off the hub and reads the staged revision', () => {
  const hf = json(huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B', revision: 'a1b2c3d' }));
  const args = ['--model=$(MODELPLANE_MODEL)', '--revision=$(MODELPLANE_MODEL_REVISION)'];
  const cache = modelCache('qwen', [entry('cluster-a', 'Ready', { mount: hf })]);

  it('the contract’s HF_HUB_OFFLINE and revision reach the engine; args stay as written', async () => {
    const rsp = await reconcile({ cache: 'qwen', engines: [standaloneEngine('main', { args })] }, cache);
    const engine = engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template);
    expect(engine['env']).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'MODELPLANE_MODEL_REVISION', value: 'a1b2c3d' },
    ]);
    expect(engine['args']).toEqual(args);
  });

  it('a user who sets HF_HUB_OFFLINE too (as upstream’s examples do) keeps theirs, last, and the pod has it once', async () => {
    const user = [{ name: 'HF_HUB_OFFLINE', value: '1' }];
    const rsp = await reconcile({ cache: 'qwen', engines: [standaloneEngine('main', { args, env: user })] }, cache);
    const env = engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template)['env'] as JsonObject[];
    expect(env.map((e) => e['name'])).toEqual(['HF_HUB_CACHE', 'MODELPLANE_MODEL', 'MODELPLANE_MODEL_REVISION', 'HF_HUB_OFFLINE']);
    expect(env.at(-1)).toEqual({ name: 'HF_HUB_OFFLINE', value: '1' });
  });
});
