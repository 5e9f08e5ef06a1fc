// Fixtures for the hydration tests: upstream's common fixture (XR qwen in
// ml-team, cluster-a with provider config cluster-a-pc and class
// modelplane-rwx, token aGYtdG9rZW4tdmFsdWU=), observed remote objects, and a
// small simulated workload cluster for the lifecycle tests.

import { expect } from 'vitest';
import { cacheNames, type JsonObject } from '#lib';
import {
  HF_SOURCE,
  NAMESPACE,
  badValues,
  composite,
  desiredResources,
  inProcessClient,
  inferenceCluster,
  items,
  manifestOf,
  request,
  type FunctionClient,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';
import { compose } from '../src/fn.js';

export { HF_SOURCE, NAMESPACE };
export const CACHE = 'qwen';
export const XR_NAME = 'modelcache-ml-team-qwen-cluster-a-d4283';
export const NAMES = cacheNames(NAMESPACE, CACHE);
export const TOKEN_B64 = 'aGYtdG9rZW4tdmFsdWU=';
export const TOKEN = 'hf-token-value';
export const REPO = 'Qwen/Qwen3-0.6B';

export const CLUSTER_A = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', storageClassName: 'modelplane-rwx' });

export const inProcess: FunctionClient = inProcessClient('compose-model-cache-hydration', compose);

/** Every response, from every test: no null, no NaN, anywhere. */
export async function run(req: TestRequest, client: FunctionClient = inProcess): Promise<TestResponse> {
  const rsp = await client.run(req);
  expect(badValues(rsp)).toEqual([]);
  return rsp;
}

export function hydration(spec: JsonObject, status?: JsonObject): TestResource {
  return composite('ModelCacheHydration', NAMESPACE, XR_NAME, { clusterName: 'cluster-a', cacheName: CACHE, ...spec }, status);
}

export const HF: JsonObject = { source: 'HuggingFace', huggingFace: HF_SOURCE };
export const HF_AUTH: JsonObject = {
  source: 'HuggingFace',
  huggingFace: { ...HF_SOURCE, revision: 'main' },
  authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE },
};

export function tokenSecret(data: JsonObject = { HF_TOKEN: TOKEN_B64 }): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace: NAMESPACE }, data };
}

export interface World {
  xr: TestResource;
  cluster?: JsonObject | null;
  /** The token Secret: undefined means no authSecret requirement was answered; null, fetched and absent. */
  secret?: JsonObject | null;
  observed?: Record<string, JsonObject>;
}

/** A request with every requirement answered (null: fetched, found nothing). */
export function resolved(world: World): TestRequest {
  const required: NonNullable<TestRequest['requiredResources']> = {
    cluster: world.cluster === null ? items() : items(world.cluster ?? CLUSTER_A),
  };
  if (world.secret !== undefined) required['auth-secret'] = world.secret === null ? items() : items(world.secret);
  const resources: Record<string, TestResource> = {};
  for (const [key, body] of Object.entries(world.observed ?? {})) resources[key] = { resource: body };
  return request({ observed: { composite: world.xr, resources }, requiredResources: required });
}

// --- Observed provider-kubernetes Objects -------------------------------------

export interface Remote {
  /** The remote object's status (merged into the manifest as provider-kubernetes reports it). */
  status?: JsonObject;
  /** Top-level fields of the remote object besides status (ConfigMap data, annotations). */
  fields?: JsonObject;
  /** The Object's Ready condition. */
  ready?: boolean;
}

/** A claim the volume controller has bound: the Object Ready. */
export const BOUND_CLAIM: Remote = { status: { phase: 'Bound' }, ready: true };

/**
 * The Object as Crossplane would observe it after applying `desired`: what we
 * asked for, plus the remote object under status.atProvider.manifest (absent
 * when `remote` is undefined: the provider has not seen it, or it doesn't exist).
 */
export function observe(desired: JsonObject, remote?: Remote): JsonObject {
  const manifest = manifestOf(desired);
  const status: JsonObject = {};
  if (remote) {
    const merged: JsonObject = { ...manifest, ...(remote.fields ?? {}) };
    if (remote.status) merged['status'] = remote.status;
    status['atProvider'] = { manifest: merged };
  }
  const ready = remote?.ready ?? false;
  status['conditions'] = [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' }];
  // Crossplane's generated name beside the annotations the function asked for (the external name).
  const asked = (desired['metadata'] as JsonObject | undefined)?.['annotations'];
  return { ...desired, metadata: { name: 'object-generated', ...(asked ? { annotations: asked } : {}) }, status };
}

export const jobConditions = {
  running: { active: 1 },
  complete: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
  failed: {
    failed: 4,
    conditions: [
      { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
    ],
  },
} as const satisfies Record<string, JsonObject>;

/** A remote Job in one of its states, for a desired Job Object. */
export function jobRemote(state: keyof typeof jobConditions): Remote {
  return { status: structuredClone(jobConditions[state]), ready: state === 'complete' };
}

/** Observe every desired resource of a response, with the world's answer for each key. */
export function observeAll(
  rsp: TestResponse,
  remote: (key: string, desired: JsonObject) => Remote | undefined,
): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [key, desired] of Object.entries(desiredResources(rsp))) out[key] = observe(desired, remote(key, desired));
  return out;
}

/** The XR with the status a response wrote (what the next reconcile observes). */
export function withStatusFrom(xr: TestResource, rsp: TestResponse): TestResource {
  const status = rsp.desired?.composite?.resource['status'] as JsonObject | undefined;
  const body: JsonObject = { ...xr.resource };
  if (status) body['status'] = status;
  else delete body['status'];
  return { resource: body };
}

export function results(rsp: TestResponse): [string, string][] {
  return rsp.results.map((r) => [r.severity, r.message]);
}

export function readiness(rsp: TestResponse): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(rsp.desired?.resources ?? {})) out[key] = value.ready;
  return out;
}
