// The Dynamo stack (upstream's newer code, PR #406 and after): a Leader/Worker
// engine becomes a Grove PodCliqueSet; a replica with a cache gets the
// ModelExpress bundle and IPC_LOCK on every native and Grove engine
// container, never on a LeaderWorkerSet. Upstream's newer goldens through the
// protocol, with our remote namespace and our cache contract.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { huggingFaceMount, validateMount, type CacheMount, type JsonObject } from '#lib';
import { condition, desiredResources, type TestResponse } from '#testing';
import { engineEnv, type CacheShaping } from '../src/pod.js';
import { MODELEXPRESS_ENV_NAMES } from '../src/stack.js';
import {
  GPU_CEL,
  GPU_TOLERATION,
  IMAGE,
  at,
  cluster,
  engineOf,
  entry,
  gangEngine,
  manifest,
  modelCache,
  observeAll,
  podTemplates,
  remoteMeta,
  replica,
  requestFor,
  run,
  standaloneEngine,
  underUpstreamNames,
  type ReplicaOptions,
} from './support.js';

const DYNAMO = 'Dynamo';
/** The serving label of replica r of ml-team (this release's: unique per XR). */
const SERVING = 'r-49ee1';
const GROVE_CEL =
  'has(object.status) && has(object.status.observedGeneration) && object.status.observedGeneration == object.metadata.generation && object.spec.replicas > 0 && has(object.status.availableReplicas) && object.status.availableReplicas >= object.spec.replicas';
const AVAILABLE_CEL = 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Available" && c.status == "True")';
const QUEUE = { 'kai.scheduler/queue': 'modelplane' };
const PROBE = { httpGet: { path: '/health', port: 8000 }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5 };
const SHM = { volume: { name: 'dshm', emptyDir: { medium: 'Memory' } }, mount: { name: 'dshm', mountPath: '/dev/shm' } };
const IPC_LOCK = { capabilities: { add: ['IPC_LOCK'] } };
const MX_ADDRESS = 'modelexpress-server.default.svc:8001';

const LEADER_CMD = [
  '/bin/sh',
  '-c',
  'ray start --head --port=6379; exec vllm serve --model=meta-llama/Llama-3.1-405B --tensor-parallel-size=8 --pipeline-parallel-size=2 --port=8000',
];
const WORKER_CMD = ['/bin/sh', '-c', 'exec ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379 --block'];
const GANG = gangEngine('main', { leader: { command: LEADER_CMD }, worker: { command: WORKER_CMD } });

/**
 * This release's PodCliqueSet name, written out independently: `<replica>-<engine>` ("mr-" first for a digit) cut
 * to 18, dashes stripped, then 5 hex of the SHA-256 of `<namespace>/<replica>/engine/<engine>`.
 */
function groveName(replicaName: string, engineName: string, namespace = 'ml-team'): string {
  const readable = /^[a-z]/.test(replicaName) ? `${replicaName}-${engineName}` : `mr-${replicaName}-${engineName}`;
  const hash = createHash('sha256').update(`${namespace}/${replicaName}/engine/${engineName}`).digest('hex').slice(0, 5);
  return `${readable.slice(0, 18).replace(/-+$/, '')}-${hash}`;
}

/** Upstream's `grove_pcs_name`, written out independently: cut `<replica>-<engine>` to 18, strip dashes, add 5 hex. */
function upstreamGroveName(replicaName: string, engineName: string): string {
  const full = `${replicaName}-${engineName}`;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 5);
  return `${full.slice(0, 18).replace(/-+$/, '')}-${hash}`;
}

/**
 * The leader address of PodCliqueSet `pcs`, written out independently: the gang index from Grove's pod label first,
 * then Grove's hostname for gang i's leader under its headless Service, the PodCliqueSet replica being 0.
 */
function groveLeader(pcs: string, namespace = 'default'): JsonObject[] {
  return [
    {
      name: 'MODELPLANE_GANG_INDEX',
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['grove.io/podcliquescalinggroup-replica-index']" } },
    },
    { name: 'MODELPLANE_LEADER_ADDRESS', value: `${pcs}-0-gang-$(MODELPLANE_GANG_INDEX)-leader-0.${pcs}-0.${namespace}.svc.cluster.local` },
  ];
}
const GROVE_LEADER = groveLeader(groveName('r', 'main'));

const HF = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });
const json = (mount: CacheMount): JsonObject => structuredClone(mount) as unknown as JsonObject;
const readyCache = (mount: CacheMount = HF, accessModes?: string[]) =>
  modelCache('qwen', [entry('cluster-a', 'Ready', { mount: json(mount), ...(accessModes ? { accessModes } : {}) })]);

/** Compose replica `r` on cluster-a (Dynamo unless told), with the Ready cache `qwen` when the replica names it. */
function compose(options: ReplicaOptions = {}, stack = DYNAMO, cache?: JsonObject): Promise<TestResponse> {
  const xr = replica({ name: 'r', engines: [GANG], ...options });
  return run(requestFor({ xr, cluster: cluster('cluster-a', { stack }), ...(options.cache ? { cache: cache ?? readyCache() } : {}) }));
}

const cliques = (rsp: TestResponse, key = 'model-serving-main') => at(manifest(rsp, key), 'spec', 'template', 'cliques') as JsonObject[];
const clique = (rsp: TestResponse, name: string, key?: string) => cliques(rsp, key).find((c) => c['name'] === name)!;
const cliqueEngine = (rsp: TestResponse, name: string, key?: string) =>
  at(clique(rsp, name, key), 'spec', 'podSpec', 'containers', 0) as JsonObject;

function claims(role: string): JsonObject[] {
  const name = { leader: 'r-main-leader-devices-f84ce', worker: 'r-main-worker-devices-d078f' }[role]!;
  return [{ name: 'devices', resourceClaimTemplateName: name }];
}

function cliqueContainer(serving: boolean, command: string[]): JsonObject {
  const c: JsonObject = {
    name: 'engine',
    image: IMAGE,
    volumeMounts: [SHM.mount],
    resources: { claims: [{ name: 'devices' }] },
    command,
    env: GROVE_LEADER,
  };
  if (serving) {
    c['ports'] = [{ containerPort: 8000 }];
    c['readinessProbe'] = PROBE;
  }
  return c;
}

function podSpec(container: JsonObject, role: string): JsonObject {
  return {
    containers: [container],
    volumes: [SHM.volume],
    schedulerName: 'kai-scheduler',
    nodeSelector: { 'modelplane.ai/pool': 'frontier' },
    resourceClaims: claims(role),
    tolerations: [GPU_TOLERATION],
  };
}

function claimTemplate(role: string): JsonObject {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: remoteMeta(claims(role)[0]!['resourceClaimTemplateName'] as string),
    spec: {
      spec: {
        devices: {
          requests: [
            { name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', count: 8, selectors: [{ cel: { expression: GPU_CEL } }] } },
          ],
        },
      },
    },
  };
}

/**
 * Upstream's `_GROVE_WANT` (N-tb), with the remote namespace `default`, but for the leader address: upstream's
 * `$(GROVE_PCSG_*)` form stays unexpanded on Grove's releases (grove-env.test.ts), ours is built from known names.
 */
const GROVE_WANT: Record<string, JsonObject> = {
  'model-serving-main': {
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodCliqueSet',
    metadata: remoteMeta(groveName('r', 'main')),
    spec: {
      replicas: 1,
      template: {
        cliqueStartupType: 'CliqueStartupTypeExplicit',
        terminationDelay: '4h',
        headlessServiceConfig: { publishNotReadyAddresses: true },
        cliques: [
          {
            name: 'leader',
            labels: { 'modelplane.ai/serving': SERVING, ...QUEUE, 'modelplane.ai/clique-role': 'leader' },
            spec: { roleName: 'leader', replicas: 1, minAvailable: 1, podSpec: podSpec(cliqueContainer(true, LEADER_CMD), 'leader') },
          },
          {
            name: 'worker',
            labels: QUEUE,
            spec: { roleName: 'worker', replicas: 1, minAvailable: 1, podSpec: podSpec(cliqueContainer(false, WORKER_CMD), 'worker') },
          },
        ],
        podCliqueScalingGroups: [{ name: 'gang', cliqueNames: ['leader', 'worker'], replicas: 1, minAvailable: 1 }],
      },
    },
  },
  'resource-claim-main-leader': claimTemplate('leader'),
  'resource-claim-main-worker': claimTemplate('worker'),
};

describe('Grove PodCliqueSet (a gang on the Dynamo stack)', () => {
  it('composes upstream’s PodCliqueSet, commands verbatim', async () => {
    const rsp = await compose();
    for (const [key, want] of Object.entries(GROVE_WANT)) expect(manifest(rsp, key), key).toEqual(want);
    expect(Object.keys(desiredResources(rsp)).filter((k) => k.startsWith('model-serving') || k.startsWith('resource-claim'))).toEqual(
      Object.keys(GROVE_WANT),
    );
  });

  it('injects the leader address, not a rank, on both cliques', async () => {
    const rsp = await compose();
    for (const name of ['leader', 'worker']) expect(cliqueEngine(rsp, name)['env']).toEqual(GROVE_LEADER);
    // Names known at compose time, and none of Grove's variables: no Grove release before #753 defines them above ours.
    expect(GROVE_LEADER[1]!['value']).toBe(
      `${groveName('r', 'main')}-0-gang-$(MODELPLANE_GANG_INDEX)-leader-0.${groveName('r', 'main')}-0.default.svc.cluster.local`,
    );
    expect(JSON.stringify(manifest(rsp, 'model-serving-main'))).not.toContain('$(GROVE_');
  });

  it('user env (a fieldRef too) passes through after the leader address', async () => {
    const env = [
      { name: 'HF_TOKEN', value: 'x' },
      { name: 'VLLM_HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ];
    const rsp = await compose({ engines: [gangEngine('main', { leader: { command: LEADER_CMD, env }, worker: { command: WORKER_CMD } })] });
    expect(cliqueEngine(rsp, 'leader')['env']).toEqual([...GROVE_LEADER, ...env]);
  });

  it('member metadata propagates to each clique independently; a worker without any carries only the queue label', async () => {
    const rsp = await compose({
      engines: [
        gangEngine('main', {
          leader: { labels: { 'example.com/role': 'leader' }, annotations: { 'example.com/config': 'leader' } },
          worker: { labels: { 'example.com/role': 'worker' }, annotations: { 'example.com/config': 'worker' } },
        }),
      ],
    });
    expect(clique(rsp, 'leader')['labels']).toEqual({
      'example.com/role': 'leader',
      'modelplane.ai/serving': SERVING,
      ...QUEUE,
      'modelplane.ai/clique-role': 'leader',
    });
    expect(clique(rsp, 'leader')['annotations']).toEqual({ 'example.com/config': 'leader' });
    expect(clique(rsp, 'worker')['labels']).toEqual({ 'example.com/role': 'worker', ...QUEUE });
    expect(clique(rsp, 'worker')['annotations']).toEqual({ 'example.com/config': 'worker' });
    const bare = await compose();
    expect(clique(bare, 'worker')['labels']).toEqual(QUEUE);
    expect(clique(bare, 'worker')).not.toHaveProperty('annotations');
  });

  it('copies scale the gang; worker nodes size the worker clique', async () => {
    const rsp = await compose({ engines: [gangEngine('main', { copies: 3, worker: { nodes: 4 } })] });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'template', 'podCliqueScalingGroups')).toEqual([
      { name: 'gang', cliqueNames: ['leader', 'worker'], replicas: 3, minAvailable: 1 },
    ]);
    expect(at(clique(rsp, 'worker'), 'spec')).toMatchObject({ replicas: 4, minAvailable: 4 });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'replicas')).toBe(1);
  });

  it('a claimless leader gets no claim, still pinned and tolerating; members pin to their own pools', async () => {
    const rsp = await compose({ engines: [gangEngine('main', { leader: { deviceRequests: null, pool: 'head' } })] });
    expect(desiredResources(rsp)).not.toHaveProperty('resource-claim-main-leader');
    expect(desiredResources(rsp)).toHaveProperty('resource-claim-main-worker');
    const leader = at(clique(rsp, 'leader'), 'spec', 'podSpec') as JsonObject;
    expect(leader).not.toHaveProperty('resourceClaims');
    expect(cliqueEngine(rsp, 'leader')).not.toHaveProperty('resources');
    expect(leader['nodeSelector']).toEqual({ 'modelplane.ai/pool': 'head' });
    expect(leader['tolerations']).toEqual([GPU_TOLERATION]);
    expect(at(clique(rsp, 'worker'), 'spec', 'podSpec', 'nodeSelector')).toEqual({ 'modelplane.ai/pool': 'frontier' });
    expect(at(clique(rsp, 'worker'), 'spec', 'podSpec', 'resourceClaims')).toEqual(claims('worker'));
  });

  it.each([
    ['a gang on Dynamo: Grove’s counters', DYNAMO, GANG, GROVE_CEL],
    ['a Standalone engine on Dynamo: the Deployment’s Available', DYNAMO, standaloneEngine('main'), AVAILABLE_CEL],
    ['a gang on Standard: the LeaderWorkerSet’s Available', 'Standard', GANG, AVAILABLE_CEL],
  ])('workload readiness: %s; claim templates ready on create', async (_name, stack, engine, cel) => {
    const desired = desiredResources(await compose({ engines: [engine] }, stack));
    expect(at(desired['model-serving-main'], 'spec', 'readiness')).toEqual({ policy: 'DeriveFromCelQuery', celQuery: cel });
    for (const key of Object.keys(desired).filter((k) => k.startsWith('resource-claim')))
      expect(at(desired[key], 'spec', 'readiness')).toEqual({ policy: 'SuccessfulCreate' });
  });

  it('unified routing fronts the leader clique: the pool selects the serving label only the leader carries', async () => {
    const rsp = await compose();
    expect(at(manifest(rsp, 'inference-pool'), 'spec', 'selector')).toEqual({ matchLabels: { 'modelplane.ai/serving': SERVING } });
    expect(clique(rsp, 'worker')['labels']).not.toHaveProperty('modelplane.ai/serving');
  });
});

describe('the PodCliqueSet name: upstream’s shape with the namespace in the hash, capped at 24 characters', () => {
  it.each([
    ['r', 'main'],
    ['qwen-0', 'main'],
    ['kimi-k2-4c1b9', 'main'],
    ['llama-405b-instruct-7f3a2', 'main'],
    // The cut lands right after a dash: the dash goes, the hash covers the whole string.
    ['abcdefghijklmnopq-x', 'main'],
    ['a'.repeat(63), 'decode'],
  ])('replica %s, engine %s', async (replicaName, engineName) => {
    const rsp = await compose({ name: replicaName, engines: [gangEngine(engineName)] });
    const name = at(manifest(rsp, `model-serving-${engineName}`), 'metadata', 'name') as string;
    expect(name).toBe(groveName(replicaName, engineName));
    expect(name.length).toBeLessThanOrEqual(24);
  });

  it('two replicas of one name in two namespaces get two PodCliqueSets', async () => {
    const names = await Promise.all(
      ['team-a', 'team-b'].map(async (namespace) =>
        at(manifest(await compose({ name: 'qwen-0', namespace }), 'model-serving-main'), 'metadata', 'name'),
      ),
    );
    expect(names).toEqual([groveName('qwen-0', 'main', 'team-a'), groveName('qwen-0', 'main', 'team-b')]);
    expect(new Set(names).size).toBe(2);
  });

  it.each([
    [DYNAMO, 'Unavailable; its pods ask for the scheduler kai-scheduler: KAI must run on the cluster'],
    ['Standard', 'Unavailable'],
  ])('a gang not Available yet on %s says what it waits on', async (stack, why) => {
    const xr = replica({ name: 'r', engines: [GANG] });
    const first = await compose({}, stack);
    const observed = observeAll(first, (key) => key !== 'model-serving-main');
    const rsp = await run(requestFor({ xr, cluster: cluster('cluster-a', { stack }), observed }));
    expect(condition(rsp, 'ModelReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'ModelStarting',
      message: `waiting for model-serving-main (${why}) to become Available on cluster-a`,
    });
  });

  it('a PodCliqueSet running under upstream’s name keeps it', async () => {
    const xr = replica({ name: 'qwen-0', engines: [GANG] });
    const first = await compose({ name: 'qwen-0' });
    const observed = underUpstreamNames(observeAll(first), 'qwen-0');
    const rsp = await run(requestFor({ xr, cluster: cluster('cluster-a', { stack: DYNAMO }), observed }));
    expect(at(manifest(rsp, 'model-serving-main'), 'metadata', 'name')).toBe(upstreamGroveName('qwen-0', 'main'));
    expect(at(manifest(rsp, 'resource-claim-main-leader'), 'metadata', 'name')).toBe('qwen-0-main-leader-devices-08577');
  });

  it('known values', () => {
    expect(upstreamGroveName('qwen-0', 'main')).toBe('qwen-0-main-7c37f');
    expect(upstreamGroveName('llama-405b-instruct-7f3a2', 'main')).toBe('llama-405b-instruc-603ee');
    expect(upstreamGroveName('abcdefghijklmnopq-x', 'main')).toBe('abcdefghijklmnopq-8ea4d');
  });

  it('a replica name starting with a digit gets a letter first (Grove names a headless Service after it)', async () => {
    const rsp = await compose({ name: '7b-chat', engines: [gangEngine('main')] });
    const name = at(manifest(rsp, 'model-serving-main'), 'metadata', 'name') as string;
    expect(name).toBe(groveName('7b-chat', 'main'));
    expect(name).toMatch(/^[a-z]/);
  });

  it('the claim templates keep their 63-character names', async () => {
    const rsp = await compose({ name: 'qwen-0' });
    expect(at(manifest(rsp, 'resource-claim-main-leader'), 'metadata', 'name')).toBe('qwen-0-main-leader-devices-4ea65');
  });
});

describe('ModelExpress (Dynamo with a cache)', () => {
  const contractEnv = HF.env;
  const mx = (): JsonObject[] => [
    { name: 'MX_SERVER_ADDRESS', value: MX_ADDRESS },
    { name: 'MODEL_EXPRESS_URL', value: MX_ADDRESS },
    { name: 'MX_MODEL_REVISION', value: 'modelcache-ml-team-qwen-17db2' },
    { name: 'MX_P2P_METADATA', value: '1' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
  ];

  it('a cached Grove gang gets the bundle and IPC_LOCK on both cliques, after the contract and the leader address', async () => {
    const rsp = await compose({ cache: 'qwen' });
    for (const name of ['leader', 'worker']) {
      const container = cliqueEngine(rsp, name);
      expect(container['env'], name).toEqual([...contractEnv, ...GROVE_LEADER, ...mx()]);
      expect(container['securityContext'], name).toEqual(IPC_LOCK);
    }
  });

  it('a Grove gang without a cache gets only the leader address, and no security context', async () => {
    const rsp = await compose();
    for (const name of ['leader', 'worker']) {
      expect(cliqueEngine(rsp, name)['env']).toEqual(GROVE_LEADER);
      expect(cliqueEngine(rsp, name)).not.toHaveProperty('securityContext');
    }
  });

  it('a cached Standalone engine on Dynamo gets the bundle and IPC_LOCK', async () => {
    const rsp = await compose({ cache: 'qwen', engines: [standaloneEngine('main', { args: [] })] });
    const container = engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template);
    expect(container['env']).toEqual([...contractEnv, ...mx()]);
    expect(container['securityContext']).toEqual(IPC_LOCK);
    expect(container['args']).toEqual([]);
  });

  it.each([
    ['a cached Standalone engine on Standard', { cache: 'qwen', engines: [standaloneEngine('main')] }, 'Standard', contractEnv],
    ['a cached LeaderWorkerSet (Standard) never', { cache: 'qwen', engines: [GANG] }, 'Standard', undefined],
    ['a Standalone engine on Dynamo without a cache', { engines: [standaloneEngine('main')] }, DYNAMO, undefined],
  ])('no bundle, no security context: %s', async (_name, options, stack, env) => {
    const rsp = await compose(options, stack);
    for (const { template } of podTemplates(manifest(rsp, 'model-serving-main'))) {
      const container = engineOf(template);
      const names = ((container['env'] as JsonObject[] | undefined) ?? []).map((e) => e['name']);
      for (const mxName of MODELEXPRESS_ENV_NAMES) expect(names).not.toContain(mxName);
      if (env) expect(container['env']).toEqual(env);
      expect(container).not.toHaveProperty('securityContext');
    }
  });

  it('MX_MODEL_REVISION is the cache’s claim name, per namespace and cache', async () => {
    const xr = replica({ name: 'r', namespace: 'other-team', cache: 'qwen', engines: [standaloneEngine('main')] });
    const rsp = await run(
      requestFor({
        xr,
        cluster: cluster('cluster-a', { stack: DYNAMO }),
        cache: modelCache('qwen', [entry('cluster-a', 'Ready', { mount: json(HF) })], 'other-team'),
      }),
    );
    const env = engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template)['env'] as JsonObject[];
    expect(env.find((e) => e['name'] === 'MX_MODEL_REVISION')?.['value']).toBe('modelcache-other-team-qwen-c0f07');
  });
});

describe('the contract’s env and the ModelExpress env never collide', () => {
  it.each(MODELEXPRESS_ENV_NAMES)('a contract that sets %s is refused as InvalidCacheMount, nothing composed', async (name) => {
    const mount = json(HF);
    (mount['env'] as JsonObject[]).push({ name, value: 'peer.attacker.example:8001' });
    expect(validateMount(mount).ok).toBe(false);
    const rsp = await compose({ cache: 'qwen' }, DYNAMO, modelCache('qwen', [entry('cluster-a', 'Ready', { mount })]));
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ reason: 'InvalidCacheMount' });
    expect(condition(rsp, 'ModelAccepted')?.message).toContain(`${name} is not a variable a cache mount may set`);
    expect(Object.keys(desiredResources(rsp))).toEqual(['model-cache-usage']);
  });

  it('were one to get through, ModelExpress’s value wins (Modelplane’s injected env comes after the contract’s), once', () => {
    const cache: CacheShaping = {
      volumes: [],
      volumeMounts: [],
      env: [
        { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
        { name: 'MX_SERVER_ADDRESS', value: 'peer.attacker.example:8001' },
      ],
      imagePullSecrets: [],
      writableHome: false,
    };
    expect(engineEnv(cache, [{ name: 'MX_SERVER_ADDRESS', value: MX_ADDRESS }], [])).toEqual([
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'MX_SERVER_ADDRESS', value: MX_ADDRESS },
    ]);
  });

  it('the user still has the last word on a ModelExpress name, which the pod then carries once', async () => {
    const env = [{ name: 'MX_P2P_METADATA', value: '0' }];
    const rsp = await compose({ cache: 'qwen', engines: [standaloneEngine('main', { env })] });
    const names = (engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template)['env'] as JsonObject[]).map((e) => e['name']);
    expect(names.filter((n) => n === 'MX_P2P_METADATA')).toHaveLength(1);
    expect(names.at(-1)).toBe('MX_P2P_METADATA');
  });
});

describe('PrefillDecode on Dynamo: a Grove decode gang', () => {
  it('decorates the leader clique (labels, sidecar, NIXL) and leaves the worker clique alone', async () => {
    const prefill = { ...standaloneEngine('prefill'), phase: 'Prefill' };
    const decode = { ...gangEngine('decode', { leader: { command: LEADER_CMD }, worker: { command: WORKER_CMD } }), phase: 'Decode' };
    const rsp = await compose({ serving: { mode: 'PrefillDecode' }, engines: [prefill, decode] });
    const leader = clique(rsp, 'leader', 'model-serving-decode');
    expect(leader['labels']).toEqual({
      'modelplane.ai/serving': SERVING,
      ...QUEUE,
      'modelplane.ai/clique-role': 'leader',
      'llm-d.ai/role': 'decode',
      'llm-d.ai/inference-serving': 'true',
      app: SERVING,
    });
    const pod = at(leader, 'spec', 'podSpec') as JsonObject;
    expect((pod['containers'] as JsonObject[]).map((c) => c['name'])).toEqual(['engine', 'pd-sidecar']);
    expect(pod['volumes']).toContainEqual({ name: 'nixl-shm', emptyDir: { medium: 'Memory' } });
    expect((cliqueEngine(rsp, 'leader', 'model-serving-decode')['env'] as JsonObject[]).map((e) => e['name'])).toEqual([
      'MODELPLANE_GANG_INDEX',
      'MODELPLANE_LEADER_ADDRESS',
      'VLLM_NIXL_SIDE_CHANNEL_HOST',
      'VLLM_NIXL_SIDE_CHANNEL_PORT',
    ]);
    const worker = clique(rsp, 'worker', 'model-serving-decode');
    expect(worker['labels']).toEqual(QUEUE);
    expect((at(worker, 'spec', 'podSpec', 'containers') as JsonObject[]).map((c) => c['name'])).toEqual(['engine']);
    expect(at(worker, 'spec', 'podSpec', 'volumes')).toEqual([SHM.volume]);
    expect(cliqueEngine(rsp, 'worker', 'model-serving-decode')['env']).toEqual(groveLeader(groveName('r', 'decode')));
    // The prefill engine is a Deployment on any stack.
    expect(manifest(rsp, 'model-serving-prefill')['kind']).toBe('Deployment');
  });
});

describe('a cluster’s stack is fixed: a running gang is never swapped for the other kind', () => {
  it.each([
    ['a LeaderWorkerSet, the cluster now Dynamo', 'Standard', DYNAMO, 'LeaderWorkerSet', 'Standard'],
    ['a PodCliqueSet, the cluster now Standard', DYNAMO, 'Standard', 'PodCliqueSet', 'Dynamo'],
  ])('%s: a Fatal result naming the stack, nothing changed', async (_name, before, after, kind, other) => {
    const serving = await compose({}, before);
    const observed = observeAll(serving);
    const xr = replica({ name: 'r', engines: [GANG] });
    const rsp = await run(requestFor({ xr, cluster: cluster('cluster-a', { stack: after }), observed }));
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toBe(
      `InferenceCluster cluster-a spec.stack is ${after}, but engine main already runs as a ${kind}, composed for the ${other} stack; a cluster's stack is fixed, so the running gang is kept as it is: restore spec.stack to ${other}, or recreate this ModelReplica to serve it as a ${kind === 'LeaderWorkerSet' ? 'PodCliqueSet' : 'LeaderWorkerSet'}`,
    );
    expect(rsp.desired).toBeUndefined();
  });

  it('a Standalone engine is a Deployment of the same name on either stack: served on', async () => {
    const engines = [standaloneEngine('main')];
    const serving = await compose({ engines }, 'Standard');
    const xr = replica({ name: 'r', engines });
    const rsp = await run(requestFor({ xr, cluster: cluster('cluster-a', { stack: DYNAMO }), observed: observeAll(serving) }));
    expect(manifest(rsp, 'model-serving-main')).toEqual(manifest(serving, 'model-serving-main'));
  });
});
