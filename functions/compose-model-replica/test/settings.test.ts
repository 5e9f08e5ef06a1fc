// ReplicaSettings (issue 15): the replica's workload namespace. Everything a
// replica puts on a workload cluster goes into one namespace: its cache's
// (a pod can mount only a claim in its own namespace), else where its engines
// already run, else what the settings say; a Namespace Object without Delete
// creates a per-team one; a difference from the settings is a Warning.

import { describe, expect, it } from 'vitest';
import {
  NAMESPACE_POLICIES,
  SETTINGS_API_VERSION,
  WORKLOAD_NAMESPACE_ENV,
  huggingFaceMount,
  workloadNamespace,
  type CacheMount,
  type JsonObject,
} from '#lib';
import { desiredResources, manifestOf, type TestResponse } from '#testing';
import {
  NAMESPACE,
  asObserved,
  cluster,
  entry,
  gangEngine,
  modelCache,
  replica,
  requestFor,
  run,
  standaloneEngine,
  type ReplicaOptions,
} from './support.js';

const TEAM = workloadNamespace('PerTeam', NAMESPACE, 'cluster-a');
const PER_TEAM: JsonObject = { apiVersion: SETTINGS_API_VERSION, kind: 'ReplicaSettings', workloadNamespace: 'PerTeam' };
const SHARED: JsonObject = { apiVersion: SETTINGS_API_VERSION, kind: 'ReplicaSettings' };

const HF = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });
const inTeam = (mount: CacheMount): JsonObject =>
  structuredClone({ ...mount, env: [...mount.env, { name: WORKLOAD_NAMESPACE_ENV, value: TEAM }] }) as unknown as JsonObject;
const inDefault = (mount: CacheMount): JsonObject => structuredClone(mount) as unknown as JsonObject;

async function compose(
  input: JsonObject | undefined,
  options: ReplicaOptions = {},
  mount?: JsonObject,
  observed?: Record<string, JsonObject>,
): Promise<TestResponse> {
  const req = requestFor({
    xr: replica({ ...(mount ? { cache: 'qwen' } : {}), ...options }),
    cluster: cluster(),
    ...(mount ? { cache: modelCache('qwen', [entry('cluster-a', 'Ready', { mount })]) } : {}),
    ...(observed ? { observed } : {}),
  });
  if (input) req.input = input;
  return run(req);
}

/** The namespace of every remote object a response composes (the Usage and the namespace itself aside). */
function remoteNamespaces(rsp: TestResponse): Set<string | undefined> {
  const out = new Set<string | undefined>();
  for (const [key, object] of Object.entries(desiredResources(rsp))) {
    if (object['kind'] !== 'Object' || key === 'workload-namespace') continue;
    out.add((manifestOf(object) as { metadata?: { namespace?: string } }).metadata?.namespace);
  }
  return out;
}

const warnings = (rsp: TestResponse): string[] => rsp.results.filter((r) => r.severity === 'SEVERITY_WARNING').map((r) => r.message);

describe('no input, or Shared', () => {
  it('composes exactly what it composed before the settings existed', async () => {
    for (const options of [{}, { engines: [gangEngine()] }, { serving: undefined }] as ReplicaOptions[]) {
      const bare = await compose(undefined, options, inDefault(HF));
      const shared = await compose(SHARED, options, inDefault(HF));
      expect(shared.desired).toEqual(bare.desired);
      expect(remoteNamespaces(bare)).toEqual(new Set(['default']));
      expect(desiredResources(bare)).not.toHaveProperty('workload-namespace');
    }
  });
});

describe('PerTeam', () => {
  it('puts every engine, claim template and routing object of a cache-less replica in the team namespace, created without Delete', async () => {
    for (const engines of [[standaloneEngine()], [gangEngine()]]) {
      const rsp = await compose(PER_TEAM, { engines });
      expect(remoteNamespaces(rsp)).toEqual(new Set([TEAM]));
      const ns = desiredResources(rsp)['workload-namespace']!;
      expect(manifestOf(ns)).toEqual({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: TEAM, labels: { 'modelplane.ai/namespace': NAMESPACE } },
      });
      expect((ns as { spec: { managementPolicies: string[] } }).spec.managementPolicies).toEqual([...NAMESPACE_POLICIES]);
      expect(warnings(rsp)).toEqual([]);
    }
  });

  it('runs beside its cache staged in the team namespace', async () => {
    const rsp = await compose(PER_TEAM, {}, inTeam(HF));
    expect(remoteNamespaces(rsp)).toEqual(new Set([TEAM]));
    expect(warnings(rsp)).toEqual([]);
  });
});

describe('when the settings and what exists differ, nothing moves, and the replica says so', () => {
  it('a cache staged in default before the switch: the replica runs beside it, in default', async () => {
    const rsp = await compose(PER_TEAM, {}, inDefault(HF));
    expect(remoteNamespaces(rsp)).toEqual(new Set(['default']));
    expect(desiredResources(rsp)).not.toHaveProperty('workload-namespace');
    expect(warnings(rsp).join('\n')).toContain(
      `ModelCache qwen is staged in namespace default on cluster-a, and the ReplicaSettings name ${TEAM}`,
    );
  });

  it('a cache in the team namespace and a Composition still Shared: the replica follows the cache', async () => {
    const rsp = await compose(undefined, {}, inTeam(HF));
    expect(remoteNamespaces(rsp)).toEqual(new Set([TEAM]));
    expect(warnings(rsp).join('\n')).toContain(`staged in namespace ${TEAM}`);
  });

  it('a cache-less replica already running in default stays there after the switch', async () => {
    const before = await compose(undefined, {});
    const observed: Record<string, JsonObject> = {};
    for (const [key, object] of Object.entries(desiredResources(before))) observed[key] = asObserved(object, true);
    const rsp = await compose(PER_TEAM, {}, undefined, observed);
    expect(remoteNamespaces(rsp)).toEqual(new Set(['default']));
    expect(warnings(rsp).join('\n')).toContain(`already runs in namespace default on cluster-a`);
  });
});

describe('a bad setting', () => {
  it.each([
    [{ ...PER_TEAM, kind: 'HydrationSettings' }, 'input.kind must be ReplicaSettings'],
    [{ ...PER_TEAM, workloadNamespace: 'team' }, 'input.workloadNamespace must be one of Shared, PerTeam'],
  ])('%j is Fatal, naming the field', async (input, message) => {
    const rsp = await compose(input);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL').map((r) => r.message)).toEqual([expect.stringContaining(message)]);
  });
});
