// Valid requests to start from: every stage in examples/ (first compose,
// waiting, Ready, failed, for each source), resolved as `crossplane render`
// resolves them, plus the states the examples don't show (a serving replica as
// observed, a cache mid-upgrade from the single-function layout, a child kept
// for a replica, a cache over many clusters).

import { existsSync, readdirSync } from 'node:fs';
import { cacheNames, huggingFaceMount, toJson, type JsonObject } from '#lib';
import {
  REPO_ROOT,
  compositeStatus,
  desiredResources,
  inProcessClient,
  HF_SOURCE,
  inferenceCluster,
  loadYamlDocuments,
  modelCacheXr,
  manifestOf,
  type FunctionClient,
  type FunctionName,
  type TestRequest,
  type TestResource,
  type TestResponse,
  type TestSelector,
} from '#testing';
import { HANDLERS, ON_DEMAND } from '../../support/handlers.js';

/** A function's in-process client, decoding on demand as its server does. */
export function clientFor(name: FunctionName): FunctionClient {
  return inProcessClient(name, HANDLERS[name], ON_DEMAND[name]);
}

/** Each function's render examples; the first folder's stages are named as they are, the others' prefixed with their folder. */
const EXAMPLES: Record<FunctionName, string[]> = {
  // compose-model-cache composes both levels of the fan-out (docs/design/fleet.md).
  'compose-model-cache': ['examples/model-cache', 'examples/model-cache-shard'],
  'compose-model-cache-hydration': ['examples/model-cache-hydration'],
  'compose-model-replica': ['examples/model-replica'],
};

export interface Seed {
  name: string;
  request: TestRequest;
}

function documents(path: string): JsonObject[] {
  return existsSync(`${REPO_ROOT}${path}`) ? (loadYamlDocuments(path) as JsonObject[]) : [];
}

/** render -e: a requirement gets the supplied objects of its kind with its name, or with its labels (render ignores namespaces). */
function matches(doc: JsonObject, selector: TestSelector): boolean {
  if (doc['apiVersion'] !== selector.apiVersion || doc['kind'] !== selector.kind) return false;
  const metadata = (doc['metadata'] ?? {}) as JsonObject;
  if (selector.matchName !== undefined) return metadata['name'] === selector.matchName;
  const labels = (metadata['labels'] ?? {}) as Record<string, string>;
  return Object.entries(selector.matchLabels?.labels ?? {}).every(([key, value]) => labels[key] === value);
}

/** A request with every requirement answered from `supplied`, as the second call of render's loop. */
export async function resolve(name: FunctionName, base: TestRequest, supplied: JsonObject[]): Promise<TestRequest> {
  const first = await clientFor(name).run(base);
  const requiredResources: NonNullable<TestRequest['requiredResources']> = {};
  for (const [key, selector] of Object.entries(first.requirements?.resources ?? {})) {
    requiredResources[key] = { items: supplied.filter((doc) => matches(doc, selector)).map((resource) => ({ resource })) };
  }
  return { ...base, requiredResources };
}

async function exampleSeeds(name: FunctionName): Promise<Seed[]> {
  const seeds: Seed[] = [];
  for (const [i, dir] of EXAMPLES[name].entries())
    seeds.push(...(await folderSeeds(name, dir, i === 0 ? '' : `${dir.split('/').at(-1)!}:`)));
  return seeds;
}

async function folderSeeds(name: FunctionName, dir: string, prefix: string): Promise<Seed[]> {
  const stages = readdirSync(`${REPO_ROOT}${dir}`, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const seeds: Seed[] = [];
  for (const stage of stages) {
    const [xr] = documents(`${dir}/${stage}/xr.yaml`);
    if (!xr) continue;
    const observed: Record<string, TestResource> = {};
    for (const doc of documents(`${dir}/${stage}/observed.yaml`)) {
      const annotations = ((doc['metadata'] as JsonObject)['annotations'] ?? {}) as Record<string, string>;
      const key = annotations['crossplane.io/composition-resource-name'];
      if (key !== undefined) observed[key] = { resource: doc };
    }
    const base: TestRequest = { meta: { tag: `seed-${stage}` }, observed: { composite: { resource: xr }, resources: observed } };
    // A settings example renders with its own Composition: its step's input is part of the request.
    const [composition] = documents(`${dir}/${stage}/composition.yaml`);
    const input = (composition?.['spec'] as { pipeline?: { input?: JsonObject }[] } | undefined)?.pipeline?.[0]?.input;
    if (input) base.input = input;
    seeds.push({ name: `${prefix}${stage}`, request: await resolve(name, base, documents(`${dir}/${stage}/required.yaml`)) });
  }
  return seeds;
}

/**
 * A desired resource as Crossplane reports it back once applied: a generated
 * name, and for a provider-kubernetes Object the remote object under
 * status.atProvider with the Ready condition its readiness query gave.
 */
export function observeApplied(desired: JsonObject, ready: boolean, remoteStatus?: JsonObject): JsonObject {
  const observed = structuredClone(desired);
  const metadata = (observed['metadata'] as JsonObject | undefined) ?? {};
  observed['metadata'] = { name: 'generated-x7k2p', ...metadata };
  const status: JsonObject = {
    conditions: [
      { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' },
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
    ],
  };
  if (desired['kind'] === 'Object') {
    const remote = structuredClone(manifestOf(desired));
    if (remoteStatus) remote['status'] = remoteStatus;
    status['atProvider'] = { manifest: remote };
  }
  observed['status'] = status;
  return observed;
}

/** The next request of a lifecycle: everything `rsp` desired, observed as applied (and Ready). */
export function observedFrom(rsp: TestResponse, ready: (key: string) => boolean = () => true): Record<string, TestResource> {
  const out: Record<string, TestResource> = {};
  for (const [key, desired] of Object.entries(desiredResources(rsp))) out[key] = { resource: observeApplied(desired, ready(key)) };
  return out;
}

/**
 * A cache's answer as Crossplane observes it one reconcile of each shard
 * later: every desired resource applied, and each shard with the status its
 * own reconcile wrote from its children, all Ready with the contract they
 * publish (the cache's source is HuggingFace `Qwen/Qwen3-0.6B`, as the seeds').
 */
export async function observedShards(rsp: TestResponse, tag = 'seed'): Promise<Record<string, TestResource>> {
  const client = clientFor('compose-model-cache');
  const mount = toJson(huggingFaceMount({ claimName: cacheNames('ml-team', 'qwen').pvc, repo: 'Qwen/Qwen3-0.6B' }));
  const observed = observedFrom(rsp);
  for (const [key, shard] of Object.entries(observed)) {
    if (!key.startsWith('shard-')) continue;
    (shard.resource['metadata'] as JsonObject)['uid'] = `uid-${key}`;
    const req: TestRequest = { meta: { tag }, observed: { composite: { resource: shard.resource }, resources: {} } };
    const children = observedFrom(await client.run(req));
    for (const child of Object.values(children)) Object.assign(child.resource['status'] as JsonObject, { phase: 'Ready', mount });
    const own = await client.run({ ...req, observed: { ...req.observed, resources: children } });
    shard.resource['status'] = { ...compositeStatus(own), conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] };
  }
  return observed;
}

const TIER = { 'modelplane.ai/tier': 'a100' };
const TOKEN_B64 = 'aGYtdG9rZW4tdmFsdWU=';

function cacheXr(status?: JsonObject): JsonObject {
  return modelCacheXr({ huggingFace: { ...HF_SOURCE, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } } }, status).resource;
}

function providerObject(manifest: JsonObject, policies: string[] | undefined, remoteStatus: JsonObject | undefined): JsonObject {
  const spec: JsonObject = {
    forProvider: { manifest },
    providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
  };
  if (policies) spec['managementPolicies'] = policies;
  const remote = { ...manifest, ...(remoteStatus ? { status: remoteStatus } : {}) };
  return {
    apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
    kind: 'Object',
    metadata: { name: 'qwen-legacy-x1' },
    spec,
    status: { atProvider: { manifest: remote }, conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] },
  };
}

/** The single-function ModelCache's Objects for `cluster` (upstream v0.3.1's keys), token Secret included. */
export function legacyObjects(cluster: string, policies?: string[]): Record<string, TestResource> {
  const names = cacheNames('ml-team', 'qwen');
  const labels = { 'modelplane.ai/modelcache': 'qwen' };
  return {
    [`pvc-${cluster}`]: {
      resource: providerObject(
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: names.pvc, namespace: 'default', labels },
          spec: { accessModes: ['ReadWriteMany'], storageClassName: 'modelplane-rwx', resources: { requests: { storage: '20Gi' } } },
        },
        policies,
        { phase: 'Bound' },
      ),
    },
    [`hydrate-${cluster}`]: {
      resource: providerObject(
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: names.job, namespace: 'default', labels },
          spec: { backoffLimit: 3, template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'hydrate' }] } } },
        },
        policies,
        { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
      ),
    },
    [`auth-${cluster}`]: {
      resource: providerObject(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: names.authSecret, namespace: 'default', labels },
          data: { HF_TOKEN: TOKEN_B64 },
        },
        policies,
        undefined,
      ),
    },
  };
}

function cluster(name: string, labels: Record<string, string> = TIER): JsonObject {
  return inferenceCluster(name, { labels, providerConfig: `${name}-pc`, storageClassName: 'modelplane-rwx' });
}

function replicaOn(name: string, clusterName: string): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: { name, namespace: 'ml-team' },
    spec: { clusterName, modelCacheRef: { name: 'qwen' }, engines: [] },
  };
}

async function extraCacheSeeds(): Promise<Seed[]> {
  const name: FunctionName = 'compose-model-cache';
  const first = async (clusters: JsonObject[], replicas: JsonObject[], observed: Record<string, TestResource>, status?: JsonObject) => {
    const base: TestRequest = { meta: { tag: 'seed' }, observed: { composite: { resource: cacheXr(status) }, resources: observed } };
    return resolve(name, base, [...clusters, ...replicas]);
  };
  // A steady cache over 40 clusters: its shard composed, every child in it Ready.
  const many = Array.from({ length: 40 }, (_, i) => cluster(`cluster-${String(i).padStart(2, '0')}`));
  const composed = await clientFor(name).run(await first(many, [], {}));
  const steady = await first(many, [], await observedShards(composed));

  // Cluster b has left the selector; a replica still runs there.
  const two = [cluster('cluster-a'), cluster('cluster-b')];
  const both = await clientFor(name).run(await first(two, [], {}));
  const retained = await first(
    [cluster('cluster-a'), cluster('cluster-b', { tier: 'other' })],
    [replicaOn('chat', 'cluster-b')],
    await observedShards(both),
  );

  return [
    { name: 'many-clusters-steady', request: steady },
    { name: 'retained-for-replica', request: retained },
    { name: 'upgrade-legacy-with-delete', request: await first([cluster('cluster-a')], [], legacyObjects('cluster-a')) },
    {
      name: 'upgrade-legacy-without-delete',
      request: await first([cluster('cluster-a')], [], legacyObjects('cluster-a', ['Observe', 'Create', 'Update', 'LateInitialize'])),
    },
  ];
}

async function extraReplicaSeeds(examples: Seed[]): Promise<Seed[]> {
  const name: FunctionName = 'compose-model-replica';
  const client = clientFor(name);
  const out: Seed[] = [];
  // Each stage that composes a workload, one reconcile later: everything observed, applied and Available.
  for (const seed of examples.filter((s) => s.name.endsWith('cache-ready'))) {
    const rsp = await client.run(seed.request);
    const observed = observedFrom(rsp);
    out.push({
      name: `${seed.name}-serving`,
      request: { ...seed.request, observed: { composite: seed.request.observed!.composite!, resources: observed } },
    });
  }
  return out;
}

/**
 * One reconcile later: the XR carries the status the function wrote (its
 * latches), and every desired resource is observed - as it was observed
 * before where it was (a Bound PVC stays Bound), else as applied and Ready.
 */
export async function settled(name: FunctionName, req: TestRequest): Promise<TestRequest> {
  const rsp = await clientFor(name).run(req);
  const resources: Record<string, TestResource> = {};
  for (const [key, desired] of Object.entries(desiredResources(rsp))) {
    resources[key] = req.observed?.resources?.[key] ?? { resource: observeApplied(desired, true) };
  }
  const xr = structuredClone(req.observed!.composite!.resource);
  const status = rsp.desired?.composite?.resource['status'];
  if (status !== undefined) xr['status'] = status;
  return { ...req, observed: { composite: { resource: xr }, resources } };
}

async function extraHydrationSeeds(examples: Seed[]): Promise<Seed[]> {
  const out: Seed[] = [];
  // The hydrating stage with its InferenceCluster gone: the hold path.
  const hydrating = examples.find((s) => s.name === 'huggingface-hydrating');
  if (hydrating) {
    const gone: TestRequest = structuredClone(hydrating.request);
    gone.requiredResources!['cluster'] = { items: [] };
    out.push({ name: 'huggingface-hydrating-cluster-gone', request: gone });
  }
  // Each Ready stage one reconcile later, its latches (the Ready phase, the digest) in its own status.
  for (const seed of examples.filter((s) => s.name.includes('ready'))) {
    out.push({ name: `${seed.name}-settled`, request: await settled('compose-model-cache-hydration', seed.request) });
  }
  return out;
}

const cache = new Map<FunctionName, Promise<Seed[]>>();

/** Every seed of a function, built once per process. */
export function seedsFor(name: FunctionName): Promise<Seed[]> {
  let seeds = cache.get(name);
  if (!seeds) {
    seeds = (async () => {
      const examples = await exampleSeeds(name);
      const extra =
        name === 'compose-model-cache'
          ? await extraCacheSeeds()
          : name === 'compose-model-replica'
            ? await extraReplicaSeeds(examples)
            : await extraHydrationSeeds(examples);
      // As JSON, so no two places in a seed share an object (a mutation of one must not change the other).
      return [...examples, ...extra].map((seed) => ({ name: seed.name, request: JSON.parse(JSON.stringify(seed.request)) as TestRequest }));
    })();
    cache.set(name, seeds);
  }
  return seeds;
}
