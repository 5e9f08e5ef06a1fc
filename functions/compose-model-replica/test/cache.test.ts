// The cache: a replica that references a ModelCache starts no engine until
// its cluster's entry is Ready with a mount it accepts, then copies that
// contract into every engine pod in a fixed order, and keeps whatever it
// already composed while the cache is not (or no longer) Ready.

import { describe, expect, it } from 'vitest';
import { claimMount, huggingFaceMount, ociImageMount, ociModelArtifactMount, type CacheMount, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, type TestResponse } from '#testing';
import {
  LEADER_ENV,
  NAMESPACE,
  RANK_ENV,
  at,
  cluster,
  engineOf,
  entry,
  gangEngine,
  manifest,
  modelCache,
  observeAll,
  podTemplates,
  replica,
  requestFor,
  run,
  standaloneEngine,
  type EntryOptions,
  type ReplicaOptions,
} from './support.js';

const json = (mount: CacheMount): JsonObject => structuredClone(mount) as unknown as JsonObject;
const HF = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });
const OCI_IMAGE = ociImageMount({ reference: 'us-docker.pkg.dev/acme/models/qwen@sha256:0123abcd', imagePullSecrets: ['regcred'] });
const OCI_ARTIFACT = ociModelArtifactMount({ reference: 'us-docker.pkg.dev/acme/models/qwen@sha256:0123abcd', subPath: 'weights' });
const CLAIM = claimMount({ claimName: 'qwen-weights', subPath: 'qwen/v1' });

const ARGS = ['--model=$(MODELPLANE_MODEL)', '--served-model-name=qwen'];
const NATIVE = standaloneEngine('main', { args: ARGS });
const GANG = gangEngine('main', {
  leader: { args: ARGS },
  worker: { command: ['/bin/sh', '-c', 'exec join $(MODELPLANE_LEADER_ADDRESS)'] },
});

const CACHE_REQUIREMENT = { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache', matchName: 'qwen', namespace: NAMESPACE };
const HOME = {
  volume: { name: 'modelplane-home', emptyDir: { sizeLimit: '20Gi' } },
  mount: { name: 'modelplane-home', mountPath: '/modelplane-home' },
  env: { name: 'HOME', value: '/modelplane-home' },
};
const SHM = { volume: { name: 'dshm', emptyDir: { medium: 'Memory' } }, mount: { name: 'dshm', mountPath: '/dev/shm' } };

function withCache(options: ReplicaOptions = {}): ReplicaOptions {
  return { cache: 'qwen', engines: [NATIVE], ...options };
}

/** Compose with the cache `qwen` reporting `entries`, on a provisioned cluster-a. */
function composeWith(
  entries: JsonObject[] | null,
  options: ReplicaOptions = {},
  observed?: Record<string, JsonObject>,
): Promise<TestResponse> {
  return run(
    requestFor({
      xr: replica(withCache(options)),
      cluster: cluster(),
      cache: entries === null ? null : modelCache('qwen', entries),
      ...(observed ? { observed } : {}),
    }),
  );
}
const readyEntry = (mount: CacheMount, options: EntryOptions = {}) => entry('cluster-a', 'Ready', { mount: json(mount), ...options });

function engineKeys(rsp: TestResponse): string[] {
  return Object.keys(desiredResources(rsp))
    .filter((k) => k !== 'model-cache-usage')
    .sort();
}

describe('requirements', () => {
  it('asks for the ModelCache and its cluster’s ModelCacheHydration in the replica namespace with the cluster, and waits for all', async () => {
    const onlyCluster = await run(requestFor({ xr: replica(withCache()), cluster: cluster() }));
    expect(onlyCluster.requirements?.resources).toEqual({
      cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'cluster-a' },
      cache: CACHE_REQUIREMENT,
      // Where the cluster's entry lives at any fleet size, named as its cache names it (docs/design/fleet.md).
      hydration: {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCacheHydration',
        matchName: 'modelcache-ml-team-qwen-cluster-a-d4283',
        namespace: 'ml-team',
      },
    });
    expect(desiredResources(onlyCluster)).toEqual({});
    expect(onlyCluster.conditions).toEqual([]);
    expect(onlyCluster.desired?.composite).toBeUndefined();

    const onlyCache = await run(requestFor({ xr: replica(withCache()), cache: modelCache('qwen', []) }));
    expect(desiredResources(onlyCache)).toEqual({});
    expect(onlyCache.conditions).toEqual([]);
  });

  it('no cache: asks for the cluster only, serves without a cache volume and composes no Usage', async () => {
    const rsp = await run(requestFor({ xr: replica({ engines: [NATIVE] }), cluster: cluster() }));
    expect(Object.keys(rsp.requirements?.resources ?? {})).toEqual(['cluster']);
    expect(desiredResources(rsp)).not.toHaveProperty('model-cache-usage');
    const pod = podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template;
    expect(at(pod, 'spec', 'volumes')).toEqual([SHM.volume]);
    expect(engineOf(pod)['volumeMounts']).toEqual([SHM.mount]);
    expect(engineOf(pod)).not.toHaveProperty('env');
    expect(engineOf(pod)['args']).toEqual(ARGS);
  });
});

describe('not yet: no engine, no claim template, no routing; the Usage; the XR not ready', () => {
  it.each<[string, JsonObject[] | null, string, string]>([
    [
      'cache absent',
      null,
      'WaitingForCache',
      'ModelCache qwen not found in namespace ml-team: create it, or correct spec.modelCacheRef.name',
    ],
    [
      'cluster not in the footprint',
      [entry('cluster-b', 'Ready', { mount: json(HF) })],
      'CacheNotOnCluster',
      "cluster cluster-a is not in ModelCache qwen's footprint: widen the cache's clusterSelector to select it, or place the replica on a cluster the cache selects",
    ],
    ['entry Pending', [entry('cluster-a', 'Pending')], 'Hydrating', 'waiting for ModelCache qwen on cluster-a: Pending'],
    [
      'entry Hydrating',
      [entry('cluster-a', 'Hydrating', { message: 'downloading Qwen/Qwen3-0.6B' })],
      'Hydrating',
      'waiting for ModelCache qwen on cluster-a: Hydrating (downloading Qwen/Qwen3-0.6B)',
    ],
    [
      'entry Ready without a mount',
      [entry('cluster-a', 'Ready')],
      'Hydrating',
      'waiting for ModelCache qwen on cluster-a: Ready, but no mount is published yet',
    ],
    ['entry with an unknown phase', [entry('cluster-a', 'Staging')], 'Hydrating', 'waiting for ModelCache qwen on cluster-a: Pending'],
  ])('%s', async (_name, entries, reason, message) => {
    const rsp = await composeWith(entries);
    expect(engineKeys(rsp)).toEqual([]);
    expect(desiredResources(rsp)['model-cache-usage']).toBeDefined();
    expect(condition(rsp, 'ModelAccepted')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason, message });
    expect(condition(rsp, 'ModelReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'WaitingForModel',
      message: `no engine is started until ModelCache qwen can be mounted on cluster-a: ${message}`,
    });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
    expect(rsp.results).toEqual([]);
  });

  it('entry Failed fails the replica with the entry’s message, and warns', async () => {
    const message = 'Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded (401 Unauthorized for Qwen/Qwen3-0.6B)';
    const rsp = await composeWith([entry('cluster-a', 'Failed', { message })]);
    expect(engineKeys(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message });
    expect(condition(rsp, 'ModelReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message });
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_WARNING', reason: 'HydrationFailed', message }]);
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('warns once per failure: not again while the XR already reports it, again when it changes', async () => {
    const message = 'Job failed: BackoffLimitExceeded';
    const reported = {
      conditions: [
        { type: 'ModelAccepted', status: 'False', reason: 'HydrationFailed', message, lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    };
    const again = await composeWith([entry('cluster-a', 'Failed', { message })], { status: reported });
    expect(again.results).toEqual([]);
    expect(condition(again, 'ModelAccepted')).toMatchObject({ reason: 'HydrationFailed', message });
    const changed = await composeWith([entry('cluster-a', 'Failed', { message: 'resolver Job failed: manifest unknown' })], {
      status: reported,
    });
    expect(changed.results).toEqual([
      { severity: 'SEVERITY_WARNING', reason: 'HydrationFailed', message: 'resolver Job failed: manifest unknown' },
    ]);
  });

  it('a Failed entry without a message still says which cache failed where', async () => {
    const rsp = await composeWith([entry('cluster-a', 'Failed')]);
    expect(condition(rsp, 'ModelReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'HydrationFailed',
      message: 'ModelCache qwen failed on cluster-a',
    });
  });

  it('the cluster gate comes first: a cache is not looked at until the cluster can be reached', async () => {
    const rsp = await run(requestFor({ xr: replica(withCache()), cluster: null, cache: modelCache('qwen', [readyEntry(HF)]) }));
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ reason: 'WaitingForCluster' });
    expect(engineKeys(rsp)).toEqual([]);
    expect(desiredResources(rsp)['model-cache-usage']).toBeDefined();
  });
});

describe('refused mounts: nothing composed, a Warning', () => {
  it('a contract with a hostPath volume is refused as InvalidCacheMount, naming the problem', async () => {
    const mount = json(HF);
    (mount['volumes'] as JsonObject[])[0] = { name: 'model-cache', hostPath: { path: '/var/lib/models' } };
    const rsp = await composeWith([entry('cluster-a', 'Ready', { mount })]);
    expect(engineKeys(rsp)).toEqual([]);
    const accepted = condition(rsp, 'ModelAccepted');
    expect(accepted).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'InvalidCacheMount' });
    expect(accepted?.message).toBe(
      'ModelCache qwen publishes a mount for cluster-a that engine pods may not use: mount.volumes[0].hostPath is not allowed in a cache mount; mount.volumes[0] must have exactly one of persistentVolumeClaim, image or csi (got 0)',
    );
    expect(condition(rsp, 'ModelReady')).toMatchObject({ reason: 'WaitingForModel' });
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_WARNING', reason: 'InvalidCacheMount', message: accepted?.message }]);
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it.each<[string, (m: JsonObject) => void, string]>([
    [
      'a secret volume',
      (m) => ((m['volumes'] as JsonObject[])[0] = { name: 'model-cache', secret: { secretName: 'x' } }),
      'mount.volumes[0].secret is not allowed',
    ],
    [
      'env from a secret',
      (m) => ((m['env'] as JsonObject[])[0] = { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }),
      'mount.env[0].valueFrom is not allowed',
    ],
    [
      'a mount over /etc',
      (m) => ((m['volumeMounts'] as JsonObject[])[0] = { name: 'model-cache', mountPath: '/etc' }),
      'mount.volumeMounts[0].mountPath must be /mnt/models or a path below it',
    ],
    [
      'the dshm volume name',
      (m) => ((m['volumes'] as JsonObject[])[0] = { name: 'dshm', persistentVolumeClaim: { claimName: 'c' } }),
      'mount.volumes[0].name "dshm" is reserved',
    ],
    [
      'LD_PRELOAD into the model volume',
      (m) => (m['env'] as JsonObject[]).push({ name: 'LD_PRELOAD', value: '/mnt/models/hook.so' }),
      'mount.env[4].name LD_PRELOAD is not a variable a cache mount may set',
    ],
    [
      'HF_HUB_CACHE outside the model volume',
      (m) => ((m['env'] as JsonObject[])[0] = { name: 'HF_HUB_CACHE', value: '/root/.cache' }),
      'mount.env[0].value of HF_HUB_CACHE must be /mnt/models or a path below it',
    ],
  ])('%s is refused', async (_name, change, problem) => {
    const mount = json(HF);
    change(mount);
    const rsp = await composeWith([entry('cluster-a', 'Ready', { mount })]);
    expect(engineKeys(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')?.reason).toBe('InvalidCacheMount');
    expect(condition(rsp, 'ModelAccepted')?.message).toContain(problem);
  });

  it('a ReadWriteOnce claim with a multi-node gang is refused as CacheNotShareable', async () => {
    const rsp = await composeWith([readyEntry(CLAIM, { accessModes: ['ReadWriteOnce'] })], { engines: [GANG] });
    expect(engineKeys(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'CacheNotShareable',
      message:
        "engine main runs pods on several nodes, but ModelCache qwen's claim on cluster-a allows ReadWriteOnce: it must allow ReadWriteMany or ReadOnlyMany (use such a claim, or a single-node engine)",
    });
    expect(rsp.results.map((r) => r.severity)).toEqual(['SEVERITY_WARNING']);
  });

  it.each<[string, string[], JsonObject[], string]>([
    [
      'copies: 4 on ReadWriteOnce',
      ['ReadWriteOnce'],
      [standaloneEngine('main', { args: ARGS, copies: 4 })],
      'engine main (4 copies) runs 4 pods',
    ],
    [
      'two engines on ReadWriteOnce',
      ['ReadWriteOnce'],
      [standaloneEngine('a', { args: ARGS }), standaloneEngine('b', { args: ARGS, copies: 2 })],
      'engines a (1 copy), b (2 copies) run 3 pods',
    ],
    ['copies: 2, the claim reporting no access mode', [], [standaloneEngine('main', { args: ARGS, copies: 2 })], 'allows none'],
  ])('Standalone pods on a claim one node attaches, %s: refused as CacheNotShareable', async (_name, accessModes, engines, text) => {
    const rsp = await composeWith([readyEntry(CLAIM, { accessModes })], { engines });
    expect(engineKeys(rsp)).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'CacheNotShareable' });
    expect(condition(rsp, 'ModelAccepted')?.message).toContain(text);
    expect(condition(rsp, 'ModelAccepted')?.message).toContain('(use such a claim, or one engine with copies: 1)');
    expect(rsp.results.map((r) => r.severity)).toEqual(['SEVERITY_WARNING']);
  });

  it.each<[string, string[] | undefined, JsonObject]>([
    ['ReadOnlyMany with a gang', ['ReadOnlyMany'], GANG],
    ['ReadWriteMany with copies: 4', ['ReadWriteMany'], standaloneEngine('main', { args: ARGS, copies: 4 })],
    ['no access modes reported (not a claim), with copies: 4', undefined, standaloneEngine('main', { args: ARGS, copies: 4 })],
    ['ReadWriteMany and ReadWriteOnce with a gang', ['ReadWriteOnce', 'ReadWriteMany'], GANG],
    ['no access modes reported, with a gang', undefined, GANG],
    ['ReadWriteOnce with a single-pod engine', ['ReadWriteOnce'], NATIVE],
  ])('%s is served', async (_name, accessModes, engine) => {
    const rsp = await composeWith([readyEntry(CLAIM, accessModes ? { accessModes } : {})], { engines: [engine] });
    expect(engineKeys(rsp)).toContain('model-serving-main');
  });
});

interface Source {
  name: string;
  mount: CacheMount;
  volumes: JsonObject[];
  mounts: JsonObject[];
  env: JsonObject[];
  pullSecrets?: JsonObject[];
  readOnly: boolean;
}

const SOURCES: Source[] = [
  {
    name: 'HuggingFace: the staged PVC, read-write, HF_HUB_CACHE',
    mount: HF,
    volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'modelcache-ml-team-qwen-17db2' } }],
    mounts: [{ name: 'model-cache', mountPath: '/mnt/models' }],
    env: [
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
    ],
    readOnly: false,
  },
  {
    name: 'OCI image: an image volume, read-only, with pull secrets',
    mount: OCI_IMAGE,
    volumes: [
      { name: 'model-cache', image: { reference: 'us-docker.pkg.dev/acme/models/qwen@sha256:0123abcd', pullPolicy: 'IfNotPresent' } },
    ],
    mounts: [{ name: 'model-cache', mountPath: '/mnt/models', readOnly: true }],
    env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models' }],
    pullSecrets: [{ name: 'regcred' }],
    readOnly: true,
  },
  {
    name: 'OCI model artifact: the ModelPack CSI volume, read-only, with a subPath',
    mount: OCI_ARTIFACT,
    volumes: [
      {
        name: 'model-cache',
        csi: {
          driver: 'model.csi.modelpack.org',
          readOnly: true,
          volumeAttributes: { 'model.csi.modelpack.org/reference': 'us-docker.pkg.dev/acme/models/qwen@sha256:0123abcd' },
        },
      },
    ],
    mounts: [{ name: 'model-cache', mountPath: '/mnt/models/weights', subPath: 'weights', readOnly: true }],
    env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models/weights' }],
    readOnly: true,
  },
  {
    name: 'PersistentVolumeClaim: the user’s claim, read-only, with a subPath',
    mount: CLAIM,
    volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'qwen-weights', readOnly: true } }],
    mounts: [{ name: 'model-cache', mountPath: '/mnt/models/qwen/v1', subPath: 'qwen/v1', readOnly: true }],
    env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models/qwen/v1' }],
    readOnly: true,
  },
];

describe.each(SOURCES)('each source’s contract in every engine pod: $name', (source) => {
  it.each([
    ['a native pod', NATIVE],
    ['both LWS templates', GANG],
  ])('%s, in the spec’s order, args exactly as written', async (_shape, engine) => {
    const rsp = await composeWith([readyEntry(source.mount, { accessModes: ['ReadOnlyMany'] })], { engines: [engine] });
    const workload = manifest(rsp, 'model-serving-main');
    const gang = workload['kind'] === 'LeaderWorkerSet';
    const templates = podTemplates(workload);
    expect(templates).toHaveLength(gang ? 2 : 1);
    for (const { name, template } of templates) {
      const container = engineOf(template);
      expect(at(template, 'spec', 'volumes'), name).toEqual([SHM.volume, ...source.volumes, ...(source.readOnly ? [HOME.volume] : [])]);
      expect(container['volumeMounts'], name).toEqual([SHM.mount, ...source.mounts, ...(source.readOnly ? [HOME.mount] : [])]);
      expect(container['env'], name).toEqual([
        ...source.env,
        ...(gang ? [LEADER_ENV, RANK_ENV] : []),
        ...(source.readOnly ? [HOME.env] : []),
      ]);
      if (source.pullSecrets) expect(at(template, 'spec', 'imagePullSecrets'), name).toEqual(source.pullSecrets);
      else expect(template['spec'], name).not.toHaveProperty('imagePullSecrets');
    }
    const [first, second] = templates;
    expect(engineOf(first!.template)['args']).toEqual(ARGS);
    if (second) expect(engineOf(second.template)['command']).toEqual(['/bin/sh', '-c', 'exec join $(MODELPLANE_LEADER_ADDRESS)']);
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ reason: 'Deploying' });
    expect(rsp.results).toEqual([
      { severity: 'SEVERITY_NORMAL', reason: 'Composing', message: 'Composing vllm/vllm-openai:latest on cluster-a' },
    ]);
  });
});

describe('shaping the pod', () => {
  const nativePod = (rsp: TestResponse) => podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template;

  it('a read-only contract gets a writable HOME: a bounded scratch volume, mounted, and HOME pointing there', async () => {
    const rsp = await composeWith([readyEntry(OCI_IMAGE)]);
    expect(at(nativePod(rsp), 'spec', 'volumes')).toContainEqual({ name: 'modelplane-home', emptyDir: { sizeLimit: '20Gi' } });
    expect(engineOf(nativePod(rsp))['volumeMounts']).toContainEqual({ name: 'modelplane-home', mountPath: '/modelplane-home' });
    expect(engineOf(nativePod(rsp))['env']).toContainEqual({ name: 'HOME', value: '/modelplane-home' });
  });

  it('a read-write contract gets no HOME scratch volume', async () => {
    const rsp = await composeWith([readyEntry(HF)]);
    expect(JSON.stringify(nativePod(rsp))).not.toContain('modelplane-home');
    expect((engineOf(nativePod(rsp))['env'] as JsonObject[]).map((e) => e['name'])).not.toContain('HOME');
  });

  it('the user’s HOME wins; the scratch volume stays mounted', async () => {
    const engine = standaloneEngine('main', { args: ARGS, env: [{ name: 'HOME', value: '/root' }] });
    const rsp = await composeWith([readyEntry(CLAIM)], { engines: [engine] });
    expect(engineOf(nativePod(rsp))['env']).toEqual([
      { name: 'MODELPLANE_MODEL', value: '/mnt/models/qwen/v1' },
      { name: 'HOME', value: '/root' },
    ]);
    expect(engineOf(nativePod(rsp))['volumeMounts']).toContainEqual(HOME.mount);
  });

  it('user env wins a name clash: the contract’s entry is dropped, the pod has each name once', async () => {
    const user = [
      { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf', key: 'token' } } },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B-Instruct' },
    ];
    const native = await composeWith([readyEntry(HF)], { engines: [standaloneEngine('main', { args: ARGS, env: user })] });
    const contractKept = [
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
      { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
    ];
    expect(engineOf(nativePod(native))['env']).toEqual([...contractKept, ...user]);

    const gangUser = [{ name: 'MODELPLANE_RANK', value: '0' }, ...user];
    const gang = await composeWith([readyEntry(HF)], {
      engines: [gangEngine('main', { leader: { env: gangUser }, worker: { env: gangUser } })],
    });
    for (const { template } of podTemplates(manifest(gang, 'model-serving-main'))) {
      expect(engineOf(template)['env']).toEqual([...contractKept, LEADER_ENV, ...gangUser]);
    }
  });

  it('the user’s own env entries pass through as written, duplicates included', async () => {
    const user = [
      { name: 'A', value: '1' },
      { name: 'A', value: '$(A)2' },
    ];
    const rsp = await composeWith([readyEntry(HF)], { engines: [standaloneEngine('main', { env: user })] });
    expect((engineOf(nativePod(rsp))['env'] as JsonObject[]).slice(HF.env.length)).toEqual(user);
  });

  it('image pull secrets: the user’s, then the contract’s, each once, on every pod', async () => {
    const engine = gangEngine('main', { leader: { imagePullSecrets: ['team-cred', 'regcred'] } });
    const rsp = await composeWith([readyEntry(OCI_IMAGE)], { engines: [engine] });
    const [leader, worker] = podTemplates(manifest(rsp, 'model-serving-main'));
    expect(at(leader!.template, 'spec', 'imagePullSecrets')).toEqual([{ name: 'team-cred' }, { name: 'regcred' }]);
    expect(at(worker!.template, 'spec', 'imagePullSecrets')).toEqual([{ name: 'regcred' }]);
  });

  it('the routing and claims are composed as without a cache once the entry is Ready', async () => {
    const rsp = await composeWith([readyEntry(HF)]);
    expect(engineKeys(rsp)).toEqual([
      'epp',
      'epp-config',
      'epp-role',
      'epp-rolebinding',
      'epp-service',
      'epp-serviceaccount',
      'inference-pool',
      'model-route',
      'model-serving-main',
      'resource-claim-main-standalone',
    ]);
  });
});

describe('the Usage', () => {
  const usage = {
    apiVersion: 'protection.crossplane.io/v1beta1',
    kind: 'Usage',
    spec: {
      of: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache', resourceRef: { name: 'qwen' } },
      reason: 'ModelReplica test-replica in namespace ml-team serves a model from this cache',
      replayDeletion: true,
    },
  };

  it.each<[string, JsonObject[] | null]>([
    ['while the cache is absent', null],
    ['while hydrating', [entry('cluster-a', 'Hydrating')]],
    ['while failed', [entry('cluster-a', 'Failed', { message: 'x' })]],
    ['when serving', [readyEntry(HF)]],
  ])('is composed whenever a cache is referenced: %s', async (_name, entries) => {
    const rsp = await composeWith(entries);
    expect(desiredResources(rsp)['model-cache-usage']).toEqual(usage);
  });

  it('is ready once observed', async () => {
    const first = await composeWith([readyEntry(HF)]);
    const rsp = await composeWith([readyEntry(HF)], {}, { 'model-cache-usage': observeAll(first)['model-cache-usage']! });
    expect(rsp.desired?.resources['model-cache-usage']?.ready).toBe('READY_TRUE');
  });

  it('writes no status of its own onto the replica', async () => {
    expect(compositeStatus(await composeWith([entry('cluster-a', 'Hydrating')]))).toEqual({});
  });
});

describe('a cache that flaps never tears down a serving model', () => {
  it.each<[string, JsonObject[] | null, string]>([
    ['the entry goes back to Hydrating', [entry('cluster-a', 'Hydrating', { message: 're-staging' })], 'Hydrating'],
    ['the entry reports no mount', [entry('cluster-a', 'Ready')], 'Hydrating'],
    ['the cluster leaves the footprint', [], 'CacheNotOnCluster'],
    ['the cache is briefly not found', null, 'WaitingForCache'],
    ['the entry Fails', [entry('cluster-a', 'Failed', { message: 'PVC lost' })], 'HydrationFailed'],
    ['the mount turns invalid', [entry('cluster-a', 'Ready', { mount: { volumes: [] } })], 'InvalidCacheMount'],
  ])('%s: everything composed and observed stays desired exactly as it was', async (_name, entries, reason) => {
    const serving = await composeWith([readyEntry(HF)]);
    const observed = observeAll(serving);
    const steady = await composeWith([readyEntry(HF)], {}, observed);
    expect(condition(steady, 'ModelReady')).toMatchObject({ reason: 'Serving' });

    const flapped = await composeWith(entries, {}, observed);
    expect(desiredResources(flapped)).toEqual(desiredResources(serving));
    expect(condition(flapped, 'ModelAccepted')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason });
    expect(flapped.desired?.composite?.ready).toBe('READY_FALSE');
    // Observed and Ready stays marked so: Crossplane sees nothing to undo.
    expect(flapped.desired?.resources['model-serving-main']?.ready).toBe('READY_TRUE');
    expect(flapped.results.filter((r) => r.severity === 'SEVERITY_NORMAL')).toEqual([]);
  });

  it('an observed workload that is not Ready stays desired, not marked ready', async () => {
    const serving = await composeWith([readyEntry(HF)]);
    const observed = observeAll(serving, (key) => key !== 'model-serving-main');
    const rsp = await composeWith([entry('cluster-a', 'Hydrating')], {}, observed);
    expect(desiredResources(rsp)['model-serving-main']).toEqual(desiredResources(serving)['model-serving-main']);
    expect(rsp.desired?.resources['model-serving-main']?.ready).toBe('READY_UNSPECIFIED');
  });

  // Found by the hardening determinism test: Crossplane sends observed resources in any order.
  it('keeps them in the same order however the observed resources arrive', async () => {
    const observed = observeAll(await composeWith([readyEntry(HF)]));
    const reversed = Object.fromEntries(Object.entries(observed).reverse());
    const keys = async (resources: typeof observed) =>
      Object.keys(desiredResources(await composeWith([entry('cluster-a', 'Hydrating')], {}, resources)));
    const inOrder = await keys(observed);
    expect(await keys(reversed)).toEqual(inOrder);
    expect(inOrder).toEqual([...inOrder].sort());
  });

  it('a resource composed but not yet observed is not kept (nothing exists to protect)', async () => {
    const serving = await composeWith([readyEntry(HF)]);
    const observed = observeAll(serving);
    delete observed['epp-service'];
    const rsp = await composeWith([entry('cluster-a', 'Hydrating')], {}, observed);
    expect(desiredResources(rsp)).not.toHaveProperty('epp-service');
    expect(desiredResources(rsp)).toHaveProperty('model-serving-main');
  });
});
