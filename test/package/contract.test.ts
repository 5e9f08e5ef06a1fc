// ModelCache and ModelCacheHydration carry the same source fields and the same
// mount contract. These tests keep the two XRDs from drifting apart, and show
// that whatever the parent admits (at apply time and in its function), the
// child it stamps admits too: a cache never fails on one of its clusters for
// a field the cache itself accepted.

import { describe, expect, it } from 'vitest';
import { isObject, type JsonObject } from '#lib';
import {
  desiredResources,
  inProcessClient,
  inferenceCluster,
  items,
  loadXrd,
  request,
  validateXr,
  xrdSchema,
  type SchemaNode,
  type TestResponse,
} from '#testing';
import { compose as composeCache } from '../../functions/compose-model-cache/src/fn.js';
import { compose as composeHydration } from '../../functions/compose-model-cache-hydration/src/fn.js';

const parentXrd = loadXrd('package/modelcaches/definition.yaml');
const shardXrd = loadXrd('package/modelcacheshards/definition.yaml');
const childXrd = loadXrd('package/modelcachehydrations/definition.yaml');
const parent = xrdSchema(parentXrd);
const shardSchema = xrdSchema(shardXrd);
const child = xrdSchema(childXrd);

/** A schema without its descriptions, keys sorted: what the API server enforces, nothing else. */
function enforced(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(enforced);
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node).sort()) if (key !== 'description') out[key] = enforced(node[key]);
  return out;
}

function at(schema: SchemaNode, ...path: string[]): SchemaNode {
  let node: SchemaNode | undefined = schema;
  for (const key of path) node = key === '[]' ? node?.items : node?.properties?.[key];
  if (!node) throw new Error(`no schema at ${path.join('.')}`);
  return node;
}

function withoutProperty(schema: SchemaNode, property: string): SchemaNode {
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([key]) => key !== property));
  return { ...schema, properties };
}

describe('the two XRDs enforce the same shared fields', () => {
  it.each<[string, SchemaNode, SchemaNode]>([
    [
      'spec.huggingFace (the token reference sits beside it on the child)',
      withoutProperty(at(parent, 'spec', 'huggingFace'), 'authSecret'),
      at(child, 'spec', 'huggingFace'),
    ],
    ['spec.oci', at(parent, 'spec', 'oci'), at(child, 'spec', 'oci')],
    ['spec.persistentVolumeClaim', at(parent, 'spec', 'persistentVolumeClaim'), at(child, 'spec', 'persistentVolumeClaim')],
    ['spec.source', at(parent, 'spec', 'source'), at(child, 'spec', 'source')],
    [
      'the authSecret reference (the child also carries its namespace)',
      at(parent, 'spec', 'huggingFace', 'authSecret'),
      withoutProperty(at(child, 'spec', 'authSecret'), 'namespace'),
    ],
    [
      'the mount contract (status.clusters[].mount and status.mount)',
      at(parent, 'status', 'clusters', '[]', 'mount'),
      at(child, 'status', 'mount'),
    ],
    ['the phase', at(parent, 'status', 'clusters', '[]', 'phase'), at(child, 'status', 'phase')],
  ])('%s', (_name, a, b) => {
    expect(enforced(a)).toEqual(enforced(b));
  });
});

// The shard between them (docs/design/fleet.md) carries the child's spec fields, the cache's entries, and, while a
// cluster is handed over, the child's status to inherit: each exactly as the XR that owns it defines it.
describe('the shard XRD enforces what its cache and its children enforce', () => {
  const withoutDescription = (node: SchemaNode): SchemaNode => ({ ...node, description: undefined }) as SchemaNode;
  it.each<[string, SchemaNode, SchemaNode]>([
    ...(['source', 'huggingFace', 'oci', 'persistentVolumeClaim', 'authSecret', 'cacheName'] as const).map(
      (field): [string, SchemaNode, SchemaNode] => [`spec.${field}`, at(shardSchema, 'spec', field), at(child, 'spec', field)],
    ),
    [
      'status.clusters[] (the entries the cache copies)',
      at(shardSchema, 'status', 'clusters', '[]'),
      at(parent, 'status', 'clusters', '[]'),
    ],
    [
      'spec.clusters[].inheritedStatus, the child’s status without the hand-over’s own word (nor whether it was reachable)',
      withoutDescription(at(shardSchema, 'spec', 'clusters', '[]', 'inheritedStatus')),
      withoutDescription(withoutProperty(withoutProperty(at(child, 'status'), 'orphanOnDelete'), 'unreachable')),
    ],
    [
      'the child’s spec.inheritedStatus, the same',
      withoutDescription(at(child, 'spec', 'inheritedStatus')),
      withoutDescription(withoutProperty(withoutProperty(at(child, 'status'), 'orphanOnDelete'), 'unreachable')),
    ],
  ])('%s', (_name, a, b) => {
    expect(enforced(a)).toEqual(enforced(b));
  });
});

const cacheClient = inProcessClient('compose-model-cache', composeCache);
const hydrationClient = inProcessClient('compose-model-cache-hydration', composeHydration);
const SELECTOR = { matchLabels: { 'modelplane.ai/tier': 'a100' } };
const CLUSTER = inferenceCluster('cluster-a', {
  labels: { 'modelplane.ai/tier': 'a100' },
  providerConfig: 'cluster-a-pc',
  storageClassName: 'rwx',
  imageVolumes: true,
});
const DIGEST = `sha256:${'c'.repeat(64)}`;

/** Sources at the edges of what is valid, and a little past them. */
const SOURCES: [string, JsonObject][] = [
  ['a plain HuggingFace repo', { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 } }],
  [
    'a repo and revision of odd characters',
    { source: 'HuggingFace', huggingFace: { repo: "o'brien/$(x);y", revision: 'feature/ü-1', sizeGiB: 1 } },
  ],
  ['a repo at the length bound', { source: 'HuggingFace', huggingFace: { repo: 'r'.repeat(256), sizeGiB: 100000 } }],
  ['a repo past the length bound', { source: 'HuggingFace', huggingFace: { repo: 'r'.repeat(257), sizeGiB: 1 } }],
  ['a repo that reads as an option', { source: 'HuggingFace', huggingFace: { repo: '-x', sizeGiB: 1 } }],
  [
    'a token reference with its own key',
    { source: 'HuggingFace', huggingFace: { repo: 'r', sizeGiB: 1, authSecret: { name: 'hf.token', key: 'my_key-1.x' } } },
  ],
  [
    'a token key with a space',
    { source: 'HuggingFace', huggingFace: { repo: 'r', sizeGiB: 1, authSecret: { name: 'hf', key: 'my key' } } },
  ],
  ['an OCI tag', { source: 'OCI', oci: { ref: 'us-docker.pkg.dev/acme/models/qwen:v1' } }],
  ['an OCI digest with a registry port', { source: 'OCI', oci: { ref: `localhost:5000/qwen@${DIGEST}` } }],
  [
    'an OCI tag and digest',
    { source: 'OCI', oci: { ref: `reg.io/a/b/c:v1@${DIGEST}`, subPath: 'weights/v1', imagePullSecrets: [{ name: 'a' }, { name: 'b.c' }] } },
  ],
  ['an OCI reference in upper case', { source: 'OCI', oci: { ref: 'Reg.io/UPPER:tag' } }],
  ['an OCI reference with a space', { source: 'OCI', oci: { ref: 'reg.io/m :v1' } }],
  [
    'nine pull secrets',
    { source: 'OCI', oci: { ref: 'reg.io/m:v1', imagePullSecrets: Array.from({ length: 9 }, (_, i) => ({ name: `s${i}` })) } },
  ],
  ['an OCI subPath of three dots', { source: 'OCI', oci: { ref: 'reg.io/m:v1', subPath: '.../x' } }],
  ['an OCI subPath climbing out', { source: 'OCI', oci: { ref: 'reg.io/m:v1', subPath: 'a/../../etc' } }],
  [
    'a claim with a subPath',
    { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen.weights', subPath: 'models/qwen' } },
  ],
  ['a claim name in upper case', { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'Qwen' } }],
  [
    'a claim subPath with an empty segment',
    { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'c', subPath: 'a//b' } },
  ],
];

function fatal(rsp: TestResponse): string | undefined {
  return rsp.results.find((r) => r.severity === 'SEVERITY_FATAL')?.message;
}

describe('what the parent admits, the child it stamps admits', () => {
  it.each(SOURCES)('%s', async (_name, source) => {
    const spec = { ...source, clusterSelector: SELECTOR };
    const xrdProblems = validateXr(parentXrd, { spec });
    const xr = { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache', metadata: { name: 'qwen', namespace: 'ml-team' }, spec };
    const rsp = await cacheClient.run(
      request({ observed: { composite: { resource: xr } }, requiredResources: { clusters: items(CLUSTER), replicas: items() } }),
    );
    const parentFatal = fatal(rsp);
    // The function is never more lenient than the XRD: it refuses what the API server would.
    if (xrdProblems.length > 0) expect(parentFatal, xrdProblems.join('; ')).toBeDefined();
    if (parentFatal !== undefined) return;

    // The cache stamps a shard (docs/design/fleet.md), which the shard XRD admits, and the shard stamps the child.
    const shards = Object.values(desiredResources(rsp));
    expect(shards).toHaveLength(1);
    const shard = shards[0]!;
    expect(validateXr(shardXrd, { spec: shard['spec'] })).toEqual([]);
    const shardRsp = await cacheClient.run(
      request({ observed: { composite: { resource: { ...shard, metadata: { ...(shard['metadata'] as JsonObject), uid: 'u' } } } } }),
    );
    expect(fatal(shardRsp)).toBeUndefined();
    const children = Object.values(desiredResources(shardRsp));
    expect(children).toHaveLength(1);
    const stamped = children[0]!;
    expect(validateXr(childXrd, { spec: stamped['spec'] })).toEqual([]);
    const childRsp = await hydrationClient.run(
      request({
        observed: { composite: { resource: { ...stamped, metadata: { ...(stamped['metadata'] as JsonObject) } } } },
        requiredResources: { cluster: items(CLUSTER), 'auth-secret': items() },
      }),
    );
    expect(fatal(childRsp)).toBeUndefined();
  });
});
