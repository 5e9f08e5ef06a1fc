// Building blocks for compose-model-cache tests: the cache XR, its clusters and
// replicas, its children as observed, the single-function Objects it upgrades
// from, and the checks every response must pass.

import { expect } from 'vitest';
import { KIND, LABEL_CLUSTER, LABEL_MODELCACHE, MODELPLANE_API_VERSION, hydrationName, type JsonObject } from '#lib';
import {
  NAMESPACE,
  badValues,
  compositeStatus,
  condition,
  inferenceCluster,
  items,
  modelCacheXr,
  request,
  type ReadyName,
  type SeverityName,
  type StatusName,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';

export { NAMESPACE };
export const CACHE = 'qwen';
export const TIER = { 'modelplane.ai/tier': 'a100' } as const;

/** A provisioned cluster the default selector matches, as upstream's fixture (`<name>-pc`, `modelplane-rwx`). */
export function cluster(name: string, options: { labels?: Record<string, string>; provisioned?: boolean; storageClassName?: string } = {}) {
  return inferenceCluster(name, {
    labels: options.labels ?? { ...TIER },
    ...(options.provisioned === false ? {} : { providerConfig: `${name}-pc` }),
    storageClassName: options.storageClassName ?? 'modelplane-rwx',
  });
}

export function replica(name: string, clusterName: string, options: { cache?: string; namespace?: string } = {}): JsonObject {
  return {
    apiVersion: MODELPLANE_API_VERSION,
    kind: KIND.ModelReplica,
    metadata: { name, namespace: options.namespace ?? NAMESPACE },
    spec: { clusterName, modelCacheRef: { name: options.cache ?? CACHE }, engines: [] },
  };
}

/** The XR with the default HuggingFace source and selector; `spec` overrides fields (undefined removes one). */
export function cacheXr(spec: JsonObject = {}, status?: JsonObject): TestResource {
  return modelCacheXr(spec, status);
}

export const OCI_SPEC: JsonObject = { source: 'OCI', huggingFace: undefined, oci: { ref: 'us-docker.pkg.dev/acme/models/qwen:v1' } };
export const CLAIM_SPEC: JsonObject = {
  source: 'PersistentVolumeClaim',
  huggingFace: undefined,
  persistentVolumeClaim: { claimName: 'qwen-weights' },
};

export interface ChildReport {
  phase?: string;
  message?: string;
  mount?: JsonObject;
  accessModes?: string[];
  digest?: string;
  artifactKind?: string;
  /** The child's status.unreachable: its cluster can't be reached. */
  unreachable?: JsonObject;
  /** The child's own Ready condition (Crossplane's verdict). Defaults to phase == Ready. */
  ready?: boolean;
  /** The child's ArtifactReady reason (and message). */
  reason?: string;
  reasonMessage?: string;
}

/** The spec the parent stamps for the default HuggingFace cache on `clusterName`. */
export function childSpec(clusterName: string, extra: JsonObject = {}): JsonObject {
  return { clusterName, cacheName: CACHE, source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 }, ...extra };
}

/** A ModelCacheHydration as Crossplane observes it, with what Crossplane adds (spec.crossplane, its labels). */
export function observedChild(clusterName: string, report: ChildReport = {}, spec: JsonObject = childSpec(clusterName)): TestResource {
  const status: JsonObject = {};
  for (const field of ['phase', 'message', 'mount', 'accessModes', 'digest', 'artifactKind', 'unreachable'] as const) {
    if (report[field] !== undefined) status[field] = report[field];
  }
  const ready = report.ready ?? report.phase === 'Ready';
  const conditions: JsonObject[] = [
    { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
    { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' },
  ];
  if (report.reason !== undefined) {
    const condition: JsonObject = { type: 'ArtifactReady', status: report.reason === 'Staged' ? 'True' : 'False', reason: report.reason };
    if (report.reasonMessage !== undefined) condition['message'] = report.reasonMessage;
    conditions.push(condition);
  }
  status['conditions'] = conditions;
  return {
    resource: {
      apiVersion: MODELPLANE_API_VERSION,
      kind: KIND.ModelCacheHydration,
      metadata: {
        name: hydrationName(NAMESPACE, CACHE, clusterName),
        namespace: NAMESPACE,
        labels: { [LABEL_MODELCACHE]: CACHE, [LABEL_CLUSTER]: clusterName, 'crossplane.io/composite': CACHE },
      },
      spec: { ...spec, crossplane: { compositionRef: { name: 'modelcachehydrations.modelplane.ai' }, resourceRefs: [] } },
      status,
    },
  };
}

/** Required resources as Crossplane sends them once fetched. */
export function resolved(clusters: JsonObject[], replicas: JsonObject[] = []): TestRequest['requiredResources'] {
  return { clusters: items(...clusters), replicas: items(...replicas) };
}

/** A request with both requirements resolved. */
export function cacheRequest(parts: {
  xr?: TestResource;
  clusters?: JsonObject[];
  replicas?: JsonObject[];
  observed?: Record<string, TestResource>;
}): TestRequest {
  return request({
    observed: { composite: parts.xr ?? cacheXr(), resources: parts.observed ?? {} },
    requiredResources: resolved(parts.clusters ?? [cluster('cluster-a')], parts.replicas ?? []),
  });
}

/** A status the XR had last time, with its Ready condition. */
export function lastStatus(clusters: JsonObject[], ready: boolean): JsonObject {
  return {
    summary: { ready: `${clusters.filter((c) => c['phase'] === 'Ready').length}/${clusters.length}` },
    clusters,
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' }],
  };
}

/** What every response must satisfy: no null anywhere, the upstream TTL, the tag echoed. */
export function expectWellFormed(rsp: TestResponse): void {
  expect(badValues(rsp)).toEqual([]);
  expect(rsp.meta.ttl).toEqual({ seconds: 60, nanos: 0 });
  expect(rsp.meta.tag).toBe('test');
}

export interface Expected {
  /** Every desired key with its readiness. */
  desired: Record<string, ReadyName>;
  status?: JsonObject;
  conditions?: Record<string, [StatusName, string] | [StatusName, string, string]>;
  results: [SeverityName, string][];
  compositeReady?: ReadyName;
  /** Requirements only: no status, conditions or composite. */
  requirementsOnly?: boolean;
}

export function checkExpected(rsp: TestResponse, expected: Expected): void {
  expectWellFormed(rsp);
  const readiness = Object.fromEntries(Object.entries(rsp.desired?.resources ?? {}).map(([key, value]) => [key, value.ready]));
  expect(readiness).toEqual(expected.desired);
  expect(rsp.results.map((result) => [result.severity, result.message])).toEqual(expected.results);
  expect(rsp.results.filter((result) => result.severity === 'SEVERITY_FATAL')).toEqual([]);
  if (expected.requirementsOnly) {
    expect(rsp.desired?.composite).toBeUndefined();
    expect(rsp.conditions).toEqual([]);
    expect(rsp.requirements?.resources).toEqual({
      clusters: {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'InferenceCluster',
        matchLabels: { labels: { 'modelplane.ai/tier': 'a100' } },
      },
      replicas: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelReplica', matchLabels: { labels: {} }, namespace: NAMESPACE },
    });
    return;
  }
  if (expected.status) expect(compositeStatus(rsp)).toEqual(expected.status);
  for (const [type, [status, reason, message]] of Object.entries(expected.conditions ?? {})) {
    if (message === undefined) expect(condition(rsp, type)).toMatchObject({ status, reason });
    else expect(condition(rsp, type)).toEqual({ status, reason, message });
  }
  if (expected.compositeReady) expect(rsp.desired?.composite?.ready).toBe(expected.compositeReady);
}

/** A ModelCache summary as the cache writes it for a fleet listed in full; counts not given are 0. */
export function summaryOf(
  ready: string,
  counts: { pending?: number; hydrating?: number; failed?: number; shards?: number } = {},
  extra: JsonObject = {},
): JsonObject {
  const clusters = Number(ready.split('/')[1]);
  return {
    ready,
    clusters,
    pending: counts.pending ?? 0,
    hydrating: counts.hydrating ?? 0,
    failed: counts.failed ?? 0,
    shards: counts.shards ?? 1,
    listed: 'All',
    ...extra,
  };
}
