// Upstream's backend goldens and behaviours (tests/test_backends.py), through
// the protocol: a Standalone engine becomes a Deployment, a Leader + Worker
// engine a LeaderWorkerSet, each claiming member a DRA ResourceClaimTemplate.
// Upstream v0.3.1's `--model` injection cases are ported inverted: the user's
// args pass through unchanged, with or without a cache.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { desiredResources, manifestOf, type TestResponse } from '#testing';
import {
  GPU_CEL,
  GPU_TOLERATION,
  IMAGE,
  LEADER_ENV,
  RANK_ENV,
  AVAILABLE_CEL,
  at,
  cluster,
  engineOf,
  entry,
  gangEngine,
  gpuRequest,
  manifest,
  modelCache,
  replica,
  observeAll,
  remoteMeta,
  requestFor,
  run,
  standaloneEngine,
  underUpstreamNames,
  type ReplicaOptions,
} from './support.js';
import { claimMount, huggingFaceMount, type JsonObject as Json } from '#lib';

// This release's names for replica r of ml-team (upstream's, r-main-bb4e3 and r-main-<role>-devices-…, only
// for what already runs under them: the names tests below).
const WORKLOAD = 'r-main-f698c';
const SERVING = 'r-49ee1';
const claimName = (role: string) =>
  ({ standalone: 'r-main-standalone-devices-aca97', leader: 'r-main-leader-devices-f84ce', worker: 'r-main-worker-devices-d078f' })[role];

/**
 * Compose a replica once, then again observing everything it composed under
 * upstream's names, as the release before this one left it.
 */
async function upgraded(options: ReplicaOptions): Promise<TestResponse> {
  const first = await compose(options);
  return run(
    requestFor({
      xr: replica({ name: 'r', ...options }),
      cluster: cluster(),
      observed: underUpstreamNames(observeAll(first), options.name ?? 'r'),
    }),
  );
}

/** Compose replica `r` (upstream's backend fixture) on a provisioned cluster-a. */
function compose(options: ReplicaOptions = {}, cache?: JsonObject): Promise<TestResponse> {
  return run(requestFor({ xr: replica({ name: 'r', ...options }), cluster: cluster(), ...(cache ? { cache } : {}) }));
}

function claimTemplate(count: number, role: string): JsonObject {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: remoteMeta(claimName(role)!),
    spec: {
      spec: {
        devices: {
          requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', count, selectors: [{ cel: { expression: GPU_CEL } }] } }],
        },
      },
    },
  };
}

const PROBE = { httpGet: { path: '/health', port: 8000 }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5 };

const NATIVE_WANT: Record<string, JsonObject> = {
  'model-serving-main': {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: remoteMeta(WORKLOAD),
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'modelplane.ai/workload': WORKLOAD } },
      template: {
        metadata: { labels: { 'modelplane.ai/serving': SERVING, 'modelplane.ai/workload': WORKLOAD } },
        spec: {
          containers: [
            {
              name: 'engine',
              image: IMAGE,
              args: ['--model=Qwen/Qwen3-0.6B'],
              ports: [{ containerPort: 8000 }],
              resources: { claims: [{ name: 'devices' }] },
              volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }],
              readinessProbe: PROBE,
            },
          ],
          volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory' } }],
          nodeSelector: { 'modelplane.ai/pool': 'frontier' },
          resourceClaims: [{ name: 'devices', resourceClaimTemplateName: claimName('standalone')! }],
          tolerations: [GPU_TOLERATION],
        },
      },
    },
  },
  'resource-claim-main-standalone': claimTemplate(1, 'standalone'),
};

const LEADER_CMD = [
  '/bin/sh',
  '-c',
  'ray start --head --port=6379; exec vllm serve --model=meta-llama/Llama-3.1-405B --tensor-parallel-size=8 --pipeline-parallel-size=2 --port=8000',
];
const WORKER_CMD = ['/bin/sh', '-c', 'exec ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379 --block'];

function gangContainer(serving: boolean, command: string[]): JsonObject {
  const c: JsonObject = {
    name: 'engine',
    image: IMAGE,
    resources: { claims: [{ name: 'devices' }] },
    volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }],
    command,
    env: [LEADER_ENV, RANK_ENV],
  };
  if (serving) {
    c['ports'] = [{ containerPort: 8000 }];
    c['readinessProbe'] = PROBE;
  }
  return c;
}

function gangPod(container: JsonObject, role: string): JsonObject {
  return {
    containers: [container],
    volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory' } }],
    nodeSelector: { 'modelplane.ai/pool': 'frontier' },
    resourceClaims: [{ name: 'devices', resourceClaimTemplateName: claimName(role)! }],
    tolerations: [GPU_TOLERATION],
  };
}

const LLMD_WANT: Record<string, JsonObject> = {
  'model-serving-main': {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: remoteMeta(WORKLOAD),
    spec: {
      replicas: 1,
      leaderWorkerTemplate: {
        size: 2,
        leaderTemplate: {
          metadata: { labels: { 'modelplane.ai/serving': SERVING, 'modelplane.ai/lws-role': 'leader' } },
          spec: gangPod(gangContainer(true, LEADER_CMD), 'leader'),
        },
        workerTemplate: { spec: gangPod(gangContainer(false, WORKER_CMD), 'worker') },
      },
    },
  },
  'resource-claim-main-leader': claimTemplate(8, 'leader'),
  'resource-claim-main-worker': claimTemplate(8, 'worker'),
};

const GANG = gangEngine('main', { leader: { command: LEADER_CMD }, worker: { command: WORKER_CMD } });

/** The workload and claim manifests of a response (the routing is routing.test.ts's). */
function backendManifests(rsp: TestResponse): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(desiredResources(rsp))) {
    if (key.startsWith('model-serving-') || key.startsWith('resource-claim-')) out[key] = manifestOf(object);
  }
  return out;
}

const lwsTemplate = (rsp: TestResponse, role: 'leaderTemplate' | 'workerTemplate') =>
  at(manifest(rsp, 'model-serving-main'), 'spec', 'leaderWorkerTemplate', role) as JsonObject;

describe('backend manifests', () => {
  it.each([
    ['native Standalone engine composes a Deployment', standaloneEngine('main'), NATIVE_WANT],
    ['llm-d Leader/Worker engine composes a LeaderWorkerSet, commands verbatim', GANG, LLMD_WANT],
  ])('%s', async (_name, engine, want) => {
    expect(backendManifests(await compose({ engines: [engine] }))).toEqual(want);
  });

  it('sizes a LeaderWorkerSet from the worker nodes and the copies (nodes 3, copies 2: size 4, replicas 2)', async () => {
    const rsp = await compose({ engines: [gangEngine('main', { copies: 2, worker: { nodes: 3 } })] });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'replicas')).toBe(2);
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'leaderWorkerTemplate', 'size')).toBe(4);
  });

  it('native copies become Deployment replicas', async () => {
    const rsp = await compose({ engines: [standaloneEngine('main', { copies: 3 })] });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'replicas')).toBe(3);
  });
});

describe('env', () => {
  it('leader address and rank are injected into gang engines, first', async () => {
    const rsp = await compose({ engines: [GANG] });
    for (const role of ['leaderTemplate', 'workerTemplate'] as const) {
      expect((engineOf(lwsTemplate(rsp, role))['env'] as JsonObject[]).slice(0, 2)).toEqual([LEADER_ENV, RANK_ENV]);
    }
  });

  it('user env preserved after injected env', async () => {
    const engine = gangEngine('main', {
      leader: { command: LEADER_CMD, env: [{ name: 'HF_TOKEN', value: 'x' }] },
      worker: { command: WORKER_CMD },
    });
    const rsp = await compose({ engines: [engine] });
    expect(engineOf(lwsTemplate(rsp, 'leaderTemplate'))['env']).toEqual([LEADER_ENV, RANK_ENV, { name: 'HF_TOKEN', value: 'x' }]);
  });

  it('fieldRef env passes through', async () => {
    const env = [
      { name: 'VLLM_HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf', key: 'token', optional: true } } },
      { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
    ];
    const native = await compose({ engines: [standaloneEngine('main', { env })] });
    expect(engineOf(at(manifest(native, 'model-serving-main'), 'spec', 'template') as JsonObject)['env']).toEqual(env);
    const gang = await compose({ engines: [gangEngine('main', { worker: { env } })] });
    expect(engineOf(lwsTemplate(gang, 'workerTemplate'))['env']).toEqual([LEADER_ENV, RANK_ENV, ...env]);
  });

  it('a native engine without env composes no env key', async () => {
    const rsp = await compose();
    expect(engineOf(at(manifest(rsp, 'model-serving-main'), 'spec', 'template') as JsonObject)).not.toHaveProperty('env');
  });
});

describe('pod metadata', () => {
  it('member metadata propagates to the native pod template', async () => {
    const engine = standaloneEngine('main', {
      labels: { 'example.com/role': 'standalone' },
      annotations: { 'example.com/config': 'standalone' },
    });
    const meta = at(manifest(await compose({ engines: [engine] }), 'model-serving-main'), 'spec', 'template', 'metadata');
    expect(meta).toEqual({
      labels: { 'example.com/role': 'standalone', 'modelplane.ai/serving': SERVING, 'modelplane.ai/workload': WORKLOAD },
      annotations: { 'example.com/config': 'standalone' },
    });
  });

  it('member metadata propagates to the LWS templates independently', async () => {
    const engine = gangEngine('main', {
      leader: { labels: { 'example.com/role': 'leader' }, annotations: { 'example.com/config': 'leader' } },
      worker: { labels: { 'example.com/role': 'worker' }, annotations: { 'example.com/config': 'worker' } },
    });
    const rsp = await compose({ engines: [engine] });
    expect(lwsTemplate(rsp, 'leaderTemplate')['metadata']).toEqual({
      labels: { 'example.com/role': 'leader', 'modelplane.ai/serving': SERVING, 'modelplane.ai/lws-role': 'leader' },
      annotations: { 'example.com/config': 'leader' },
    });
    expect(lwsTemplate(rsp, 'workerTemplate')['metadata']).toEqual({
      labels: { 'example.com/role': 'worker' },
      annotations: { 'example.com/config': 'worker' },
    });
  });

  // Found by the hardening fuzzer: these passed straight into the pod template, which Kubernetes then refused.
  it.each<[string, { labels?: Record<string, string>; annotations?: Record<string, string> }, string]>([
    [
      'a label key with a space',
      { labels: { 'bad key': 'v' } },
      'spec.engines[0].members[0].template.metadata.labels.bad key must be a valid Kubernetes label key',
    ],
    [
      'a label value with a "!"',
      { labels: { team: 'bad!' } },
      'spec.engines[0].members[0].template.metadata.labels.team must be a Kubernetes label value',
    ],
    [
      'a label under the reserved prefix',
      { labels: { 'modelplane.ai/serving': 'hijack' } },
      'spec.engines[0].members[0].template.metadata.labels.modelplane.ai/serving must not use the reserved modelplane.ai/ prefix',
    ],
    [
      'an annotation key whose prefix is no DNS subdomain',
      { annotations: { 'Not_A.Domain/key': 'v' } },
      'spec.engines[0].members[0].template.metadata.annotations.Not_A.Domain/key must be a valid Kubernetes annotation key',
    ],
    [
      'an annotation value over 8192 characters',
      { annotations: { 'example.com/big': 'x'.repeat(8193) } },
      'spec.engines[0].members[0].template.metadata.annotations.example.com/big must be at most 8192 characters',
    ],
  ])('refuses %s, as the XRD does, with a Fatal result naming it', async (_case, metadata, message) => {
    const rsp = await compose({ engines: [standaloneEngine('main', metadata)] });
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
  });

  it('worker without metadata composes none', async () => {
    expect(lwsTemplate(await compose({ engines: [GANG] }), 'workerTemplate')).not.toHaveProperty('metadata');
  });
});

describe('names', () => {
  const names = (rsp: TestResponse): Set<string> =>
    new Set(Object.values(backendManifests(rsp)).map((m) => (m['metadata'] as JsonObject)['name'] as string));

  it('co-located replicas get distinct names', async () => {
    const a = names(await compose({ name: 'dep-clustera' }));
    const b = names(await compose({ name: 'dep-clusterb' }));
    expect([...a].filter((n) => b.has(n))).toEqual([]);
  });

  it('multi engine qualifies workload names', async () => {
    const rsp = await compose({ engines: [standaloneEngine('prefill'), standaloneEngine('decode')] });
    expect(names(rsp).size).toBe(4); // two Deployments and two claim templates
    expect(Object.keys(backendManifests(rsp)).sort()).toEqual([
      'model-serving-decode',
      'model-serving-prefill',
      'resource-claim-decode-standalone',
      'resource-claim-prefill-standalone',
    ]);
  });

  it.each([
    ['Deployment / LWS name, and the workload label', 'model-serving-main', ['metadata', 'name'], 'qwen-0-main-7c37f'],
    ['RCT of a Standalone member', 'resource-claim-main-standalone', ['metadata', 'name'], 'qwen-0-main-standalone-devices-506cb'],
    ['HTTPRoute', 'model-route', ['metadata', 'name'], 'qwen-0'],
    ['route path', 'model-route', ['spec', 'rules', 0, 'matches', 0, 'path', 'value'], '/ml-team/qwen-0/'],
    ['InferencePool', 'inference-pool', ['metadata', 'name'], 'qwen-0-pool'],
    ['endpoint picker', 'epp', ['metadata', 'name'], 'qwen-0-epp'],
  ])('upstream names for replica qwen-0, kept by a replica that runs under them: %s', async (_what, key, path, want) => {
    const rsp = await upgraded({ name: 'qwen-0' });
    expect(at(manifest(rsp, key), ...path)).toBe(want);
  });

  it('upstream names for a gang of replica qwen-0, kept by a replica that runs under them', async () => {
    const rsp = await upgraded({ name: 'qwen-0', engines: [GANG] });
    expect(at(manifest(rsp, 'resource-claim-main-leader'), 'metadata', 'name')).toBe('qwen-0-main-leader-devices-08577');
    expect(at(manifest(rsp, 'resource-claim-main-worker'), 'metadata', 'name')).toBe('qwen-0-main-worker-devices-69951');
    expect(at(manifest(rsp, 'model-serving-main'), 'metadata', 'name')).toBe('qwen-0-main-7c37f');
  });

  it.each([
    ['Deployment / LWS name', 'model-serving-main', 'qwen-0-main-4a818'],
    ['RCT of a Standalone member', 'resource-claim-main-standalone', 'qwen-0-main-standalone-devices-6af94'],
    ['HTTPRoute', 'model-route', 'qwen-0-a0ebc'],
    ['InferencePool', 'inference-pool', 'qwen-0-pool-7efa6'],
    ['endpoint picker', 'epp', 'qwen-0-epp-b67c2'],
  ])('a new replica qwen-0 gets names that carry its namespace: %s', async (_what, key, want) => {
    expect(at(manifest(await compose({ name: 'qwen-0' }), key), 'metadata', 'name')).toBe(want);
  });
});

describe('readiness policies and claims', () => {
  it.each([
    ['native', standaloneEngine('main')],
    ['llm-d', GANG],
  ])('workload readiness policies: %s', async (_name, engine) => {
    const desired = desiredResources(await compose({ engines: [engine] }));
    expect(at(desired['model-serving-main'], 'spec', 'readiness')).toEqual({ policy: 'DeriveFromCelQuery', celQuery: AVAILABLE_CEL });
    const claims = Object.keys(desired).filter((k) => k.startsWith('resource-claim'));
    expect(claims.length).toBeGreaterThan(0);
    for (const key of claims) expect(at(desired[key], 'spec', 'readiness')).toEqual({ policy: 'SuccessfulCreate' });
  });

  it('multiple device requests single container claim', async () => {
    const requests = [
      { name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 8 },
      { name: 'nic', deviceClassName: 'nic.nvidia.com', count: 8 },
    ];
    const rsp = await compose({ engines: [standaloneEngine('main', { deviceRequests: requests })] });
    const pod = at(manifest(rsp, 'model-serving-main'), 'spec', 'template', 'spec') as JsonObject;
    expect(at(pod, 'containers', 0, 'resources', 'claims')).toEqual([{ name: 'devices' }]);
    expect(at(pod, 'resourceClaims', 0, 'name')).toBe('devices');
    expect(at(manifest(rsp, 'resource-claim-main-standalone'), 'spec', 'spec', 'devices', 'requests')).toEqual([
      { name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', count: 8 } },
      { name: 'nic', exactly: { deviceClassName: 'nic.nvidia.com', count: 8 } },
    ]);
  });

  it('claimless leader gets no claim', async () => {
    const engine = gangEngine('main', { leader: { command: LEADER_CMD, deviceRequests: null }, worker: { command: WORKER_CMD } });
    const rsp = await compose({ engines: [engine] });
    const desired = desiredResources(rsp);
    expect(desired).not.toHaveProperty('resource-claim-main-leader');
    expect(desired).toHaveProperty('resource-claim-main-worker');
    const leader = lwsTemplate(rsp, 'leaderTemplate')['spec'] as JsonObject;
    expect(leader).not.toHaveProperty('resourceClaims');
    expect(leader['containers'] as JsonObject[]).toHaveLength(1);
    expect(engineOf(lwsTemplate(rsp, 'leaderTemplate'))).not.toHaveProperty('resources');
    expect(leader['nodeSelector']).toEqual({ 'modelplane.ai/pool': 'frontier' });
    expect(leader['tolerations']).toEqual([GPU_TOLERATION]);
    const worker = lwsTemplate(rsp, 'workerTemplate')['spec'] as JsonObject;
    expect(worker['resourceClaims']).toEqual([{ name: 'devices', resourceClaimTemplateName: claimName('worker') }]);
    expect(engineOf(lwsTemplate(rsp, 'workerTemplate'))['resources']).toEqual({ claims: [{ name: 'devices' }] });
  });

  it('members pin to their own pools', async () => {
    const rsp = await compose({ engines: [gangEngine('main', { leader: { pool: 'head' } })] });
    expect(at(lwsTemplate(rsp, 'leaderTemplate'), 'spec', 'nodeSelector')).toEqual({ 'modelplane.ai/pool': 'head' });
    expect(at(lwsTemplate(rsp, 'workerTemplate'), 'spec', 'nodeSelector')).toEqual({ 'modelplane.ai/pool': 'frontier' });
  });

  it('a device request without selectors composes none; the count defaults to 1', async () => {
    const rsp = await compose({
      engines: [standaloneEngine('main', { deviceRequests: [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com' }] })],
    });
    expect(at(manifest(rsp, 'resource-claim-main-standalone'), 'spec', 'spec', 'devices', 'requests')).toEqual([
      { name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', count: 1 } },
    ]);
  });

  it("the user's image pull secrets go on the pod", async () => {
    const rsp = await compose({ engines: [standaloneEngine('main', { imagePullSecrets: ['regcred'] })] });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'template', 'spec', 'imagePullSecrets')).toEqual([{ name: 'regcred' }]);
  });
});

describe('backend selection', () => {
  it('Standalone engine is native (a Deployment)', async () => {
    expect(manifest(await compose(), 'model-serving-main')['kind']).toBe('Deployment');
  });
  it('Leader/Worker engine is llm-d (a LeaderWorkerSet)', async () => {
    expect(manifest(await compose({ engines: [gangEngine()] }), 'model-serving-main')['kind']).toBe('LeaderWorkerSet');
  });
  it('a replica may mix both, each engine its own backend', async () => {
    const rsp = await compose({ engines: [standaloneEngine('small'), gangEngine('big')] });
    expect(manifest(rsp, 'model-serving-small')['kind']).toBe('Deployment');
    expect(manifest(rsp, 'model-serving-big')['kind']).toBe('LeaderWorkerSet');
  });
});

// Upstream v0.3.1 appended --model=/mnt/models to a cache user's args; this
// project never edits args or command (the user writes --model=$(MODELPLANE_MODEL)).
describe('args unchanged (upstream --model injection, inverted)', () => {
  const hf = (): JsonObject => huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' }) as unknown as Json;
  const readyCache = (mount: JsonObject = hf()) => modelCache('qwen', [entry('cluster-a', 'Ready', { mount })]);
  const nativeEngine = (rsp: TestResponse) => engineOf(at(manifest(rsp, 'model-serving-main'), 'spec', 'template') as JsonObject);

  it.each<[string, string[], string[] | undefined]>([
    ['apply cache injects model when absent: args unchanged', ['--trust-remote-code'], undefined],
    ['apply cache respects user model: args unchanged', ['--model=/mnt/models'], undefined],
    ['apply cache skips when engine has command: args unchanged', ['--model-path=/mnt/models'], ['/bin/sh', '-c', '...']],
    ['user points the engine at the cache through the env', ['--model=$(MODELPLANE_MODEL)', '--served-model-name=qwen'], undefined],
  ])('%s', async (_name, args, command) => {
    const rsp = await compose(
      { cache: 'qwen', engines: [standaloneEngine('main', { args, ...(command ? { command } : {}) })] },
      readyCache(),
    );
    expect(nativeEngine(rsp)['args']).toEqual(args);
    if (command) expect(nativeEngine(rsp)['command']).toEqual(command);
    else expect(nativeEngine(rsp)).not.toHaveProperty('command');
  });

  it('apply cache noop without cache: args unchanged', async () => {
    const rsp = await compose({ engines: [standaloneEngine('main', { args: ['--trust-remote-code'] })] });
    expect(nativeEngine(rsp)['args']).toEqual(['--trust-remote-code']);
  });

  it('native backend cache: mounts the cache, args stay []', async () => {
    const rsp = await compose({ cache: 'qwen', engines: [standaloneEngine('main', { args: [] })] }, readyCache());
    const pod = at(manifest(rsp, 'model-serving-main'), 'spec', 'template', 'spec') as JsonObject;
    expect((pod['volumes'] as JsonObject[]).map((v) => v['name'])).toContain('model-cache');
    expect(nativeEngine(rsp)['volumeMounts']).toContainEqual({ name: 'model-cache', mountPath: '/mnt/models' });
    expect(nativeEngine(rsp)['args']).toEqual([]);
  });

  it('native args are [] when the user gives none', async () => {
    const engine = standaloneEngine('main');
    (((engine['members'] as JsonObject[])[0]!['template'] as JsonObject)['spec'] as { containers: JsonObject[] }).containers[0] = {
      name: 'engine',
      image: IMAGE,
    };
    expect(nativeEngine(await compose({ engines: [engine] }))['args']).toEqual([]);
  });

  it('LLMD backend cache: both LWS templates mount the cache; the leader gets no --model; args stay absent', async () => {
    const engine = gangEngine('main', { leader: { args: [] }, worker: { command: ['/bin/sh', '-c', 'join'] } });
    const rsp = await compose({ cache: 'kimi', engines: [engine] }, modelCache('kimi', [entry('cluster-a', 'Ready', { mount: hf() })]));
    for (const role of ['leaderTemplate', 'workerTemplate'] as const) {
      const template = lwsTemplate(rsp, role);
      expect((at(template, 'spec', 'volumes') as JsonObject[]).map((v) => v['name'])).toContain('model-cache');
      expect(engineOf(template)['volumeMounts']).toContainEqual({ name: 'model-cache', mountPath: '/mnt/models' });
      // LWS omits empty args: nothing was injected.
      expect(engineOf(template)).not.toHaveProperty('args');
    }
    expect(engineOf(lwsTemplate(rsp, 'workerTemplate'))['command']).toEqual(['/bin/sh', '-c', 'join']);
  });

  it('LLMD command engine mounts the cache, command verbatim', async () => {
    const leaderCmd = ['/bin/sh', '-c', 'python3 -m sglang.launch_server --model-path /mnt/models --tp 16'];
    const claim = claimMount({ claimName: 'kimi-weights' }) as unknown as Json;
    const engine = gangEngine('main', { leader: { command: leaderCmd }, worker: { command: ['/bin/sh', '-c', 'join'] } });
    const rsp = await compose({ cache: 'kimi', engines: [engine] }, modelCache('kimi', [entry('cluster-a', 'Ready', { mount: claim })]));
    const leader = engineOf(lwsTemplate(rsp, 'leaderTemplate'));
    expect(leader['volumeMounts']).toContainEqual({ name: 'model-cache', mountPath: '/mnt/models', readOnly: true });
    expect(leader['command']).toEqual(leaderCmd);
    expect(leader).not.toHaveProperty('args');
  });
});

describe('the cluster stack', () => {
  it('a stack this function does not know gets a Fatal result naming it', async () => {
    const rsp = await run(requestFor({ xr: replica(), cluster: cluster('cluster-a', { stack: 'Triton' }) }));
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toBe(
      "InferenceCluster cluster-a spec.stack is Triton: compose-model-replica serves on the Standard or Dynamo stack; correct the cluster's spec.stack",
    );
    expect(rsp.desired).toBeUndefined();
  });

  it.each([
    ['Standard', 'Deployment', 'LeaderWorkerSet'],
    ['Dynamo', 'Deployment', 'PodCliqueSet'],
  ])('a cluster that says %s serves a Standalone engine as a %s and a gang as a %s', async (stack, standalone, gang) => {
    const rsp = await run(
      requestFor({ xr: replica({ engines: [standaloneEngine('small'), gangEngine('big')] }), cluster: cluster('cluster-a', { stack }) }),
    );
    expect(manifest(rsp, 'model-serving-small')['kind']).toBe(standalone);
    expect(manifest(rsp, 'model-serving-big')['kind']).toBe(gang);
  });
});

describe('a replica that got past the XRD is refused naming the field', () => {
  const member = (over: JsonObject): JsonObject => ({
    role: 'Standalone',
    nodePoolName: 'frontier',
    deviceRequests: [gpuRequest()],
    template: { spec: { containers: [{ name: 'engine', image: IMAGE }] } },
    ...over,
  });
  it.each<[string, ReplicaOptions, string]>([
    ['no engines', { engines: [] }, 'spec.engines must have at least 1 item'],
    [
      'two Standalone members',
      { engines: [{ name: 'main', members: [member({}), member({})] }] },
      'spec.engines[0].members must be either a single Standalone member or one Leader and one Worker member',
    ],
    ['a Leader alone', { engines: [{ name: 'main', members: [member({ role: 'Leader' })] }] }, 'spec.engines[0].members must be either'],
    [
      'no engine container',
      { engines: [{ name: 'main', members: [member({ template: { spec: { containers: [{ name: 'vllm', image: IMAGE }] } } })] }] },
      "spec.engines[0].members[0].template.spec.containers must hold exactly one container named 'engine'",
    ],
    [
      'worker on a Standalone member',
      { engines: [{ name: 'main', members: [member({ worker: { nodes: 2 } })] }] },
      'spec.engines[0].members[0].worker may only be set on a Worker member',
    ],
    ['an engine name that is not a DNS label', { engines: [standaloneEngine('Main')] }, 'spec.engines[0].name must be a DNS label'],
    [
      'two engines of one name',
      { engines: [standaloneEngine('main'), standaloneEngine('main')] },
      'spec.engines[1].name "main" is used by another engine',
    ],
    [
      'a pool name that is no label value',
      { engines: [standaloneEngine('main', { pool: 'pool a' })] },
      'spec.engines[0].members[0].nodePoolName must be a Kubernetes label value',
    ],
    ['copies 0', { engines: [standaloneEngine('main', { copies: 0 })] }, 'spec.engines[0].copies must be an integer from 1 to 64 (got 0)'],
    ['a replica name that is not a DNS label', { name: 'R.1' }, 'metadata.name must be a DNS label'],
    ['a replica namespace that is not a DNS label', { namespace: 'slash/inside' }, 'metadata.namespace must be a DNS label'],
  ])('%s', async (_name, options, message) => {
    const rsp = await run(requestFor({ xr: replica(options), cluster: cluster() }));
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
  });
});
