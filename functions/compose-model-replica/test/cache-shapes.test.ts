// The cache gate for every serving shape: PrefillDecode (native, and with a
// LeaderWorkerSet or Grove decode gang) and the Dynamo stack (a Standalone
// engine, a Grove gang). Each composes no engine until the cache is Ready on
// its cluster; then every engine pod template (prefill and decode, leader and
// worker, every clique) carries the contract in the same order as a Unified
// Deployment; a read-only contract brings the writable HOME; a ReadWriteOnce
// claim is refused for any shape that runs pods on several nodes.

import { describe, expect, it } from 'vitest';
import { claimMount, huggingFaceMount, ociImageMount, type CacheMount, type JsonObject } from '#lib';
import { condition, desiredResources, type TestResponse } from '#testing';
import {
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
} from './support.js';

const ARGS = ['--model=$(MODELPLANE_MODEL)'];
const phased = (engine: JsonObject, phase: string): JsonObject => ({ ...engine, phase });
const PD = { mode: 'PrefillDecode' };

interface Shape {
  name: string;
  stack: 'Standard' | 'Dynamo';
  serving?: JsonObject;
  engines: JsonObject[];
  /** Runs pods on several nodes: a claim one node attaches is refused. */
  spread: boolean;
}

const SHAPES: Shape[] = [
  {
    name: 'PrefillDecode, two native engines',
    stack: 'Standard',
    serving: PD,
    engines: [phased(standaloneEngine('prefill', { args: ARGS }), 'Prefill'), phased(standaloneEngine('decode', { args: ARGS }), 'Decode')],
    spread: true,
  },
  {
    name: 'PrefillDecode, a LeaderWorkerSet decode',
    stack: 'Standard',
    serving: PD,
    engines: [
      phased(standaloneEngine('prefill', { args: ARGS }), 'Prefill'),
      phased(gangEngine('decode', { leader: { args: ARGS } }), 'Decode'),
    ],
    spread: true,
  },
  {
    name: 'PrefillDecode on Dynamo, a Grove decode',
    stack: 'Dynamo',
    serving: PD,
    engines: [
      phased(standaloneEngine('prefill', { args: ARGS }), 'Prefill'),
      phased(gangEngine('decode', { leader: { args: ARGS } }), 'Decode'),
    ],
    spread: true,
  },
  { name: 'Dynamo, a Standalone engine', stack: 'Dynamo', engines: [standaloneEngine('main', { args: ARGS })], spread: false },
  { name: 'Dynamo, a Grove gang', stack: 'Dynamo', engines: [gangEngine('main', { leader: { args: ARGS } })], spread: true },
];

const HF = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });
const CLAIM = claimMount({ claimName: 'qwen-weights', subPath: 'qwen/v1' });
const OCI = ociImageMount({ reference: 'us-docker.pkg.dev/acme/models/qwen@sha256:0123abcd', imagePullSecrets: ['regcred'] });
const json = (mount: CacheMount): JsonObject => structuredClone(mount) as unknown as JsonObject;
const SHM = { volume: { name: 'dshm', emptyDir: { medium: 'Memory' } }, mount: { name: 'dshm', mountPath: '/dev/shm' } };
const HOME = {
  volume: { name: 'modelplane-home', emptyDir: { sizeLimit: '20Gi' } },
  mount: { name: 'modelplane-home', mountPath: '/modelplane-home' },
  env: { name: 'HOME', value: '/modelplane-home' },
};

function compose(shape: Shape, entries: JsonObject[], observed?: Record<string, JsonObject>): Promise<TestResponse> {
  const xr = replica({ name: 'r', cache: 'qwen', engines: shape.engines, ...(shape.serving ? { serving: shape.serving } : {}) });
  return run(
    requestFor({
      xr,
      cluster: cluster('cluster-a', { stack: shape.stack }),
      cache: modelCache('qwen', entries),
      ...(observed ? { observed } : {}),
    }),
  );
}
const ready = (mount: CacheMount, options: EntryOptions = {}) => [entry('cluster-a', 'Ready', { mount: json(mount), ...options })];
const workloads = (rsp: TestResponse) =>
  Object.keys(desiredResources(rsp))
    .filter((k) => k.startsWith('model-serving-'))
    .map((k) => manifest(rsp, k));

describe.each(SHAPES)('the cache gate: $name', (shape) => {
  it.each([
    ['Pending', [entry('cluster-a', 'Pending')], 'Hydrating'],
    ['Hydrating', [entry('cluster-a', 'Hydrating', { message: 'downloading' })], 'Hydrating'],
    ['Ready without a mount', [entry('cluster-a', 'Ready')], 'Hydrating'],
    ['not in the footprint', [], 'CacheNotOnCluster'],
    ['Failed', [entry('cluster-a', 'Failed', { message: 'Job failed' })], 'HydrationFailed'],
  ])('composes no engine while the entry is %s', async (_phase, entries, reason) => {
    const rsp = await compose(shape, entries);
    expect(Object.keys(desiredResources(rsp))).toEqual(['model-cache-usage']);
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it.each([
    ['HuggingFace, read-write', HF, false],
    ['a read-only claim', CLAIM, true],
    ['an OCI image, read-only, with a pull secret', OCI, true],
  ])('once Ready (%s), the contract reaches every engine pod template in the fixed order', async (_name, mount, readOnly) => {
    const rsp = await compose(shape, ready(mount, { accessModes: ['ReadOnlyMany'] }));
    const templates = workloads(rsp).flatMap((w) => podTemplates(w).map((t) => ({ ...t, kind: w['kind'] as string })));
    // Every engine's every template: a Deployment's pod, an LWS leader and worker, both Grove cliques.
    expect(templates.length).toBe(shape.engines.reduce((n, e) => n + (e['members'] as JsonObject[]).length, 0));
    for (const { name, template, kind } of templates) {
      const at_ = `${kind} ${name}`;
      const volumes = at(template, 'spec', 'volumes') as JsonObject[];
      const container = engineOf(template);
      // dshm first, then the contract's, then HOME (read-only); PrefillDecode's serving pods add nixl-shm last.
      expect(volumes.slice(0, 1 + mount.volumes.length + (readOnly ? 1 : 0)), at_).toEqual([
        SHM.volume,
        ...(json(mount)['volumes'] as JsonObject[]),
        ...(readOnly ? [HOME.volume] : []),
      ]);
      expect(container['volumeMounts'], at_).toEqual([
        SHM.mount,
        ...(json(mount)['volumeMounts'] as JsonObject[]),
        ...(readOnly ? [HOME.mount] : []),
      ]);
      const env = container['env'] as JsonObject[];
      // The contract's env first.
      expect(env.slice(0, mount.env.length), at_).toEqual(json(mount)['env']);
      if (readOnly) expect(env, at_).toContainEqual(HOME.env);
      else
        expect(
          env.map((e) => e['name']),
          at_,
        ).not.toContain('HOME');
      if (mount.imagePullSecrets) expect(at(template, 'spec', 'imagePullSecrets'), at_).toEqual(mount.imagePullSecrets);
      // Args exactly as written, never a --model of ours.
      if (container['args'] !== undefined) expect(container['args'], at_).toEqual(ARGS);
    }
    expect(condition(rsp, 'ModelAccepted')).toMatchObject({ reason: 'Deploying' });
  });

  it(`a ReadWriteOnce claim is ${shape.spread ? 'refused as CacheNotShareable' : 'served (one pod)'}`, async () => {
    const rsp = await compose(shape, ready(CLAIM, { accessModes: ['ReadWriteOnce'] }));
    if (shape.spread) {
      expect(Object.keys(desiredResources(rsp))).toEqual(['model-cache-usage']);
      expect(condition(rsp, 'ModelAccepted')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'CacheNotShareable' });
      expect(rsp.results.map((r) => r.severity)).toEqual(['SEVERITY_WARNING']);
    } else {
      expect(workloads(rsp)).toHaveLength(1);
    }
  });

  it('a cache that flaps keeps everything composed and observed exactly as it was', async () => {
    const serving = await compose(shape, ready(HF));
    const observed = observeAll(serving);
    const flapped = await compose(shape, [entry('cluster-a', 'Hydrating')], observed);
    expect(desiredResources(flapped)).toEqual(desiredResources(serving));
    expect(flapped.desired?.composite?.ready).toBe('READY_FALSE');
  });
});

describe('CacheNotShareable says what runs on several nodes', () => {
  it('PrefillDecode: its two engines', async () => {
    const rsp = await compose(SHAPES[0]!, ready(CLAIM, { accessModes: ['ReadWriteOnce'] }));
    expect(condition(rsp, 'ModelAccepted')?.message).toBe(
      "serving.mode PrefillDecode runs engines prefill (Prefill, 1 copy), decode (Decode, 1 copy) as 2 pods, which may land on several nodes, but ModelCache qwen's claim on cluster-a allows ReadWriteOnce: it must allow ReadWriteMany or ReadOnlyMany (use such a claim, or Unified serving with one engine with copies: 1)",
    );
  });

  it('a Grove gang, as a LeaderWorkerSet', async () => {
    const rsp = await compose(SHAPES[4]!, ready(CLAIM, { accessModes: ['ReadWriteOnce'] }));
    expect(condition(rsp, 'ModelAccepted')?.message).toContain('engine main runs pods on several nodes');
  });
});
