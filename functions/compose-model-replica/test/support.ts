// Builders for compose-model-replica's tests: replicas, clusters, caches and
// their entries, observed Objects; and `run`, which sends a request through
// the protocol codecs and checks what every response must satisfy.

import { expect } from 'vitest';
import { ownerMetadata, upstreamReplicaNames, type JsonObject } from '#lib';
import {
  badValues,
  composite,
  desiredResources,
  inProcessClient,
  items,
  manifestOf,
  observedObject,
  request,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';
import { DECODED_AT_ONCE, compose } from '../src/fn.js';

/** A GPU device request's CEL selector, as upstream's scheduler stamps it. */
export const GPU_CEL = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0';
export const IMAGE = 'vllm/vllm-openai:latest';
export const NAMESPACE = 'ml-team';
export const PROVIDER_CONFIG = 'cluster-a-pc';
export const AVAILABLE_CEL =
  'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Available" && c.status == "True")';
export const GPU_TOLERATION = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };
export const LEADER_ENV = { name: 'MODELPLANE_LEADER_ADDRESS', value: '$(LWS_LEADER_ADDRESS)' };
export const RANK_ENV = { name: 'MODELPLANE_RANK', value: '$(LWS_WORKER_INDEX)' };

export function gpuRequest(count = 1, name = 'gpu'): JsonObject {
  return { name, deviceClassName: 'gpu.nvidia.com', count, selectors: [{ cel: GPU_CEL }] };
}

export interface ContainerOptions {
  image?: string;
  args?: string[];
  command?: string[];
  env?: JsonObject[];
}

export function container(options: ContainerOptions = {}): JsonObject {
  const out: JsonObject = { name: 'engine', image: options.image ?? IMAGE };
  if (options.command) out['command'] = options.command;
  if (options.args) out['args'] = options.args;
  if (options.env) out['env'] = options.env;
  return out;
}

export interface MemberOptions extends ContainerOptions {
  role?: 'Standalone' | 'Leader' | 'Worker';
  pool?: string;
  /** `null`: no deviceRequests (a claimless member). */
  deviceRequests?: JsonObject[] | null;
  nodes?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  imagePullSecrets?: string[];
}

export function member(options: MemberOptions = {}): JsonObject {
  const metadata: JsonObject = {};
  if (options.labels) metadata['labels'] = options.labels;
  if (options.annotations) metadata['annotations'] = options.annotations;
  const spec: JsonObject = { containers: [container(options)] };
  if (options.imagePullSecrets) spec['imagePullSecrets'] = options.imagePullSecrets.map((name) => ({ name }));
  const template: JsonObject = { spec };
  if (Object.keys(metadata).length > 0) template['metadata'] = metadata;
  const out: JsonObject = { role: options.role ?? 'Standalone', nodePoolName: options.pool ?? 'frontier', template };
  if (options.deviceRequests !== null) out['deviceRequests'] = options.deviceRequests ?? [gpuRequest(1)];
  if (options.nodes !== undefined) out['worker'] = { nodes: options.nodes };
  return out;
}

/** One Standalone engine, upstream's fixture by default (args `--model=Qwen/Qwen3-0.6B`). */
export function standaloneEngine(name = 'main', options: MemberOptions & { copies?: number } = {}): JsonObject {
  const { copies, ...rest } = options;
  return { name, copies: copies ?? 1, members: [member({ args: ['--model=Qwen/Qwen3-0.6B'], ...rest })] };
}

/** A Leader + Worker engine on `frontier`, eight GPUs each, as upstream's gang fixture. */
export function gangEngine(name = 'main', options: { copies?: number; leader?: MemberOptions; worker?: MemberOptions } = {}): JsonObject {
  return {
    name,
    copies: options.copies ?? 1,
    members: [
      member({ role: 'Leader', deviceRequests: [gpuRequest(8)], ...options.leader }),
      member({ role: 'Worker', deviceRequests: [gpuRequest(8)], ...options.worker }),
    ],
  };
}

export interface ReplicaOptions {
  name?: string;
  namespace?: string;
  clusterName?: string;
  engines?: JsonObject[];
  /** A cache name, or `null` for none (the default is none). */
  cache?: string | null;
  serving?: JsonObject;
  labels?: Record<string, string>;
  status?: JsonObject;
}

export function replica(options: ReplicaOptions = {}): TestResource {
  const spec: JsonObject = { clusterName: options.clusterName ?? 'cluster-a', engines: options.engines ?? [standaloneEngine()] };
  if (options.cache) spec['modelCacheRef'] = { name: options.cache };
  if (options.serving) spec['serving'] = options.serving;
  const xr = composite('ModelReplica', options.namespace ?? NAMESPACE, options.name ?? 'test-replica', spec, options.status);
  if (options.labels) (xr.resource['metadata'] as JsonObject)['labels'] = options.labels;
  return xr;
}

export interface ClusterOptions {
  /** `null`: not provisioned (no providerConfigRef). */
  providerConfig?: string | null;
  stack?: string;
  gateway?: JsonObject;
  labels?: Record<string, string>;
}

export function cluster(name = 'cluster-a', options: ClusterOptions = {}): JsonObject {
  const spec: JsonObject = { cluster: { source: 'Existing', existing: { secretRef: { name: 'k' } } } };
  if (options.stack) spec['stack'] = options.stack;
  const status: JsonObject = { gateway: { address: '10.0.0.1', ...options.gateway } };
  if (options.providerConfig !== null) status['providerConfigRef'] = { name: options.providerConfig ?? PROVIDER_CONFIG };
  const metadata: JsonObject = options.labels ? { name, labels: options.labels } : { name };
  return { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', metadata, spec, status };
}

/** The cluster's ModelCacheHydration as the replica finds it: its status, as the child reports it. */
export function hydration(cache: string, cluster: string, status: JsonObject): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCacheHydration',
    metadata: { name: `${cache}-${cluster}`, namespace: NAMESPACE },
    spec: { clusterName: cluster, cacheName: cache },
    status,
  };
}

export interface EntryOptions {
  message?: string;
  mount?: JsonObject;
  accessModes?: string[];
}

export function entry(name: string, phase: string, options: EntryOptions = {}): JsonObject {
  return { name, phase, ...options };
}

export function modelCache(name: string, entries: JsonObject[], namespace = NAMESPACE): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: { name, namespace },
    spec: { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 }, clusterSelector: { matchLabels: { a: 'b' } } },
    status: { clusters: entries },
  };
}

/** Observed resources as the request carries them. */
export function observedSet(objects: Record<string, JsonObject>): Record<string, TestResource> {
  const out: Record<string, TestResource> = {};
  for (const [key, body] of Object.entries(objects)) out[key] = { resource: body };
  return out;
}

export interface RequestOptions {
  xr?: TestResource;
  /** `undefined`: not fetched; `null`: fetched, not found. */
  cluster?: JsonObject | null;
  cache?: JsonObject | null;
  /**
   * The cluster's ModelCacheHydration, asked for with the cache: `undefined`
   * (with a cache) is fetched and not found, so the cache's entry is read.
   */
  hydration?: JsonObject | null;
  observed?: Record<string, JsonObject>;
}

/** A request with the cluster (fetched, found by default) and, when given, the cache. */
export function requestFor(options: RequestOptions = {}): TestRequest {
  const required: NonNullable<TestRequest['requiredResources']> = {};
  if (options.cluster !== undefined) required['cluster'] = options.cluster === null ? items() : items(options.cluster);
  if (options.cache !== undefined) {
    required['cache'] = options.cache === null ? items() : items(options.cache);
    required['hydration'] = options.hydration === undefined || options.hydration === null ? items() : items(options.hydration);
  }
  const req: TestRequest = { observed: { composite: options.xr ?? replica() }, requiredResources: required };
  if (options.observed) req.observed!.resources = observedSet(options.observed);
  return request(req);
}

const client = inProcessClient('compose-model-replica', compose, { decodedAtOnce: DECODED_AT_ONCE });

/**
 * Run a request through the protocol and check what every response must hold:
 * no null or non-finite value anywhere, and no composed name a cluster would
 * refuse as too long.
 */
export async function run(req: TestRequest): Promise<TestResponse> {
  const rsp = await client.run(req);
  checkResponse(rsp);
  return rsp;
}

export function checkResponse(rsp: TestResponse): void {
  expect(badValues(rsp)).toEqual([]);
  for (const [key, object] of Object.entries(desiredResources(rsp))) {
    const name = (manifestOf(object)['metadata'] as JsonObject | undefined)?.['name'];
    if (typeof name === 'string') expect(name.length, `${key}: ${name}`).toBeLessThanOrEqual(63);
  }
}

/** The remote manifest composed under `key`. */
export function manifest(rsp: TestResponse, key: string): JsonObject {
  const object = desiredResources(rsp)[key];
  expect(object, `desired ${key}`).toBeDefined();
  return manifestOf(object);
}

/** A path into a JSON value, for reading deep into manifests in tests. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/**
 * The pod templates of a workload: a Deployment's one, an LWS's leader and
 * worker, or a PodCliqueSet's leader and worker cliques (as a template: the
 * clique's labels and annotations as metadata, its podSpec as spec).
 */
export function podTemplates(workload: JsonObject): { name: string; template: JsonObject }[] {
  if (workload['kind'] === 'Deployment') return [{ name: 'pod', template: at(workload, 'spec', 'template') as JsonObject }];
  if (workload['kind'] === 'PodCliqueSet') {
    return (at(workload, 'spec', 'template', 'cliques') as JsonObject[]).map((clique) => {
      const metadata: JsonObject = {};
      if (clique['labels']) metadata['labels'] = clique['labels'];
      if (clique['annotations']) metadata['annotations'] = clique['annotations'];
      return { name: clique['name'] as string, template: { metadata, spec: at(clique, 'spec', 'podSpec') as JsonObject } };
    });
  }
  return [
    { name: 'leader', template: at(workload, 'spec', 'leaderWorkerTemplate', 'leaderTemplate') as JsonObject },
    { name: 'worker', template: at(workload, 'spec', 'leaderWorkerTemplate', 'workerTemplate') as JsonObject },
  ];
}

/** The engine container of a pod template. */
export function engineOf(template: JsonObject): JsonObject {
  const containers = at(template, 'spec', 'containers') as JsonObject[];
  const engine = containers.find((c) => c['name'] === 'engine');
  expect(engine).toBeDefined();
  return engine!;
}

/**
 * A desired Object as Crossplane and provider-kubernetes report it back once
 * applied: a generated name, the remote object under status.atProvider, and
 * the Ready condition from its readiness query.
 */
export function asObserved(desired: JsonObject, ready: boolean): JsonObject {
  const observed = structuredClone(desired);
  // Crossplane's annotations beside the ones the function asked for (the external name, applied with it).
  const asked = ((desired['metadata'] as JsonObject | undefined)?.['annotations'] ?? {}) as JsonObject;
  observed['metadata'] = {
    name: 'test-replica-x7k2p',
    namespace: NAMESPACE,
    annotations: { ...asked, 'crossplane.io/composition-resource-name': 'x' },
  };
  const remote = structuredClone(manifestOf(desired));
  remote['metadata'] = { ...(remote['metadata'] as JsonObject), uid: 'c0ffee', resourceVersion: '42' };
  observed['status'] = {
    atProvider: { manifest: remote },
    conditions: [
      { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Unavailable' },
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
    ],
  };
  return observed;
}

/** Every desired resource of a response, observed as applied (Ready or not per key). */
export function observeAll(rsp: TestResponse, ready: (key: string) => boolean = () => true): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(desiredResources(rsp))) out[key] = asObserved(object, ready(key));
  return out;
}

/**
 * A remote object's metadata as this release composes it for replica
 * `replica` of `replicaNamespace`: its name and workload namespace, and the
 * owner's labels and annotation (docs/design/names.md).
 */
export function remoteMeta(name: string, replica = 'r', namespace = 'default', replicaNamespace = NAMESPACE): JsonObject {
  return { name, namespace, ...ownerMetadata({ kind: 'ModelReplica', namespace: replicaNamespace, name: replica }) };
}

/** Upstream's remote name of each desired key of replica `replica`, or undefined for a key it names nothing by. */
function upstreamName(replica: string, key: string, kind: string | undefined): string | undefined {
  const names = upstreamReplicaNames(replica);
  const routing: Record<string, string> = {
    'inference-pool': names.pool,
    'model-route': names.route,
    'epp-serviceaccount': names.epp,
    'epp-role': names.epp,
    'epp-rolebinding': names.epp,
    'epp-config': names.epp,
    epp: names.epp,
    'epp-service': names.eppService,
  };
  if (routing[key] !== undefined) return routing[key];
  const claim = /^resource-claim-(.+)-(standalone|leader|worker)$/.exec(key);
  if (claim) return names.claimTemplate(claim[1]!, claim[2]!);
  const workload = /^model-serving-(.+)$/.exec(key);
  if (!workload) return undefined;
  if (kind === 'PodCliqueSet') return names.podCliqueSet(workload[1]!);
  return kind === 'LeaderWorkerSet' ? names.leaderWorkerSet(workload[1]!) : names.deployment(workload[1]!);
}

/**
 * Observed Objects as the release before this one composed them for replica
 * `replica`: each remote object (of `keys`, default all) under upstream's
 * name, without an owner's labels or annotation; what an upgrade finds.
 */
export function underUpstreamNames(
  observed: Record<string, JsonObject>,
  replica: string,
  keys?: readonly string[],
): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(observed)) {
    const copy = structuredClone(object);
    const manifest = (copy['spec'] as JsonObject | undefined)?.['forProvider'] as JsonObject | undefined;
    const name = upstreamName(replica, key, (manifest?.['manifest'] as JsonObject | undefined)?.['kind'] as string | undefined);
    if (name !== undefined && (keys === undefined || keys.includes(key))) {
      for (const remote of [manifest?.['manifest'], (copy['status'] as JsonObject | undefined)?.['atProvider']] as (
        JsonObject | undefined
      )[]) {
        const target = (remote?.['kind'] === undefined ? remote?.['manifest'] : remote) as JsonObject | undefined;
        const metadata = target?.['metadata'] as JsonObject | undefined;
        if (metadata === undefined) continue;
        metadata['name'] = name;
        delete metadata['labels'];
        delete metadata['annotations'];
      }
      const annotations = (copy['metadata'] as JsonObject | undefined)?.['annotations'] as JsonObject | undefined;
      if (annotations?.['crossplane.io/external-name'] !== undefined) annotations['crossplane.io/external-name'] = name;
    }
    out[key] = copy;
  }
  return out;
}

export { observedObject };
