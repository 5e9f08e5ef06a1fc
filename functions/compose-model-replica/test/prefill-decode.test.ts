// PrefillDecode (disaggregated) serving: upstream's routing behaviours
// (tests/test_backends.py, the disaggregated cases), through the protocol. A
// Prefill and a Decode engine, told apart by phase; both serving pods get the
// role labels and the NIXL side channel; the decode pod gets the routing
// sidecar on the serving port and its engine moves to another; the picker
// runs the disaggregated config at the decode engine's block size.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { desiredResources, type TestResponse } from '#testing';
import { disaggregatedEppConfig } from '../src/routing.js';
import {
  GPU_TOLERATION,
  IMAGE,
  LEADER_ENV,
  RANK_ENV,
  at,
  cluster,
  engineOf,
  gangEngine,
  manifest,
  observeAll,
  podTemplates,
  remoteMeta,
  replica,
  requestFor,
  run,
  standaloneEngine,
  underUpstreamNames,
  type MemberOptions,
  type ReplicaOptions,
} from './support.js';

const PD = { mode: 'PrefillDecode' };
/** This release's names for replica r of ml-team: its serving label, pool and picker. */
const SERVING = 'r-49ee1';
const R_POOL = 'r-pool-479a9';
const R_EPP = 'r-epp-0e422';
const PROBE = (port: number) => ({ httpGet: { path: '/health', port }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5 });
const NIXL_ENV = [
  { name: 'VLLM_NIXL_SIDE_CHANNEL_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
  { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: '5557' },
];
const NIXL_VOLUME = { name: 'nixl-shm', emptyDir: { medium: 'Memory' } };
const SHM = { volume: { name: 'dshm', emptyDir: { medium: 'Memory' } }, mount: { name: 'dshm', mountPath: '/dev/shm' } };

const phased = (engine: JsonObject, phase: 'Prefill' | 'Decode'): JsonObject => ({ ...engine, phase });
const prefill = (name = 'prefill', options: MemberOptions = {}) => phased(standaloneEngine(name, options), 'Prefill');
const decode = (name = 'decode', options: MemberOptions = {}) => phased(standaloneEngine(name, options), 'Decode');

/** Compose replica `r` on a provisioned cluster-a, PrefillDecode unless the options say otherwise. */
function compose(options: ReplicaOptions = {}, stack?: string): Promise<TestResponse> {
  return run(
    requestFor({
      xr: replica({ name: 'r', serving: PD, engines: [prefill(), decode()], ...options }),
      cluster: cluster('cluster-a', stack ? { stack } : {}),
    }),
  );
}

const servingPod = (rsp: TestResponse, engine: string): JsonObject => podTemplates(manifest(rsp, `model-serving-${engine}`))[0]!.template;
const containers = (template: JsonObject) => at(template, 'spec', 'containers') as JsonObject[];
const names = (list: JsonObject[]) => list.map((c) => c['name']);
const eppConfig = (rsp: TestResponse) => at(manifest(rsp, 'epp-config'), 'data', 'epp-config.yaml') as string;

describe('disaggregated routing (upstream v0.3.1)', () => {
  it('replaces unified service with pool and epp: the pool fronts both engines through the picker', async () => {
    const rsp = await compose();
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual([
      'epp',
      'epp-config',
      'epp-role',
      'epp-rolebinding',
      'epp-service',
      'epp-serviceaccount',
      'inference-pool',
      'model-route',
      'model-serving-decode',
      'model-serving-prefill',
      'resource-claim-decode-standalone',
      'resource-claim-prefill-standalone',
    ]);
    const pool = manifest(rsp, 'inference-pool');
    expect(pool['kind']).toBe('InferencePool');
    expect(at(pool, 'spec', 'endpointPickerRef', 'name')).toBe(R_EPP);
    // The pool still selects the serving label both engines' serving pods carry.
    expect(at(pool, 'spec', 'selector')).toEqual({ matchLabels: { 'modelplane.ai/serving': SERVING } });
    for (const engine of ['prefill', 'decode'])
      expect(at(servingPod(rsp, engine), 'metadata', 'labels', 'modelplane.ai/serving')).toBe(SERVING);
  });

  it('injects nixl plumbing on both engines: a Memory volume, /dev/shm mounted, the side channel on the pod IP', async () => {
    const rsp = await compose();
    for (const engine of ['prefill', 'decode']) {
      const pod = servingPod(rsp, engine);
      expect(at(pod, 'spec', 'volumes'), engine).toEqual([SHM.volume, NIXL_VOLUME]);
      expect(engineOf(pod)['volumeMounts'], engine).toEqual([SHM.mount]);
      expect(engineOf(pod)['env'], engine).toEqual(NIXL_ENV);
    }
  });

  it('the epp config arms the pd decider, and is upstream’s byte for byte (its checksum rolls the picker)', async () => {
    const config = eppConfig(await compose());
    for (const part of ['prefix-based-pd-decider', 'nonCachedTokens: 16', 'approx-prefix-cache-producer', 'autoTune: false'])
      expect(config).toContain(part);
    expect(config).not.toContain('nonCachedTokens: 0');
    expect(config).not.toContain('prepareDataPlugins');
    // Upstream v0.3.1's template at block size 16, hashed from its source text.
    const upstream = 'f715f3024f37e7042d42628f10cbb04c7da78b96dc65953dac0f289ef2c7ef98';
    expect(createHash('sha256').update(config).digest('hex')).toBe(upstream);
    expect(at(manifest(await compose(), 'epp'), 'spec', 'template', 'metadata', 'annotations')).toEqual({
      'modelplane.ai/epp-config-checksum': upstream,
    });
  });

  it('epp and sidecar images and the config group are pinned', async () => {
    const rsp = await compose();
    expect(at(manifest(rsp, 'epp'), 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe(
      'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0',
    );
    expect(containers(servingPod(rsp, 'decode'))[1]!['image']).toBe('ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0');
    expect(eppConfig(rsp)).toContain('apiVersion: llm-d.ai/v1alpha1');
  });

  it('the epp role watches inferenceobjectives', async () => {
    const rules = manifest(await compose(), 'epp-role')['rules'] as JsonObject[];
    expect(rules).toContainEqual({
      apiGroups: ['inference.networking.x-k8s.io'],
      resources: ['inferenceobjectives'],
      verbs: ['get', 'watch', 'list'],
    });
  });

  it.each([
    ['--port=9000', ['--model=m', '--port=9000'], 9000],
    ['--port 9100', ['--model=m', '--port', '9100'], 9100],
    ['no --port', ['--model=m'], 8001],
  ])('decode port follows the user arg: %s', async (_name, args, port) => {
    const rsp = await compose({ engines: [prefill(), decode('decode', { args })] });
    const [engine, sidecar] = containers(servingPod(rsp, 'decode'));
    expect(engine!['ports']).toEqual([{ containerPort: port }]);
    expect(engine!['readinessProbe']).toEqual(PROBE(port));
    expect(engine!['args']).toEqual(args);
    expect(sidecar!['args']).toEqual(['--secure-proxy=false', '--kv-connector=nixlv2', `--vllm-port=${port}`]);
    expect(sidecar!['ports']).toEqual([{ containerPort: 8000 }]);
  });

  it('the prefill engine keeps the serving port, whatever --port its args carry (upstream reads only the decode engine’s)', async () => {
    const rsp = await compose({ engines: [prefill('prefill', { args: ['--port=9000'] }), decode()] });
    expect(containers(servingPod(rsp, 'prefill'))).toHaveLength(1);
    expect(engineOf(servingPod(rsp, 'prefill'))['ports']).toEqual([{ containerPort: 8000 }]);
  });

  it('engines are role labeled, with the app label on both', async () => {
    const rsp = await compose();
    expect(at(servingPod(rsp, 'prefill'), 'metadata', 'labels')).toEqual({
      'modelplane.ai/serving': SERVING,
      'modelplane.ai/workload': 'r-prefill-9839b',
      'llm-d.ai/role': 'prefill',
      'llm-d.ai/inference-serving': 'true',
      app: SERVING,
    });
    expect(at(servingPod(rsp, 'decode'), 'metadata', 'labels', 'llm-d.ai/role')).toBe('decode');
    expect(at(servingPod(rsp, 'decode'), 'metadata', 'labels', 'app')).toBe(SERVING);
  });

  it('decode gets the sidecar and moves the engine port; prefill has no sidecar', async () => {
    const rsp = await compose();
    const decodePod = containers(servingPod(rsp, 'decode'));
    expect(names(decodePod)).toEqual(['engine', 'pd-sidecar']);
    expect(decodePod[0]!['ports']).toEqual([{ containerPort: 8001 }]);
    expect(at(decodePod[0], 'readinessProbe', 'timeoutSeconds')).toBe(5);
    expect(decodePod[1]).toEqual({
      name: 'pd-sidecar',
      image: 'ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0',
      args: ['--secure-proxy=false', '--kv-connector=nixlv2', '--vllm-port=8001'],
      ports: [{ containerPort: 8000 }],
      readinessProbe: PROBE(8000),
    });
    expect(names(containers(servingPod(rsp, 'prefill')))).toEqual(['engine']);
  });

  it('the route targets the inference pool, with no request timeout', async () => {
    const rule = at(manifest(await compose(), 'model-route'), 'spec', 'rules', 0) as JsonObject;
    expect(rule['backendRefs']).toEqual([{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: R_POOL }]);
    expect(rule['timeouts']).toEqual({ request: '0s' });
  });

  it('selects engines by phase, not name (alpha is Decode, beta is Prefill)', async () => {
    const rsp = await compose({ engines: [decode('alpha'), prefill('beta')] });
    expect(names(containers(servingPod(rsp, 'alpha')))).toEqual(['engine', 'pd-sidecar']);
    expect(names(containers(servingPod(rsp, 'beta')))).toEqual(['engine']);
    expect(at(servingPod(rsp, 'alpha'), 'metadata', 'labels', 'llm-d.ai/role')).toBe('decode');
    expect(at(servingPod(rsp, 'beta'), 'metadata', 'labels', 'llm-d.ai/role')).toBe('prefill');
  });

  it('the block size comes from the decode engine, not the first engine', async () => {
    const rsp = await compose({
      engines: [prefill('prefill', { args: ['--block-size', '64'] }), decode('decode', { args: ['--block-size=32'] })],
    });
    expect(eppConfig(rsp)).toBe(disaggregatedEppConfig(32));
    expect(eppConfig(rsp)).toContain('blockSizeTokens: 32');
    expect(eppConfig(rsp)).not.toContain('BLOCK_SIZE');
  });

  it('the whole decode Deployment, as composed', async () => {
    expect(manifest(await compose(), 'model-serving-decode')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: remoteMeta('r-decode-f7327'),
      spec: {
        replicas: 1,
        selector: { matchLabels: { 'modelplane.ai/workload': 'r-decode-f7327' } },
        template: {
          metadata: {
            labels: {
              'modelplane.ai/serving': SERVING,
              'modelplane.ai/workload': 'r-decode-f7327',
              'llm-d.ai/role': 'decode',
              'llm-d.ai/inference-serving': 'true',
              app: SERVING,
            },
          },
          spec: {
            containers: [
              {
                name: 'engine',
                image: IMAGE,
                args: ['--model=Qwen/Qwen3-0.6B'],
                env: NIXL_ENV,
                ports: [{ containerPort: 8001 }],
                volumeMounts: [SHM.mount],
                readinessProbe: PROBE(8001),
                resources: { claims: [{ name: 'devices' }] },
              },
              {
                name: 'pd-sidecar',
                image: 'ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0',
                args: ['--secure-proxy=false', '--kv-connector=nixlv2', '--vllm-port=8001'],
                ports: [{ containerPort: 8000 }],
                readinessProbe: PROBE(8000),
              },
            ],
            volumes: [SHM.volume, NIXL_VOLUME],
            nodeSelector: { 'modelplane.ai/pool': 'frontier' },
            resourceClaims: [{ name: 'devices', resourceClaimTemplateName: 'r-decode-standalone-devices-c9808' }],
            tolerations: [GPU_TOLERATION],
          },
        },
      },
    });
  });
});

describe('names per phase', () => {
  it.each([
    ['prefill Deployment', 'model-serving-prefill', 'qwen-0-prefill-2e5bd', 'qwen-0-prefill-c1fcd'],
    ['decode Deployment', 'model-serving-decode', 'qwen-0-decode-9b0ca', 'qwen-0-decode-190c4'],
    [
      'prefill claim template',
      'resource-claim-prefill-standalone',
      'qwen-0-prefill-standalone-devices-e880e',
      'qwen-0-prefill-standalone-devices-f515b',
    ],
    ['the pool', 'inference-pool', 'qwen-0-pool-7efa6', 'qwen-0-pool'],
    ['the picker', 'epp', 'qwen-0-epp-b67c2', 'qwen-0-epp'],
    ['the picker’s Service', 'epp-service', 'qwen-0-epp-b67c2', 'qwen-0-epp'],
    ['the route', 'model-route', 'qwen-0-a0ebc', 'qwen-0'],
  ])(
    '%s: the namespace in the hash for a new replica, upstream’s (childName(replica, engine)) kept for one that runs under it',
    async (_what, key, fresh, upstream) => {
      const rsp = await compose({ name: 'qwen-0' });
      expect(at(manifest(rsp, key), 'metadata', 'name')).toBe(fresh);
      const xr = replica({ name: 'qwen-0', serving: PD, engines: [prefill(), decode()] });
      const again = await run(requestFor({ xr, cluster: cluster(), observed: underUpstreamNames(observeAll(rsp), 'qwen-0') }));
      expect(at(manifest(again, key), 'metadata', 'name')).toBe(upstream);
    },
  );
});

describe('the user’s env and the NIXL side channel', () => {
  it('the user’s value wins a clash, once; ours come before the user’s so $(VAR) can refer to them', async () => {
    const user = [
      { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: '6000' },
      { name: 'KV_PEER', value: '$(VLLM_NIXL_SIDE_CHANNEL_HOST)' },
    ];
    const rsp = await compose({ engines: [prefill(), decode('decode', { env: user })] });
    expect(engineOf(servingPod(rsp, 'decode'))['env']).toEqual([NIXL_ENV[0], ...user]);
  });
});

describe('a PrefillDecode engine may be a gang: a LeaderWorkerSet on Standard', () => {
  const lwsDecode = () =>
    phased(gangEngine('decode', { leader: { args: ['--port=8200'] }, worker: { command: ['/bin/sh', '-c', 'join'] } }), 'Decode');

  it('decorates the leader template only; the worker template is left as a gang worker', async () => {
    const rsp = await compose({ engines: [prefill(), lwsDecode()] });
    const lws = manifest(rsp, 'model-serving-decode');
    expect(lws['kind']).toBe('LeaderWorkerSet');
    const [leader, worker] = podTemplates(lws);
    expect(at(leader!.template, 'metadata', 'labels')).toEqual({
      'modelplane.ai/serving': SERVING,
      'modelplane.ai/lws-role': 'leader',
      'llm-d.ai/role': 'decode',
      'llm-d.ai/inference-serving': 'true',
      app: SERVING,
    });
    expect(names(containers(leader!.template))).toEqual(['engine', 'pd-sidecar']);
    expect(engineOf(leader!.template)['ports']).toEqual([{ containerPort: 8200 }]);
    expect(containers(leader!.template)[1]!['args']).toContain('--vllm-port=8200');
    expect(engineOf(leader!.template)['env']).toEqual([LEADER_ENV, RANK_ENV, ...NIXL_ENV]);
    expect(at(leader!.template, 'spec', 'volumes')).toEqual([SHM.volume, NIXL_VOLUME]);

    expect(worker!.template).not.toHaveProperty('metadata');
    expect(names(containers(worker!.template))).toEqual(['engine']);
    expect(engineOf(worker!.template)['env']).toEqual([LEADER_ENV, RANK_ENV]);
    expect(engineOf(worker!.template)).not.toHaveProperty('ports');
    expect(at(worker!.template, 'spec', 'volumes')).toEqual([SHM.volume]);
  });

  it('the block size comes from the decode gang’s leader', async () => {
    const engine = phased(gangEngine('decode', { leader: { args: ['--page-size=64'] } }), 'Decode');
    expect(eppConfig(await compose({ engines: [prefill(), engine] }))).toContain('blockSizeTokens: 64');
  });
});

describe('what the pods could not serve, refused naming the field', () => {
  it.each([
    ['--port=http', ['--port=http'], 'spec.engines[1] (decode, phase Decode) --port must be a port number from 1 to 65535 (got "http")'],
    ['--port=70000', ['--port=70000'], 'must be a port number from 1 to 65535 (got "70000")'],
    ['--port=8000', ['--port=8000'], 'must not be 8000: on a decode pod the pd-sidecar container serves 8000'],
  ])('a decode engine with %s', async (_name, args, message) => {
    const rsp = await compose({ engines: [prefill(), decode('decode', { args })] });
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
    expect(rsp.desired).toBeUndefined();
  });

  it.each<[string, ReplicaOptions, string]>([
    [
      'PrefillDecode with one engine',
      { engines: [prefill()] },
      'spec.engines PrefillDecode serving requires exactly two engines (one Prefill, one Decode); got 1',
    ],
    [
      'two Decode engines',
      { engines: [decode('a'), decode('b')] },
      'spec.engines PrefillDecode serving requires exactly one engine with phase Prefill; got 0',
    ],
    [
      'two Prefill engines',
      { engines: [prefill('a'), prefill('b')] },
      'spec.engines PrefillDecode serving requires exactly one engine with phase Prefill; got 2',
    ],
    ['an engine with no phase', { engines: [prefill(), standaloneEngine('x')] }, 'requires exactly one engine with phase Decode; got 0'],
    ['a phase under Unified', { serving: { mode: 'Unified' } }, 'spec.engines[0].phase may only be set when serving.mode is PrefillDecode'],
    ['a phase with no serving block', { serving: undefined }, 'spec.engines[0].phase may only be set when serving.mode is PrefillDecode'],
  ])('a replica that got past the XRD: %s', async (_name, options, message) => {
    const rsp = await run(
      requestFor({ xr: replica({ name: 'r', serving: PD, engines: [prefill(), decode()], ...options }), cluster: cluster() }),
    );
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
  });
});
