// The lifecycle walkthrough: one ModelCache (HuggingFace) over three
// InferenceClusters, its three ModelCacheHydration children, and a
// ModelReplica that waits for the cache on its cluster and then starts, all
// through the three real gRPC servers. The control plane (Crossplane's loop:
// requirements, desired -> observed, the XR's status written back) and the
// workload clusters with their provider-kubernetes are the doubles in
// test/support (control-plane.ts, workload-cluster.ts). docs/walkthrough.md
// tells the same story with excerpts this test produces; the last test checks
// they are current (UPDATE_DOCS=1, or `make docs`, rewrites them).
//
// The objects are the ones in examples/: the clusters and the cache of
// examples/model-cache/first-compose, the token Secret of
// examples/model-cache-hydration/huggingface-first-compose, the replica of
// examples/model-replica/cache-ready.

import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIND, MODELPLANE_API_VERSION, asArray, getIn, getObject, getString, type JsonObject, type RunFunctionResponse } from '#lib';
import {
  ControlPlane,
  FUNCTION_NAMES,
  ProviderKubernetes,
  REPO_ROOT,
  WorkloadCluster,
  badValues,
  loadXrd,
  startServer,
  validateXr,
  type RecordedEvent,
  type RunningServer,
} from '#testing';
import { exampleFunctions, findCompositions } from '../render/examples.js';
import { readYamlObject, readYamlStream } from '../render/yaml.js';
import { checkOrUpdate } from './excerpts.js';

const DOC = join(REPO_ROOT, 'docs', 'walkthrough.md');
const NAMESPACE = 'ml-team';
const CACHE = 'qwen';
const REPLICA = 'qwen-chat-7d2e4';
const [US_EAST, US_WEST, EU_WEST] = ['us-east-a100', 'us-west-a100', 'eu-west-a100'] as const;
/** Crossplane calls again within a minute (the functions' response TTL); the clusters move on a minute at a time. */
const TICK_SECONDS = 60;

const example = (path: string) => join(REPO_ROOT, 'examples', path);
const inferenceClusters = readYamlStream(example('model-cache/first-compose/required.yaml'));
const tokenSecret = readYamlStream(example('model-cache-hydration/huggingface-first-compose/required.yaml')).find(
  (doc) => doc['kind'] === 'Secret',
)!;
const TOKEN_BASE64 = getString(tokenSecret, 'data', 'HF_TOKEN')!;
const TOKEN = Buffer.from(TOKEN_BASE64, 'base64').toString('utf8');
const XRDS = {
  [KIND.ModelCache]: loadXrd('package/modelcaches/definition.yaml'),
  [KIND.ModelCacheHydration]: loadXrd('package/modelcachehydrations/definition.yaml'),
  [KIND.ModelReplica]: loadXrd('package/modelreplicas/definition.yaml'),
} as const;

let servers: RunningServer[] = [];
let controlPlane: ControlPlane;
const clusters = new Map<string, WorkloadCluster>();
/** What docs/walkthrough.md shows, by excerpt name. */
const excerpts = new Map<string, unknown>();
/** How many reconciles the invariants have looked at. */
let checked = 0;

beforeAll(async () => {
  servers = await Promise.all(FUNCTION_NAMES.map((name) => startServer(name)));
  const targets: Record<string, string> = {};
  for (const fn of exampleFunctions(REPO_ROOT)) targets[fn.name] = servers.find((server) => server.name === fn.server)!.address;
  for (const cluster of inferenceClusters) {
    const providerConfig = getString(cluster, 'status', 'providerConfigRef', 'name')!;
    clusters.set(
      getString(cluster, 'metadata', 'name')!,
      new WorkloadCluster({ providerConfig, storageClasses: [getString(cluster, 'status', 'cache', 'storageClassName')!] }),
    );
  }
  controlPlane = new ControlPlane({
    compositions: findCompositions(REPO_ROOT).map((found) => found.composition),
    targets,
    provider: new ProviderKubernetes([...clusters.values()]),
  });
  for (const cluster of inferenceClusters) controlPlane.apply(cluster);
  controlPlane.apply(tokenSecret);
});

afterAll(async () => {
  controlPlane.close();
  await Promise.all(servers.map((server) => server.stop()));
});

// --- reading the world --------------------------------------------------------

function cache(): JsonObject {
  return controlPlane.get(MODELPLANE_API_VERSION, KIND.ModelCache, NAMESPACE, CACHE)!;
}

function replica(): JsonObject {
  return controlPlane.get(MODELPLANE_API_VERSION, KIND.ModelReplica, NAMESPACE, REPLICA)!;
}

function child(cluster: string): JsonObject {
  const found = controlPlane.list(KIND.ModelCacheHydration).find((c) => getString(c, 'spec', 'clusterName') === cluster);
  if (!found) throw new Error(`no ModelCacheHydration for ${cluster}`);
  return found;
}

function workloadCluster(name: string): WorkloadCluster {
  return clusters.get(name)!;
}

function condition(object: JsonObject, type: string): JsonObject | undefined {
  const found = asArray(getIn(object, 'status', 'conditions')).find((c) => getString(c, 'type') === type);
  if (found === undefined) return undefined;
  // When it changed is the story's business, not the assertion's.
  return Object.fromEntries(Object.entries(found as JsonObject).filter(([field]) => field !== 'lastTransitionTime'));
}

function conditions(object: JsonObject): unknown {
  return getIn(object, 'status', 'conditions');
}

/** `cluster: phase` for every entry of the cache's status.clusters[]. */
function phases(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of asArray(getIn(cache(), 'status', 'clusters'))) out[getString(entry, 'name')!] = getString(entry, 'phase')!;
  return out;
}

function composedKeys(xr: JsonObject): string[] {
  return Object.keys(controlPlane.composed(xr)).sort();
}

function composedObject(xr: JsonObject, key: string): JsonObject {
  const found = controlPlane.composed(xr)[key];
  if (!found) throw new Error(`${getString(xr, 'metadata', 'name') ?? ''} composes no ${key}`);
  return found;
}

function responses(xr: string): RunFunctionResponse[] {
  return controlPlane.reconciles.filter((r) => r.xr === xr).map((r) => r.response);
}

/** A response's requirements, as a person would write the selectors. */
function requirements(rsp: RunFunctionResponse): JsonObject {
  const out: JsonObject = {};
  for (const [key, selector] of Object.entries(rsp.requirements?.resources ?? {})) {
    const written: JsonObject = { apiVersion: selector.apiVersion, kind: selector.kind };
    if (selector.matchName !== undefined) written['matchName'] = selector.matchName;
    if (selector.matchLabels !== undefined) written['matchLabels'] = { ...selector.matchLabels.labels };
    if (selector.namespace !== undefined) written['namespace'] = selector.namespace;
    out[key] = written;
  }
  return out;
}

function events(): JsonObject[] {
  return controlPlane.takeEvents().map((event: RecordedEvent) => ({
    type: event.type,
    reason: event.reason,
    object: event.object,
    message: event.message,
  }));
}

function pick(object: unknown, ...fields: string[]): JsonObject {
  const out: JsonObject = {};
  for (const field of fields) {
    const value = getIn(object, field);
    if (value !== undefined) out[field] = value as JsonObject;
  }
  return out;
}

function manifest(object: JsonObject): JsonObject {
  return getObject(object, 'spec', 'forProvider', 'manifest') ?? {};
}

function remote(object: JsonObject): JsonObject | undefined {
  return getObject(object, 'status', 'atProvider', 'manifest');
}

/** A provider-kubernetes Object as the doc shows it: what it asks of the cluster, without the metadata Crossplane adds. */
function objectSpec(object: JsonObject): JsonObject {
  return { apiVersion: getString(object, 'apiVersion')!, kind: getString(object, 'kind')!, spec: getObject(object, 'spec')! };
}

/** What provider-kubernetes reports about an Object: the remote object's status and the Object's conditions. */
function objectStatus(object: JsonObject): JsonObject {
  return {
    status: {
      atProvider: { manifest: { status: getObject(remote(object), 'status') ?? {} } },
      conditions: getIn(object, 'status', 'conditions') as JsonObject[],
    },
  };
}

function cacheStatus(...fields: string[]): JsonObject {
  return { status: pick(getObject(cache(), 'status'), ...fields) };
}

// --- what must hold at every step ---------------------------------------------

/** Every path in a value where `needle` occurs in a string. */
function occurrences(value: unknown, needle: string, path = ''): string[] {
  if (typeof value === 'string') return value.includes(needle) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => occurrences(item, needle, `${path}[${i}]`));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => occurrences(item, needle, path ? `${path}.${key}` : key));
  }
  return [];
}

function expectInvariants(): void {
  // Each reconcile asked for everything at once (two calls at most) and answered without null or NaN.
  for (const record of controlPlane.reconciles.slice(checked)) {
    expect(record.calls, `${record.xr} at ${record.at}s`).toBeLessThanOrEqual(2);
    expect(badValues(record.response), `${record.xr} at ${record.at}s`).toEqual([]);
  }
  checked = controlPlane.reconciles.length;

  // Every XR, status included, is one its XRD admits.
  for (const [kind, xrd] of Object.entries(XRDS)) {
    for (const xr of controlPlane.list(kind)) expect(validateXr(xrd, xr), `${kind} ${getString(xr, 'metadata', 'name') ?? ''}`).toEqual([]);
  }

  // The token is in the control-plane Secret, and in the data of the workload Secrets; nowhere else.
  const allowed = /^(data|spec\.forProvider\.manifest\.data|status\.atProvider\.manifest\.data)\.HF_TOKEN$/;
  for (const needle of [TOKEN_BASE64, TOKEN]) {
    for (const object of controlPlane.all()) {
      expect(
        occurrences(object, needle).filter((path) => !allowed.test(path)),
        getString(object, 'metadata', 'name'),
      ).toEqual([]);
    }
    for (const [name, cluster] of clusters) {
      for (const object of cluster.list()) {
        expect(
          occurrences(object, needle).filter((path) => !allowed.test(path)),
          `${name}: ${getString(object, 'metadata', 'name') ?? ''}`,
        ).toEqual([]);
      }
    }
    for (const record of controlPlane.reconciles) {
      expect(occurrences([record.response.desired?.composite, record.response.conditions, record.response.results], needle)).toEqual([]);
    }
  }
}

// --- the story ----------------------------------------------------------------

describe('walkthrough: one ModelCache over three clusters, one failing and recovering, and a replica that waits for it', () => {
  it('00:00 the platform team applies the ModelCache: three children stamped, 0/3', async () => {
    const applied = readYamlObject(example('model-cache/first-compose/xr.yaml'));
    excerpt('cache', applied);
    controlPlane.apply(applied);
    await controlPlane.settle();

    // The requirements loop: the first call only asked; the second had the clusters and replicas, and asked the same.
    const [first] = controlPlane.reconciles.filter((r) => r.xr === `ModelCache/${CACHE}`);
    expect(first?.calls).toBe(2);
    excerpt('cache-requirements', requirements(first!.response));
    expect(Object.keys(first!.response.desired?.resources ?? {})).toEqual([
      `hydration-${EU_WEST}`,
      `hydration-${US_EAST}`,
      `hydration-${US_WEST}`,
    ]);

    const usWest = child(US_WEST);
    excerpt('child', {
      apiVersion: getString(usWest, 'apiVersion')!,
      kind: getString(usWest, 'kind')!,
      metadata: pick(getObject(usWest, 'metadata'), 'name', 'namespace', 'labels', 'annotations'),
      spec: { ...getObject(usWest, 'spec')!, crossplane: undefined },
    });
    expect(getString(usWest, 'metadata', 'name')).toBe('modelcache-ml-team-qwen-us-west-a100-4c5b1');

    const usEast = child(US_EAST);
    excerpt('child-requirements', requirements(responses(`ModelCacheHydration/${getString(usEast, 'metadata', 'name')!}`)[0]!));
    expect(composedKeys(usEast)).toEqual(['auth', 'hydrate', 'pvc']);
    excerpt('pvc-object', objectSpec(composedObject(usEast, 'pvc')));
    const job = composedObject(usEast, 'hydrate');
    const container = asArray(getIn(manifest(job), 'spec', 'template', 'spec', 'containers'))[0] as JsonObject;
    excerpt('job-object', {
      spec: {
        managementPolicies: getIn(job, 'spec', 'managementPolicies') as string[],
        readiness: getObject(job, 'spec', 'readiness')!,
        forProvider: {
          manifest: {
            kind: 'Job',
            metadata: pick(getObject(manifest(job), 'metadata'), 'name', 'annotations'),
            spec: {
              ...pick(getObject(manifest(job), 'spec'), 'backoffLimit', 'ttlSecondsAfterFinished'),
              template: { spec: { containers: [pick(container, 'name', 'image', 'env', 'volumeMounts')] } },
            },
          },
        },
      },
    });
    // The token reaches the Job only through the workload Secret.
    expect(getIn(container, 'env')).toContainEqual({
      name: 'HF_TOKEN',
      valueFrom: { secretKeyRef: { name: 'modelcache-ml-team-qwen-auth-ae01b', key: 'HF_TOKEN' } },
    });

    expect(phases()).toEqual({ [EU_WEST]: 'Pending', [US_EAST]: 'Pending', [US_WEST]: 'Pending' });
    excerpt('cache-pending', cacheStatus('summary', 'clusters', 'conditions'));
    expect(condition(cache(), 'ArtifactReady')).toMatchObject({ status: 'False', reason: 'Hydrating' });
    expect(condition(cache(), 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'Creating' });

    for (const name of [US_EAST, US_WEST, EU_WEST]) {
      expect(workloadCluster(name).inventory()).toEqual([
        'Job/modelcache-ml-team-qwen-hydrate-256ec',
        'PersistentVolumeClaim/modelcache-ml-team-qwen-17db2',
        'Secret/modelcache-ml-team-qwen-auth-ae01b',
      ]);
    }
    excerpt('events-first-compose', events());
    expectInvariants();
  });

  it('00:00 the ML team applies a ModelReplica on us-east-a100: it waits, composing no engine', async () => {
    const applied = readYamlObject(example('model-replica/cache-ready/xr.yaml'));
    excerpt('replica', applied);
    controlPlane.apply(applied);
    await controlPlane.settle();

    expect(composedKeys(replica())).toEqual(['model-cache-usage']);
    expect(condition(replica(), 'ModelAccepted')).toMatchObject({ status: 'False', reason: 'Hydrating' });
    excerpt('replica-waiting', { status: { conditions: conditions(replica()) } });
    excerpt('usage', objectSpec(composedObject(replica(), 'model-cache-usage')));
    // Nothing of the replica's is on the cluster.
    expect(workloadCluster(US_EAST).inventory()).toHaveLength(3);
    expect(events()).toEqual([]);
    expectInvariants();
  });

  it('00:01 the claims bind and the downloads start: every cluster Hydrating', async () => {
    await controlPlane.advance(TICK_SECONDS);

    excerpt('pvc-bound', objectStatus(composedObject(child(US_EAST), 'pvc')));
    expect(phases()).toEqual({ [EU_WEST]: 'Hydrating', [US_EAST]: 'Hydrating', [US_WEST]: 'Hydrating' });
    excerpt('cache-hydrating', cacheStatus('summary', 'clusters'));
    expect(condition(cache(), 'ArtifactReady')).toMatchObject({ status: 'False', reason: 'Hydrating' });
    expect(composedKeys(replica())).toEqual(['model-cache-usage']);
    expect(condition(replica(), 'ModelAccepted')).toMatchObject({ status: 'False', reason: 'Hydrating' });
    expect(events()).toEqual([]);
    expectInvariants();
  });

  it('00:02 two downloads complete, the one on us-west-a100 fails: 2/3, HydrationFailed naming it; the replica starts', async () => {
    // Something on us-west-a100 makes every download fail there (in the story: its egress proxy refuses huggingface.co).
    workloadCluster(US_WEST).failJobs('egress to huggingface.co is blocked');
    await controlPlane.advance(TICK_SECONDS);

    const failedJob = composedObject(child(US_WEST), 'hydrate');
    expect(condition({ status: getObject(remote(failedJob), 'status') ?? {} }, 'Failed')).toMatchObject({
      status: 'True',
      reason: 'BackoffLimitExceeded',
    });
    excerpt('job-failed', objectStatus(failedJob));
    excerpt('child-failed', {
      status: {
        ...pick(getObject(child(US_WEST), 'status'), 'phase', 'message'),
        conditions: [condition(child(US_WEST), 'ArtifactReady')!],
      },
    });

    expect(phases()).toEqual({ [EU_WEST]: 'Ready', [US_EAST]: 'Ready', [US_WEST]: 'Failed' });
    excerpt('cache-failed', cacheStatus('summary', 'clusters', 'conditions'));
    expect(getIn(cache(), 'status', 'summary', 'ready')).toBe('2/3');
    expect(condition(cache(), 'ArtifactReady')).toEqual({
      type: 'ArtifactReady',
      status: 'False',
      reason: 'HydrationFailed',
      message:
        'us-west-a100: hydration Job modelcache-ml-team-qwen-hydrate-256ec on us-west-a100 failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    });

    // Ready children keep only the claim: the Job is left to its TTL, the token Secret is deleted from the cluster.
    expect(composedKeys(child(US_EAST))).toEqual(['pvc']);
    expect(workloadCluster(EU_WEST).inventory()).toEqual([
      'Job/modelcache-ml-team-qwen-hydrate-256ec',
      'PersistentVolumeClaim/modelcache-ml-team-qwen-17db2',
    ]);
    expect(composedKeys(child(US_WEST))).toEqual(['auth', 'hydrate', 'pvc']);

    // The replica's cluster is Ready: the engine starts with the cache's volume, mount and env, its args as written.
    const deployment = composedObject(replica(), 'model-serving-main');
    const pod = getObject(manifest(deployment), 'spec', 'template', 'spec')!;
    const engine = asArray(pod['containers']).find((c) => getString(c, 'name') === 'engine') as JsonObject;
    expect(engine['args']).toEqual(['--model=$(MODELPLANE_MODEL)', '--served-model-name=qwen']);
    expect(engine['env']).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
    ]);
    expect(pod['volumes']).toContainEqual({ name: 'model-cache', persistentVolumeClaim: { claimName: 'modelcache-ml-team-qwen-17db2' } });
    excerpt('deployment', {
      spec: {
        forProvider: {
          manifest: {
            kind: 'Deployment',
            metadata: pick(getObject(manifest(deployment), 'metadata'), 'name', 'namespace'),
            spec: {
              template: {
                spec: {
                  containers: [pick(engine, 'name', 'image', 'args', 'env', 'volumeMounts')],
                  volumes: pod['volumes'] as JsonObject[],
                },
              },
            },
          },
        },
      },
    });
    expect(condition(replica(), 'ModelAccepted')).toEqual({ type: 'ModelAccepted', status: 'True', reason: 'Accepted' });
    expect(condition(replica(), 'ModelReady')).toMatchObject({ status: 'False', reason: 'ModelStarting' });
    excerpt('replica-starting', { status: { conditions: conditions(replica()) } });
    excerpt('events-failed', events());
    expectInvariants();
  });

  it('00:03 the operator fixes us-west-a100; the engine is Available: the replica serves', async () => {
    workloadCluster(US_WEST).repair();
    await controlPlane.advance(TICK_SECONDS);

    expect(condition(replica(), 'ModelReady')).toEqual({ type: 'ModelReady', status: 'True', reason: 'Serving' });
    expect(condition(replica(), 'Ready')).toEqual({ type: 'Ready', status: 'True', reason: 'Available' });
    excerpt('replica-serving', { status: { conditions: conditions(replica()) } });
    // Fixing the cause changes nothing by itself: the failed Job stays (its pods' logs with it) for its TTL.
    expect(phases()[US_WEST]).toBe('Failed');
    expect(events()).toEqual([]);
    expectInvariants();

    await controlPlane.advance(TICK_SECONDS);
    expect(phases()[US_WEST]).toBe('Failed');
    expect(getIn(remote(composedObject(child(US_WEST), 'hydrate')), 'status', 'failed')).toBe(4);
    expectInvariants();
  });

  it('00:05 the failed Job reaches its TTL and goes; provider-kubernetes creates it again: us-west-a100 Hydrating, 2/3 Partial', async () => {
    await controlPlane.advance(TICK_SECONDS);

    const job = composedObject(child(US_WEST), 'hydrate');
    expect(getObject(remote(job), 'status')).toEqual({ active: 1 });
    excerpt('job-recreated', objectStatus(job));
    expect(phases()).toEqual({ [EU_WEST]: 'Ready', [US_EAST]: 'Ready', [US_WEST]: 'Hydrating' });
    expect(condition(cache(), 'ArtifactReady')).toMatchObject({ status: 'False', reason: 'Partial' });
    excerpt('cache-partial', cacheStatus('summary', 'conditions'));
    // The Jobs that completed were orphaned at 00:02 and have reached their TTL too; nothing creates them again.
    excerpt('inventory-partial', Object.fromEntries([US_EAST, US_WEST, EU_WEST].map((name) => [name, workloadCluster(name).inventory()])));
    expect(workloadCluster(EU_WEST).inventory()).toEqual(['PersistentVolumeClaim/modelcache-ml-team-qwen-17db2']);
    expect(events()).toEqual([]);
    expectInvariants();
  });

  it('00:06 the download completes: 3/3, Staged, the ModelCache Ready', async () => {
    await controlPlane.advance(TICK_SECONDS);

    expect(phases()).toEqual({ [EU_WEST]: 'Ready', [US_EAST]: 'Ready', [US_WEST]: 'Ready' });
    expect(getIn(cache(), 'status', 'summary', 'ready')).toBe('3/3');
    expect(condition(cache(), 'ArtifactReady')).toEqual({
      type: 'ArtifactReady',
      status: 'True',
      reason: 'Staged',
      message: 'staged on all 3 clusters',
    });
    expect(condition(cache(), 'Ready')).toEqual({ type: 'Ready', status: 'True', reason: 'Available' });
    excerpt('cache-staged', cacheStatus('summary', 'conditions'));
    for (const name of [US_EAST, US_WEST, EU_WEST]) expect(composedKeys(child(name))).toEqual(['pvc']);
    expect(workloadCluster(US_WEST).inventory()).toEqual([
      'Job/modelcache-ml-team-qwen-hydrate-256ec',
      'PersistentVolumeClaim/modelcache-ml-team-qwen-17db2',
    ]);
    excerpt('events-staged', events());
    expectInvariants();
  });

  it('docs/walkthrough.md shows what this test produced', async () => {
    expect(await checkOrUpdate(DOC, excerpts), 'run `make docs` to refresh the excerpts, then read the story around them').toEqual([]);
  });
});

function excerpt(name: string, value: unknown): void {
  if (excerpts.has(name)) throw new Error(`excerpt ${name} recorded twice`);
  // As data, the way YAML would carry it: no undefined fields.
  excerpts.set(name, JSON.parse(JSON.stringify(value)) as unknown);
}
