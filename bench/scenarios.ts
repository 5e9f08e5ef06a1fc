// The benchmark's scenarios, each at N clusters. A steady state is made from
// the function's own answer: what it desired, observed back as Ready (with the
// remote status a workload cluster would report), and the status it wrote.
// So the steady request is exactly what Crossplane sends once everything is up.

import { LABEL_MODELCACHE, LABEL_SHARD, Ready, Status, composedManifest, type JsonObject, type RunFunctionResponse } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { HANDLERS } from '../test/support/handlers.js';
import { composedAsStored, compositeAsStored, hydrationComposedBy, requiredAsStored, text } from './crossplane.js';
import {
  CACHE,
  NAMESPACE,
  REPO,
  childOf,
  childrenFor,
  clusterName,
  clusters,
  inferenceCluster,
  modelCache,
  observedObject,
  readyState,
  sourceSpec,
  type Source,
} from './worlds.js';

export type FunctionName = 'compose-model-cache' | 'compose-model-cache-hydration' | 'compose-model-replica';

export interface Scenario {
  id: string;
  fn: FunctionName;
  label: string;
  n: number;
  request: RunFunctionRequest;
}

type Resources = Record<string, JsonObject>;

function resources(map: Resources): Record<string, { resource: JsonObject; connectionDetails: Record<string, Buffer>; ready: Ready }> {
  return Object.fromEntries(
    Object.entries(map).map(([key, resource]) => [key, { resource, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED }]),
  );
}

function items(list: JsonObject[]): { items: { resource: JsonObject; connectionDetails: Record<string, Buffer>; ready: Ready }[] } {
  return { items: list.map((resource) => ({ resource, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED })) };
}

function request(xr: JsonObject, required: Record<string, JsonObject[]>, observed: Resources = {}): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: 'bench' },
    observed: { composite: { resource: xr }, resources: resources(observed) },
    desired: { resources: {} },
    requiredResources: Object.fromEntries(Object.entries(required).map(([key, list]) => [key, items(list)])),
  });
}

/** The remote status a healthy workload cluster reports for each kind the functions compose. */
function remoteStatus(manifest: JsonObject): JsonObject {
  switch (manifest['kind']) {
    case 'PersistentVolumeClaim':
      return { phase: 'Bound', accessModes: (manifest['spec'] as JsonObject | undefined)?.['accessModes'] ?? ['ReadOnlyMany'] };
    case 'Job':
      return { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 };
    case 'Deployment':
    case 'LeaderWorkerSet':
      return { conditions: [{ type: 'Available', status: 'True' }], readyReplicas: 1 };
    default:
      return {};
  }
}

/** Everything the function desired, observed back Ready on the workload cluster. */
function observeAll(rsp: RunFunctionResponse): Resources {
  const observed: Resources = {};
  for (const [key, value] of Object.entries(rsp.desired?.resources ?? {})) {
    const resource = value.resource as JsonObject;
    const spec = resource['spec'] as JsonObject | undefined;
    const manifest = composedManifest(resource);
    observed[key] = manifest
      ? observedObject(manifest, remoteStatus(manifest), spec ?? {})
      : { ...resource, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] } };
  }
  return observed;
}

// --- compose-model-cache --------------------------------------------------------

function cacheFirstCompose(n: number): RunFunctionRequest {
  return request(modelCache(n, false), { clusters: clusters(n), replicas: [] });
}

/** A shard's spec as its cache stamps it, observed with the uid Crossplane gives it. */
function shardXr(shard: JsonObject, index: number): JsonObject {
  return {
    ...shard,
    metadata: { ...(shard['metadata'] as JsonObject), uid: `00000000-0000-4000-8000-shard${String(index).padStart(7, '0')}` },
  };
}

/** The children of one shard, steady: each of its listed clusters' child observed Ready, owned by it. */
function shardChildren(shard: JsonObject): Resources {
  const listed = (((shard['spec'] as JsonObject)['clusters'] ?? []) as JsonObject[]).map((member) => member['name'] as string);
  return childrenFor(listed);
}

/**
 * A cache at rest (docs/design/fleet.md): its N clusters in ceil(N/100)
 * shards, each observed with the status its own steady reconcile writes,
 * and the cache's own status from the reconcile before.
 */
function cacheSteady(n: number): RunFunctionRequest {
  const required = { clusters: clusters(n), replicas: [] };
  const first = HANDLERS['compose-model-cache'](request(modelCache(n, false), required));
  const shards: Resources = {};
  Object.entries(first.desired?.resources ?? {}).forEach(([key, value], index) => {
    const xr = shardXr(value.resource as JsonObject, index);
    const rsp = HANDLERS['compose-model-cache'](request(xr, {}, shardChildren(xr)));
    shards[key] = { ...xr, status: statusWritten(rsp) };
  });
  const settled = HANDLERS['compose-model-cache'](request(modelCache(n, false), required, shards));
  return request({ ...modelCache(n, false), status: statusWritten(settled) }, required, shards);
}

/** The most clusters a shard stages: a shard's call is never bigger than this, whatever N. */
const MAX_SHARD = 100;

/** One shard at rest with min(N, 100) Ready children: the call a fleet of any size makes most. */
function shardSteady(n: number): RunFunctionRequest {
  const first = HANDLERS['compose-model-cache'](
    request(modelCache(Math.min(n, MAX_SHARD), false), { clusters: clusters(Math.min(n, MAX_SHARD)), replicas: [] }),
  );
  const xr = shardXr(Object.values(first.desired?.resources ?? {})[0]!.resource as JsonObject, 0);
  const observed = shardChildren(xr);
  const rsp = HANDLERS['compose-model-cache'](request(xr, {}, observed));
  return request({ ...xr, status: statusWritten(rsp) }, {}, observed);
}

// --- compose-model-cache-hydration ------------------------------------------------

function hydrationXr(source: Source, status?: JsonObject): JsonObject {
  const cluster = clusterName(0);
  const xr: JsonObject = {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCacheHydration',
    metadata: { name: `modelcache-${NAMESPACE}-${CACHE}-${cluster}`, namespace: NAMESPACE },
    spec: { clusterName: cluster, cacheName: CACHE, ...sourceSpec(source) },
  };
  if (status) xr['status'] = status;
  return xr;
}

/**
 * A child at rest: it reported Ready last time, and every Object it desires
 * is observed healthy. For OCI the resolver's ConfigMap holds the result.
 */
function hydrationSteady(source: Source): RunFunctionRequest {
  const required = { cluster: [inferenceCluster(0)] };
  // What the child itself latched last time: for HuggingFace, which repo@revision the Ready volume holds.
  const latched: JsonObject = source === 'HuggingFace' ? { staged: `${REPO}@main` } : {};
  const status = { ...readyState(source), ...latched, conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] };
  // Two rounds: the first shows what it composes, the second what it keeps once all of that is observed.
  let observed: Resources = {};
  for (let round = 0; round < 2; round++) {
    const rsp = HANDLERS['compose-model-cache-hydration'](request(hydrationXr(source, status), required, observed));
    observed = observeAll(rsp);
  }
  return request(hydrationXr(source, status), required, observed);
}

// --- compose-model-replica ---------------------------------------------------------

const DEVICES = [
  {
    name: 'gpu',
    deviceClassName: 'gpu.nvidia.com',
    count: 8,
    selectors: [{ cel: 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0' }],
  },
];
const ENGINE = {
  name: 'engine',
  image: 'vllm/vllm-openai:v0.11.0',
  args: ['--model=$(MODELPLANE_MODEL)', '--tensor-parallel-size=8'],
  env: [{ name: 'VLLM_LOGGING_LEVEL', value: 'INFO' }],
};

function replicaXr(gang: boolean): JsonObject {
  const members = gang
    ? [
        { role: 'Leader', nodePoolName: 'a100', deviceRequests: DEVICES, template: { spec: { containers: [ENGINE] } } },
        {
          role: 'Worker',
          nodePoolName: 'a100',
          deviceRequests: DEVICES,
          worker: { nodes: 1 },
          template: { spec: { containers: [{ ...ENGINE, args: [] }] } },
        },
      ]
    : [{ role: 'Standalone', nodePoolName: 'a100', deviceRequests: DEVICES, template: { spec: { containers: [ENGINE] } } }];
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: {
      name: 'qwen-chat-7d2e4',
      namespace: NAMESPACE,
      labels: { 'modelplane.ai/deployment': 'qwen-chat', 'modelplane.ai/cluster': clusterName(0) },
    },
    spec: {
      clusterName: clusterName(0),
      modelCacheRef: { name: CACHE },
      serving: { mode: 'Unified' },
      engines: [{ name: 'main', copies: 1, members }],
    },
  };
}

/** A serving replica: the cache (its status listing all N clusters) Ready, every Object observed Ready. */
function replicaSteady(n: number, gang: boolean): RunFunctionRequest {
  const required = { cluster: [inferenceCluster(0)], cache: [modelCache(n, true)], hydration: [childOf(0)] };
  const first = HANDLERS['compose-model-replica'](request(replicaXr(gang), required));
  return request(replicaXr(gang), required, observeAll(first));
}

/**
 * Issue 14's shapes, each a serving steady state like replicaSteady's: a
 * PrefillDecode replica (a Standalone prefill engine, a LeaderWorkerSet
 * decode gang, the disaggregated picker), and a Grove gang on a Dynamo
 * cluster with the ModelExpress bundle.
 */
function replicaShapeXr(shape: 'prefill-decode' | 'dynamo'): JsonObject {
  const xr = replicaXr(true);
  const spec = xr['spec'] as JsonObject;
  const [gang] = spec['engines'] as JsonObject[];
  if (shape === 'prefill-decode') {
    const standalone = (replicaXr(false)['spec'] as { engines: JsonObject[] }).engines[0]!;
    spec['serving'] = { mode: 'PrefillDecode' };
    spec['engines'] = [
      { ...standalone, name: 'prefill', phase: 'Prefill' },
      { ...gang, name: 'decode', phase: 'Decode' },
    ];
  }
  return xr;
}

function replicaShapeSteady(n: number, shape: 'prefill-decode' | 'dynamo'): RunFunctionRequest {
  const cluster = inferenceCluster(0);
  if (shape === 'dynamo') cluster['spec'] = { ...(cluster['spec'] as JsonObject), stack: 'Dynamo' };
  const required = { cluster: [cluster], cache: [modelCache(n, true)], hydration: [childOf(0)] };
  const first = HANDLERS['compose-model-replica'](request(replicaShapeXr(shape), required));
  return request(replicaShapeXr(shape), required, observeAll(first));
}

// --------------------------------------------------------------------------------------

/**
 * The same request as Crossplane would send it (issue 17): every object with
 * the metadata, managedFields and status the API server and Crossplane keep
 * (see crossplane.ts). The functions read the same fields in it; it is bigger.
 * An XR at rest carries the status its function wrote last time (Crossplane
 * writes the answer's conditions back); a hydration carries what its cache's
 * composition added to it.
 */
function asCrossplaneSends(lean: RunFunctionRequest, fn?: FunctionName): RunFunctionRequest {
  const req = RunFunctionRequest.fromPartial(RunFunctionRequest.toJSON(lean) as object);
  const xr: JsonObject | undefined = req.observed?.composite?.resource;
  const metadata = (xr?.['metadata'] ?? {}) as JsonObject;
  const spec = (xr?.['spec'] ?? {}) as JsonObject;
  const owner = {
    apiVersion: text(xr?.['apiVersion']),
    kind: text(xr?.['kind']),
    name: text(metadata['name']),
    namespace: text(metadata['namespace']),
  };
  if (xr && fn && !('status' in xr)) xr['status'] = statusWritten(HANDLERS[fn](lean));
  const observed = req.observed?.resources ?? {};
  for (const [key, value] of Object.entries(observed)) value.resource = composedAsStored(value.resource as JsonObject, key, owner);
  if (req.observed?.composite && xr) {
    const shardIndex = ((metadata['labels'] ?? {}) as JsonObject)[LABEL_SHARD];
    const composedBy =
      owner.kind === 'ModelCacheHydration'
        ? hydrationComposedBy(xr)
        : owner.kind === 'ModelCacheShard'
          ? {
              owner: { apiVersion: owner.apiVersion, kind: 'ModelCache', name: text(spec['cacheName']) },
              key: `shard-${text(shardIndex)}`,
              labels: { [LABEL_MODELCACHE]: text(spec['cacheName']), [LABEL_SHARD]: text(shardIndex) },
            }
          : undefined;
    req.observed.composite.resource = compositeAsStored(
      xr,
      Object.values(observed).map((value) => value.resource as JsonObject),
      composedBy,
    );
  }
  for (const set of Object.values(req.requiredResources)) {
    for (const item of set.items) item.resource = requiredAsStored(item.resource as JsonObject);
  }
  return req;
}

/** The status Crossplane writes from an answer: the desired composite's status and the answer's conditions. */
function statusWritten(rsp: RunFunctionResponse): JsonObject {
  const desired = (rsp.desired?.composite?.resource?.['status'] ?? {}) as JsonObject;
  const conditions = rsp.conditions.map((c) => ({
    type: c.type,
    status: c.status === Status.STATUS_CONDITION_TRUE ? 'True' : c.status === Status.STATUS_CONDITION_FALSE ? 'False' : 'Unknown',
    reason: c.reason,
    ...(c.message ? { message: c.message } : {}),
  }));
  const ready = rsp.desired?.composite?.ready === Ready.READY_TRUE ? 'True' : 'False';
  return {
    ...desired,
    conditions: [
      ...conditions,
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
      { type: 'Ready', status: ready, reason: ready === 'True' ? 'Available' : 'Creating' },
      { type: 'Responsive', status: 'True', reason: 'WatchCircuitClosed' },
    ],
  };
}

/**
 * A steady scenario must really be steady: the function, given it, reports
 * everything Ready (otherwise the benchmark would time a different path).
 */
function assertSteady(fn: FunctionName, label: string, request: RunFunctionRequest): void {
  const rsp = HANDLERS[fn](request);
  const ready =
    fn === 'compose-model-replica'
      ? rsp.conditions.some((c) => c.type === 'ModelReady' && c.reason === 'Serving')
      : rsp.desired?.composite?.ready === Ready.READY_TRUE;
  if (!ready) throw new Error(`scenario ${fn} ${label} is not steady: ${rsp.conditions.map((c) => `${c.type}=${c.reason}`).join(', ')}`);
}

export function SCENARIOS(n: number): Scenario[] {
  const scenario = (fn: FunctionName, label: string, build: () => RunFunctionRequest): Scenario => {
    const request = build();
    if (label.startsWith('steady')) assertSteady(fn, label, request);
    return { id: `${fn}-${label}-${n}`, fn, label, n, request };
  };
  return [
    scenario('compose-model-cache', 'first-compose', () => cacheFirstCompose(n)),
    scenario('compose-model-cache', 'steady', () => cacheSteady(n)),
    scenario('compose-model-cache', 'shard-steady', () => shardSteady(n)),
    scenario('compose-model-cache-hydration', 'steady-huggingface', () => hydrationSteady('HuggingFace')),
    scenario('compose-model-cache-hydration', 'steady-oci', () => hydrationSteady('OCI')),
    scenario('compose-model-cache-hydration', 'steady-claim', () => hydrationSteady('PersistentVolumeClaim')),
    scenario('compose-model-replica', 'steady-native', () => replicaSteady(n, false)),
    scenario('compose-model-replica', 'steady-lws', () => replicaSteady(n, true)),
    scenario('compose-model-replica', 'steady-prefill-decode', () => replicaShapeSteady(n, 'prefill-decode')),
    scenario('compose-model-replica', 'steady-dynamo-grove', () => replicaShapeSteady(n, 'dynamo')),
    // The same states as Crossplane sends them: full metadata, managedFields, statuses, manifests twice.
    scenario('compose-model-cache', 'first-compose-realistic', () => asCrossplaneSends(cacheFirstCompose(n))),
    scenario('compose-model-cache', 'steady-realistic', () => asCrossplaneSends(cacheSteady(n))),
    scenario('compose-model-cache', 'shard-steady-realistic', () => asCrossplaneSends(shardSteady(n))),
    scenario('compose-model-cache-hydration', 'steady-huggingface-realistic', () => asCrossplaneSends(hydrationSteady('HuggingFace'))),
    scenario('compose-model-replica', 'steady-native-realistic', () => asCrossplaneSends(replicaSteady(n, false), 'compose-model-replica')),
  ];
}
