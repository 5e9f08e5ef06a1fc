// A structure-aware mutator: it knows what a RunFunctionRequest is made of
// (the XR, observed composed resources, required resources, the tag) and
// breaks one part at a time the way users, other controllers and stale caches
// break them: fields removed, types swapped, huge and deep values, unicode,
// numbers as strings, lists as maps, unknown sources, non-DNS names,
// duplicate clusters, objects of the wrong kind, nulls where objects belong;
// and (issue 29) a credential inside every URL-like setting under every
// check that refuses it, a misspelled field at every level of the input, and
// the token printed in every encoding into what a cluster reports.

import { MAX_STRUCT_DEPTH, type JsonObject, type JsonValue } from '#lib';
import type { FunctionName, TestRequest, TestResource } from '#testing';
import type { Random } from '../support/prng.js';
import {
  INPUT_KIND,
  INPUT_SCHEMA,
  PLANTED_PASSWORD,
  URL_SETTINGS,
  fieldPath,
  fullInput,
  objectLevels,
  refusals,
  typo,
} from '../support/settings-input.js';

/** The token every Secret the fuzzer makes holds, so a leak of it anywhere is findable. */
export const FUZZ_TOKEN = 'hf_fuzzTokenValue0123456789';
export const FUZZ_TOKEN_B64 = Buffer.from(FUZZ_TOKEN).toString('base64');
/** The examples' placeholder token: the campaign puts FUZZ_TOKEN in its place, so every token Secret holds the findable one. */
export const EXAMPLE_TOKEN_B64 = 'aGYtdG9rZW4tdmFsdWU=';
/** The password hidden in settings: found in an answer or a log line, it leaked. */
export const FUZZ_PASSWORD = PLANTED_PASSWORD;

type Json = JsonValue;
type Path = (string | number)[];

const UNICODE = [
  'ünïcødé',
  '日本語のモデル',
  '🚀🔥 rocket',
  'e\u0301\u0301\u0301', // combining marks
  '\u202eevil\u202c', // right-to-left override
  'zero\u200bwidth',
  'ｆｕｌｌｗｉｄｔｈ',
  'сluster-a', // a Cyrillic "с" that looks Latin
  'line\u2028separator',
  'nul\u0000inside',
  '\ud800lone', // a lone surrogate
  'tab\there',
  'quote\'"`$(reboot)`;rm -rf /',
];

const NON_DNS = [
  '',
  'Cluster-A',
  'cluster_a',
  'cluster.a',
  '-cluster',
  'cluster-',
  '0cluster',
  '9',
  'a'.repeat(63),
  'a'.repeat(64),
  'b'.repeat(253),
  'x'.repeat(300),
  'has space',
  'slash/inside',
  'ünï',
  '..',
  '*',
];

/** Names Kubernetes admits that still trip code: a leading digit, one character, exactly 63. */
const EDGE_NAMES = ['0model', '9', '1-2-3', 'z', 'a'.repeat(63), `${'x-'.repeat(31)}x`, 'model-v2'];

const EDGE_NUMBERS = [NaN, Infinity, -Infinity, -0, 0, -1, 0.5, 1e308, 2 ** 53 + 1, -(2 ** 63), 1e-300, 100001];

const KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'ünï', 'a.b', 'a/b', 'x'.repeat(500)];

const SOURCES = ['S3', 'huggingface', 'HUGGINGFACE', 'Git', '', ' HuggingFace', 'OCI ', 'HuggingFace', 'OCI', 'PersistentVolumeClaim'];

const SCALARS: Json[] = [0, 1, -1, 1.5, true, false, '', 'x', '20', 'true', 'null'];

function clone<T>(value: T): T {
  return structuredClone(value);
}

// --- Objects of the wrong kind ------------------------------------------------

function secret(name: string, data: JsonObject): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ml-team' }, type: 'Opaque', data };
}

function objectWith(manifest: Json, status?: JsonObject, ready = true): JsonObject {
  const out: JsonObject = {
    apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
    kind: 'Object',
    metadata: { name: 'stranger-x1' },
    spec: { forProvider: { manifest }, providerConfigRef: { kind: 'ClusterProviderConfig', name: 'elsewhere-pc' } },
    status: {
      atProvider: { manifest: status ? { ...(manifest as JsonObject), status } : manifest },
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' }],
    },
  };
  return out;
}

/** Objects a requirement or an observed key should never hold, and sometimes does. */
export const STRANGERS: (() => JsonObject)[] = [
  () => ({}),
  () => secret('hf-token', { HF_TOKEN: FUZZ_TOKEN_B64, OTHER: Buffer.from('another-secret-value').toString('base64') }),
  () => ({
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'InferenceCluster',
    metadata: { name: 'cluster-a', labels: { 'modelplane.ai/tier': 'a100' } },
    status: { providerConfigRef: { name: 'cluster-a-pc' }, cache: { storageClassName: 'modelplane-rwx', imageVolumes: true } },
  }),
  () => ({
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: { name: 'qwen', namespace: 'ml-team' },
    spec: { source: 'OCI', oci: { ref: 'r.io/m:v1' }, clusterSelector: { matchLabels: { a: 'b' } } },
    status: { clusters: [{ name: 'cluster-a', phase: 'Ready', mount: { volumes: [{ name: 'x', hostPath: { path: '/' } }] } }] },
  }),
  () => ({
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: { name: 'chat', namespace: 'ml-team' },
    spec: { clusterName: 'cluster-a', modelCacheRef: { name: 'qwen' }, engines: 'none' },
  }),
  () => ({
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCacheHydration',
    metadata: { name: 'modelcache-ml-team-qwen-cluster-a-d4283', namespace: 'ml-team' },
    spec: { clusterName: 'cluster-a', cacheName: 'qwen', source: 'HuggingFace', huggingFace: { repo: 'x/y', sizeGiB: 1 } },
    status: { phase: 'Ready', mount: 'not-an-object' },
  }),
  () => objectWith({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' } }, { replicas: 1 }),
  () =>
    objectWith(
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'other-job', namespace: 'default' } },
      { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] },
      false,
    ),
  () =>
    objectWith({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'lost', namespace: 'default' } }, { phase: 'Lost' }),
  () => objectWith({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { ref: 5, digest: ['x'] } }),
  () => objectWith('a manifest that is a string'),
  () => objectWith([1, 2, 3]),
  () => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { atProvider: null, conditions: 'Ready' } }),
  () => ({ kind: 'Object', spec: null, status: { atProvider: { manifest: { status: { phase: 'Bound' } } } } }),
];

// --- Paths --------------------------------------------------------------------

/** Every path into a value (containers and leaves), at most `limit` of them, in a stable order. */
function paths(value: Json, limit = 4000): Path[] {
  const out: Path[] = [];
  const walk = (node: Json, path: Path): void => {
    if (out.length >= limit) return;
    out.push(path);
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        walk(item, [...path, i]);
      });
    } else if (node !== null && typeof node === 'object') for (const key of Object.keys(node)) walk(node[key] as Json, [...path, key]);
  };
  walk(value, []);
  return out;
}

function getAt(root: Json, path: Path): Json | undefined {
  let node: Json | undefined = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, Json>)[key];
  }
  return node;
}

/** Replace the value at `path` (not the root); undefined removes it. */
function setAt(root: Json, path: Path, value: Json | undefined): void {
  const parent = getAt(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent) && typeof key === 'number') {
    if (value === undefined) parent.splice(key, 1);
    else parent[key] = value;
  } else if (parent !== null && typeof parent === 'object' && !Array.isArray(parent)) {
    if (value === undefined) Reflect.deleteProperty(parent, key);
    else defineKey(parent, key as string, value);
  }
}

/** Set, creating objects along the way (for targeted edits of fields a seed may not have). */
function setDeep(root: JsonObject, path: string[], value: Json | undefined): boolean {
  // A list is walked by index ("0"), and only to an item it has: an edit of members[1] means nothing for a single member.
  let node: JsonObject | Json[] = root;
  for (const key of path.slice(0, -1)) {
    if (Array.isArray(node)) {
      const item: Json | undefined = /^\d+$/.test(key) ? node[Number(key)] : undefined;
      if (item === undefined || item === null || typeof item !== 'object') return false;
      node = item;
      continue;
    }
    const next = node[key];
    if (next === null || next === undefined || typeof next !== 'object') node[key] = {};
    node = node[key] as JsonObject | Json[];
  }
  const last = path[path.length - 1]!;
  if (Array.isArray(node)) {
    const index = /^\d+$/.test(last) ? Number(last) : -1;
    if (index < 0 || index >= node.length) return false;
    if (value === undefined) node.splice(index, 1);
    else node[index] = value;
  } else if (value === undefined) Reflect.deleteProperty(node, last);
  else defineKey(node, last, value);
  return true;
}

/** The object under `key`, made one if an earlier mutation left something else there. */
function objectField(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
  const fresh: JsonObject = {};
  parent[key] = fresh;
  return fresh;
}

/** An own key, even "__proto__". */
function defineKey(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** How many containers deep a value reaches, counting the value itself as 0 (the codec's depth). */
export function containerDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return -1;
  let deepest = 0;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  for (const child of children) deepest = Math.max(deepest, containerDepth(child) + 1);
  return deepest;
}

/** The deepest Struct in a request, as the server's codec counts it. */
export function requestDepth(req: TestRequest): number {
  const resources: TestResource[] = [];
  if (req.observed?.composite) resources.push(req.observed.composite);
  resources.push(...Object.values(req.observed?.resources ?? {}));
  if (req.desired?.composite) resources.push(req.desired.composite);
  resources.push(...Object.values(req.desired?.resources ?? {}));
  for (const set of [req.requiredResources, req.extraResources]) for (const list of Object.values(set ?? {})) resources.push(...list.items);
  let deepest = Math.max(containerDepth(req.context ?? {}), 0);
  for (const resource of resources) deepest = Math.max(deepest, containerDepth(resource.resource));
  return deepest;
}

/** A value `levels` containers deep, alternating objects and lists. */
function nested(levels: number, leaf: Json = 'bottom'): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { next: value } : [value];
  return value;
}

// --- Value mutations ----------------------------------------------------------

type Op = (rnd: Random, value: Json | undefined, depth: number) => { value: Json | undefined; name: string };

/** Containers and leaves in a value. */
function nodeCount(value: Json | undefined): number {
  if (value === null || typeof value !== 'object') return 1;
  let count = 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) count += nodeCount(child);
  return count;
}

/**
 * A huge value stays within about this many nodes: a list of 10,000 copies of
 * a deep subtree would be a million-node request, which no cluster sends and
 * which only measures how fast a Struct decodes (the size bound itself, 64
 * MiB, is the load test's).
 */
const HUGE_NODE_BUDGET = 100_000;

const huge = (rnd: Random, value: Json | undefined): { value: Json; name: string } => {
  if (Array.isArray(value) && value.length > 0) {
    const each = Math.max(...value.map(nodeCount));
    const n = Math.max(2, Math.min(rnd.pick([1000, 10_000]), Math.floor(HUGE_NODE_BUDGET / each)));
    return { value: Array.from({ length: n }, (_, i) => clone(value[i % value.length]!)), name: `huge list ×${n}` };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && rnd.chance(0.5)) {
    const n = rnd.pick([1000, 5000]);
    const out: JsonObject = { ...value };
    for (let i = 0; i < n; i++) out[`k${i}`] = `v${i}`;
    return { value: out, name: `huge map +${n} keys` };
  }
  const n = rnd.pick([1024, 65_536, 1 << 20]);
  const unit = rnd.pick(['a', 'ü', '🚀', 'a-']);
  return { value: unit.repeat(Math.ceil(n / unit.length)), name: `huge string ${n}` };
};

const OPS: Record<string, Op> = {
  remove: () => ({ value: undefined, name: 'remove' }),
  null: () => ({ value: null, name: 'null' }),
  swapType: (rnd, value) => {
    const candidates: Json[] = [...SCALARS, [], {}, [1, 2], { a: 1 }, [{ name: 'x' }]].filter(
      (c) => typeof c !== typeof value || Array.isArray(c) !== Array.isArray(value),
    );
    const picked = rnd.pick(candidates);
    return { value: clone(picked), name: `type → ${JSON.stringify(picked)}` };
  },
  numberAsString: (rnd, value) => {
    if (typeof value === 'number') return { value: String(value), name: 'number as string' };
    if (typeof value === 'string') return { value: rnd.pick([20, 0, -1, 1.5]), name: 'string as number' };
    if (typeof value === 'boolean') return { value: String(value), name: 'bool as string' };
    return { value: '20', name: 'as string "20"' };
  },
  listAsMap: (_rnd, value) => {
    if (Array.isArray(value)) {
      const out: JsonObject = {};
      value.forEach((item, i) => (out[String(i)] = item));
      return { value: out, name: 'list as map' };
    }
    if (value !== null && typeof value === 'object') return { value: Object.values(value) as Json[], name: 'map as list' };
    return { value: [value ?? null], name: 'wrapped in a list' };
  },
  huge: (rnd, value) => huge(rnd, value),
  unicode: (rnd, value) => {
    const text = rnd.pick(UNICODE);
    return { value: typeof value === 'string' && rnd.chance(0.5) ? value + text : text, name: `unicode ${JSON.stringify(text)}` };
  },
  nonDns: (rnd) => {
    const name = rnd.pick(NON_DNS);
    return { value: name, name: `non-DNS ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…×${name.length}` : name)}` };
  },
  numberEdge: (rnd) => {
    const n = rnd.pick(EDGE_NUMBERS);
    return { value: n, name: `number ${String(n)}` };
  },
  empty: (rnd) => {
    const v = rnd.pick<Json>(['', [], {}]);
    return { value: clone(v), name: `empty ${JSON.stringify(v)}` };
  },
  weirdKey: (rnd, value) => {
    const key = rnd.pick(KEYS);
    const base: JsonObject = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {};
    defineKey(base, key, rnd.pick<Json>([{ polluted: true }, 'x', null, 1]));
    return { value: base, name: `key ${JSON.stringify(key.slice(0, 12))}` };
  },
  deep: (rnd, _value, depth) => {
    // Stay at or under the codec's bound: deeper requests are refused by design, and are tested apart.
    const room = MAX_STRUCT_DEPTH - depth;
    const levels = Math.max(1, rnd.chance(0.5) ? room : rnd.int(1, Math.max(1, room)));
    return { value: nested(levels), name: `deep ${levels}` };
  },
};
const OP_NAMES = Object.keys(OPS);
/** Removing, nulling and retyping are what real drift looks like most; weight them up. */
const WEIGHTED_OPS = [...OP_NAMES, 'remove', 'remove', 'null', 'null', 'swapType', 'swapType', 'nonDns', 'unicode'];

/** Apply one random op at a random path inside `root` (never replacing `root` itself). */
function mutateInside(rnd: Random, root: JsonObject, rootDepth: number, label: string, prefer?: string[]): string {
  let base: Path = [];
  if (prefer && rnd.chance(0.7) && getAt(root, prefer) !== undefined) base = prefer;
  const subtree = getAt(root, base) as Json;
  const candidates = paths(subtree)
    .map((p) => [...base, ...p])
    .filter((p) => p.length > 0);
  if (candidates.length === 0) return `${label}: nothing to mutate`;
  const path = rnd.pick(candidates);
  const opName = rnd.pick(WEIGHTED_OPS);
  const { value, name } = OPS[opName]!(rnd, getAt(root, path), rootDepth + path.length);
  setAt(root, path, value);
  return `${label}.${path.join('.')}: ${name}`;
}

// --- Targeted edits: the fields each function reads ---------------------------

type Edit = [path: string[], values: (Json | undefined)[]];

const NAME_EDIT: Edit = [
  ['metadata', 'name'],
  [...EDGE_NAMES, ...NON_DNS, undefined],
];
const COMMON_EDITS: Edit[] = [
  NAME_EDIT,
  [
    ['metadata', 'namespace'],
    [...NON_DNS, undefined],
  ],
  [['metadata'], [null, 'x', []]],
  [['spec'], [null, undefined, 'spec', [], {}]],
  [['status'], [null, 'x', [], {}]],
];

const SUB_PATHS: Json[] = ['../etc', '/abs', 'a//b', '.', 'ok/dir', 'a/./b', '...', 'ü/🚀', 'x'.repeat(1025), '', 5];
const OCI_REFS: Json[] = [
  'r.io/m@sha256:abc',
  'UPPER/case:tag',
  'a b',
  `registry.io/x:tag@sha256:${'a'.repeat(64)}`,
  `registry.io/x@sha256:${'F'.repeat(64)}`,
  'localhost:5000/m:v1',
  ':tag',
  '@sha256:',
  'r.io/' + 'p/'.repeat(600) + 'm',
  '-flag',
];

const EDITS: Record<FunctionName, Edit[]> = {
  'compose-model-cache': [
    NAME_EDIT,
    [['metadata', 'namespace'], EDGE_NAMES],
    [['spec', 'source'], SOURCES],
    [
      ['spec', 'huggingFace', 'sizeGiB'],
      ['20', 0, -1, 1.5, 1e9, NaN, 100000, null],
    ],
    [
      ['spec', 'huggingFace', 'repo'],
      ['', '-rf', 'a@b', 'Qwen/Qwen3-0.6B', 'x'.repeat(257), ...UNICODE],
    ],
    [
      ['spec', 'huggingFace', 'revision'],
      ['', '-x', 'main', 5],
    ],
    [
      ['spec', 'huggingFace', 'authSecret'],
      [{ name: 'Bad_Name' }, { name: 'x', key: 'bad key' }, { key: 'K' }, 'hf-token', null],
    ],
    [
      ['spec', 'huggingFace', 'authSecret', 'key'],
      ['bad key', 'K', '', 'a'.repeat(254)],
    ],
    [
      ['spec', 'oci'],
      [{ ref: 'r.io/m:v1' }, { ref: 'r.io/m:v1', imagePullSecrets: [{ name: 'a' }, { name: 'A' }] }, 'r.io/m:v1', null],
    ],
    [['spec', 'oci', 'ref'], OCI_REFS],
    [['spec', 'oci', 'subPath'], SUB_PATHS],
    [
      ['spec', 'oci', 'imagePullSecrets'],
      [Array.from({ length: 9 }, (_, i) => ({ name: `s${i}` })), [{}], 'regcred'],
    ],
    [
      ['spec', 'persistentVolumeClaim'],
      [{ claimName: 'qwen-weights' }, { claimName: 'Bad' }, { subPath: 'x' }],
    ],
    [['spec', 'persistentVolumeClaim', 'claimName'], NON_DNS],
    [['spec', 'persistentVolumeClaim', 'subPath'], SUB_PATHS],
    [
      ['spec', 'clusterSelector'],
      [
        {},
        { matchLabels: {} },
        { matchExpressions: [] },
        { matchExpressions: [{ key: 'a', operator: 'Bogus' }] },
        { matchExpressions: [{ key: 'a', operator: 'In' }] },
        { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
        { matchExpressions: [{ key: 'modelplane.ai/tier', operator: 'NotIn', values: ['cpu'] }] },
        { matchExpressions: [{ key: 'modelplane.ai/tier', operator: 'DoesNotExist' }] },
        { matchLabels: { 'modelplane.ai/tier': 5 } },
        { matchLabels: { 'modelplane.ai/tier': 'a100' }, matchExpressions: 'all' },
        { matchLabels: [] },
        'tier=a100',
      ],
    ],
    [
      ['status', 'clusters'],
      ['x', [{ name: 'cluster-a', phase: 'Failed' }], [{ phase: 'Ready' }], [null]],
    ],
  ],
  'compose-model-cache-hydration': [
    NAME_EDIT,
    [['metadata', 'namespace'], EDGE_NAMES],
    [['spec', 'source'], SOURCES],
    [
      ['spec', 'clusterName'],
      [...EDGE_NAMES, ...NON_DNS],
    ],
    [
      ['spec', 'cacheName'],
      [...EDGE_NAMES, ...NON_DNS],
    ],
    [
      ['spec', 'huggingFace', 'sizeGiB'],
      ['20', 0, -1, 1.5, 1e9, NaN, null],
    ],
    [
      ['spec', 'huggingFace', 'repo'],
      ['', '-rf', 'a@b', "it's", '$(reboot)', 'x'.repeat(70_000), ...UNICODE],
    ],
    [
      ['spec', 'huggingFace', 'revision'],
      ['', '-x', "main'; rm -rf / #", 5],
    ],
    [
      ['spec', 'authSecret'],
      [{ name: 'hf-token', namespace: 'other-team' }, { name: 'Bad_Name' }, { name: 'hf-token', key: 'a b' }, 'x'],
    ],
    [
      ['spec', 'authSecret', 'key'],
      ['OTHER', 'MISSING', '', 'a b'],
    ],
    [
      ['spec', 'oci'],
      [{ ref: 'r.io/m:v1' }, { ref: 'r.io/m:v1', subPath: 'w' }, null],
    ],
    [['spec', 'oci', 'ref'], OCI_REFS],
    [['spec', 'oci', 'subPath'], SUB_PATHS],
    [
      ['spec', 'persistentVolumeClaim'],
      [{ claimName: 'qwen-weights' }, { claimName: 'c'.repeat(253) }, { claimName: 'a.b.c' }],
    ],
    [['spec', 'persistentVolumeClaim', 'claimName'], NON_DNS],
    [
      ['status', 'phase'],
      ['Ready', 'Failed', 'Bogus', 5, null],
    ],
    [
      ['status', 'digest'],
      ['sha256:zzz', `sha256:${'A'.repeat(64)}`, 'md5:0123', 'latest', `sha256:${'b'.repeat(64)}`, 7, ''],
    ],
    [
      ['status', 'artifactKind'],
      ['Image', 'ModelArtifact', 'Helm'],
    ],
    [
      ['status', 'resolvedRef'],
      ['r.io/m:v1', 'us-docker.pkg.dev/acme/models/qwen:v1', 5],
    ],
    [
      ['status', 'staged'],
      ['Qwen/Qwen3-0.6B', 'Qwen/Qwen3-0.6B@main', 'other/repo'],
    ],
  ],
  'compose-model-replica': [
    NAME_EDIT,
    NAME_EDIT,
    [['metadata', 'namespace'], EDGE_NAMES],
    [
      ['spec', 'clusterName'],
      [...NON_DNS, 'cluster-b'],
    ],
    [
      ['spec', 'modelCacheRef'],
      [{ name: 'other' }, { name: '' }, 'qwen', {}, null, undefined],
    ],
    [
      ['spec', 'serving'],
      [{ mode: 'PrefillDecode' }, { mode: 'Bogus' }, { mode: 'Unified' }, 'Unified'],
    ],
    [
      ['spec', 'engines'],
      [[], 'engine', Array.from({ length: 9 }, () => ({ name: 'e' }))],
    ],
    [
      ['spec', 'engines', '0', 'name'],
      [...EDGE_NAMES, ...NON_DNS],
    ],
    [
      ['spec', 'engines', '0', 'copies'],
      ['2', 0, 65, 1.5, -1, NaN, 64],
    ],
    [
      ['spec', 'engines', '0', 'phase'],
      ['Prefill', 'Decode', 'Bogus'],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'role'],
      ['Boss', 'Leader', 'Worker', '', 5],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'nodePoolName'],
      ['bad value!', 'x'.repeat(64), '', '-a', 'ok'],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'deviceRequests'],
      [[], [{ name: 'gpu' }], [{ name: 'g', deviceClassName: 'd', count: 65 }]],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'worker'],
      [{ nodes: 0 }, { nodes: 64 }, { nodes: 2 }],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'template', 'spec', 'containers'],
      [
        [],
        [{ name: 'sidecar', image: 'x' }],
        [{ name: 'engine' }],
        [
          { name: 'engine', image: 'a' },
          { name: 'engine', image: 'b' },
        ],
      ],
    ],
    ...(['0', '1'] as const).map((member): Edit => [
      ['spec', 'engines', '0', 'members', member, 'template', 'metadata'],
      [
        { labels: { 'modelplane.ai/serving': 'hijack' } },
        { labels: { 'bad key!': 'v' } },
        { labels: { team: 'bad value!' } },
        { labels: { 'example.com/team': 'ml' }, annotations: { 'example.com/note': 'x'.repeat(9000) } },
        { annotations: { 'Bad_Prefix.x/k': 'v' } },
        { annotations: { a: 5 } },
        'x',
      ],
    ]),
    [
      ['spec', 'engines', '0', 'members', '0', 'template', 'spec', 'containers', '0', 'env'],
      [
        [{ name: 'MODELPLANE_MODEL', value: 'override' }],
        [{ name: 'HOME' }],
        [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
        [{ name: '', value: 'x' }],
        [{ name: 'X', valueFrom: {} }],
        'X=1',
      ],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'template', 'spec', 'containers', '0', 'args'],
      [['--block-size=abc'], ['--block-size'], ['--page-size', '99999999999999999999'], ['--block-size=0x10'], [5], 'args'],
    ],
    [
      ['spec', 'engines', '0', 'members', '0', 'template', 'spec', 'imagePullSecrets'],
      [[{ name: 'a' }, { name: 'a' }], [{}], 'regcred'],
    ],
    [
      ['status', 'conditions'],
      ['x', [{ type: 'ModelAccepted', status: 'False', reason: 'HydrationFailed', message: 5 }]],
    ],
  ],
};

const CLUSTER_EDITS: Edit[] = [
  [
    ['status', 'providerConfigRef'],
    [undefined, null, {}, { name: '' }, { name: 5 }, 'pc'],
  ],
  [
    ['status', 'cache', 'storageClassName'],
    [undefined, '', 5, 'modelplane-rwx'],
  ],
  [
    ['status', 'cache', 'imageVolumes'],
    [true, false, 'true', 1],
  ],
  [
    ['metadata', 'labels'],
    [{}, { 'modelplane.ai/tier': 'cpu' }, { 'modelplane.ai/tier': 5 }, 'tier', null],
  ],
  [
    ['metadata', 'name'],
    [...EDGE_NAMES, ...NON_DNS],
  ],
  [
    ['spec', 'stack'],
    ['Dynamo', 'Standard', '', 5],
  ],
  [
    ['status', 'gateway'],
    [{ name: 'g', namespace: 'n' }, 'gw', { name: 5 }],
  ],
];

const CACHE_ENTRY_EDITS: Edit[] = [
  [
    ['status', 'clusters'],
    [[], 'x', null, [{ name: 'cluster-a' }], [{ name: 'cluster-a', phase: 'Ready' }]],
  ],
  [['status'], [undefined, {}, 'x']],
];

// --- The function input (issue 15: the platform team's settings) -------------

const SETTINGS = { apiVersion: 'fn.modelplane.ai/v1alpha1' } as const;
const HOSTILE_STRINGS: Json[] = ["x'; touch PWNED; '", '$(id)', '`id`', 'a b', '', 'ü', 'x'.repeat(5000), 5, null, true, [], {}];
const INPUT_EDITS: Edit[] = [
  [['kind'], ['Settings', 'HydrationSettings', 'ReplicaSettings', undefined, 5]],
  [['apiVersion'], ['fn.modelplane.ai/v1', undefined, '']],
  [['workloadNamespace'], ['Shared', 'PerTeam', 'perteam', 'mp-ml-team', 5, null]],
  [
    ['images', 'hydration'],
    ['registry.corp.example/ml/hf:1', 'python:3.11-slim', 'UPPER/x', ...HOSTILE_STRINGS],
  ],
  [
    ['images', 'resolver'],
    ['registry.corp.example/crane:v1', ...OCI_REFS, ...HOSTILE_STRINGS],
  ],
  [
    ['images', 'pullSecrets'],
    [['corp-registry'], ['A'], [5], 'x', Array.from({ length: 20 }, (_, i) => `s${i}`)],
  ],
  [
    ['install', 'pip'],
    [true, false, 'false', 0],
  ],
  [
    ['install', 'indexUrl'],
    ['https://pypi.corp.example/simple', 'ftp://x', 'https://u:p@x', ...HOSTILE_STRINGS],
  ],
  [
    ['network', 'hfEndpoint'],
    ['https://hf-mirror.corp.example', 'hf-mirror', 'https://[::1]:8080', ...HOSTILE_STRINGS],
  ],
  [
    ['network', 'httpsProxy'],
    ['http://proxy:3128', 'http://me:secret@proxy:3128', 'socks5://p:1', ...HOSTILE_STRINGS],
  ],
  [
    ['network', 'noProxy'],
    ['.svc,10.0.0.0/8', '.svc, .local', '*', ...HOSTILE_STRINGS],
  ],
  [
    ['network', 'caBundle'],
    [{ configMap: 'corp-ca' }, { configMap: 'Corp CA' }, { configMap: 'ca', key: '../x' }, {}, 'ca', null],
  ],
  [
    ['jobs', 'resources'],
    [{ limits: { memory: '4Gi' } }, { limits: { memory: 'lots' } }, { requests: { 'bad key!': 1 } }, { requests: { cpu: -1 } }],
  ],
  [
    ['jobs', 'nodeSelector'],
    [{ pool: 'staging' }, { 'bad key!': 'x' }, { a: 5 }, []],
  ],
  [
    ['jobs', 'tolerations'],
    [[{ operator: 'Exists' }], [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }], [{ value: 'x' }], [5], {}],
  ],
  [
    ['jobs', 'priorityClassName'],
    ['staging-low', 'High', ...HOSTILE_STRINGS],
  ],
  [
    ['jobs', 'ttlSecondsAfterFinished'],
    [60, 600, 59, 86_401, 1.5, '600', NaN],
  ],
  [
    ['jobs', 'backoffLimit'],
    [0, 10, 11, -1, 2.5],
  ],
  [
    ['storage', 'accessMode'],
    ['ReadWriteOnce', 'ReadOnlyMany', 'rwx', 5],
  ],
  [
    ['storage', 'imageVolumes'],
    [true, false, 'yes'],
  ],
  [
    ['clusters'],
    [
      [{ clusterSelector: { matchLabels: { 'modelplane.ai/tier': 'a100' } }, storage: { imageVolumes: true } }],
      [{}],
      [{ clusterSelector: {} }],
      'x',
      [5],
    ],
  ],
];

/** The request's input, or a fresh one of the function's kind (sometimes one with every level filled in). */
function inputOf(rnd: Random, req: TestRequest, name: FunctionName): JsonObject {
  const kind = INPUT_KIND[name];
  if (!req.input || rnd.chance(0.2)) {
    req.input =
      (rnd.chance(0.5) ? fullInput(name) : undefined) ?? (kind === undefined ? { ...SETTINGS, kind: 'Anything' } : { ...SETTINGS, kind });
  }
  return req.input;
}

/** Add a settings input to a request without one, or edit the one it has (the function must answer either with a Fatal naming an input field or a sound response). */
function mutateInput(rnd: Random, req: TestRequest, name: FunctionName): string {
  const roll = rnd.next();
  if (roll < 0.3) return mutateCredential(rnd, req, name);
  if (roll < 0.55) return mutateMisspelling(rnd, req, name);
  const input = inputOf(rnd, req, name);
  if (rnd.chance(0.1)) return mutateInside(rnd, input, 0, 'input');
  return edit(rnd, input, INPUT_EDITS, 'input');
}

/**
 * A credential inside a URL-like setting (the top level or a per-cluster
 * override), in a value some check refuses: its scheme, a character, its
 * length, the user info itself, a query. The answer must be Fatal, and hold
 * the password in no form (invariants.ts).
 */
function mutateCredential(rnd: Random, req: TestRequest, name: FunctionName): string {
  const input = inputOf(rnd, req, name);
  const { path, kind } = rnd.pick(URL_SETTINGS);
  let at: (string | number)[] = [];
  if (rnd.chance(0.4)) {
    const clusters = Array.isArray(input['clusters']) ? input['clusters'] : (input['clusters'] = []);
    if (clusters.length === 0 || clusters[0] === null || typeof clusters[0] !== 'object' || Array.isArray(clusters[0])) {
      clusters[0] = { clusterSelector: { matchLabels: { 'modelplane.ai/tier': 'a100' } } };
    }
    at = ['clusters', 0];
  }
  const refusal = rnd.pick(refusals(kind, FUZZ_PASSWORD));
  setDeep(input, [...at, ...path].map(String), clone(refusal.value));
  return `${fieldPath([...at, ...path])} = a credential, refused for ${refusal.check}`;
}

/**
 * A misspelled field at some level of the input (every object level of the
 * function's input CRD can be picked), beside or instead of the field it
 * means; for compose-model-cache, which takes none, any input at all.
 */
function mutateMisspelling(rnd: Random, req: TestRequest, name: FunctionName): string {
  const input = inputOf(rnd, req, name);
  const schema = INPUT_SCHEMA[name];
  if (schema === undefined) {
    const key = typo(rnd.pick(['workloadNamespace', 'network', 'images']), [], rnd.int(0, 3));
    input[key] = 'x';
    return `input.${key} = "x" (this function takes no settings)`;
  }
  // From the input as it is, or from one with every level, so the deep levels are reached too.
  const levels = objectLevels(schema, input);
  const deep = objectLevels(schema, fullInput(name)!);
  const use = levels.length > 1 || rnd.chance(0.3) ? levels : deep;
  if (use === deep) req.input = fullInput(name)!;
  const root = req.input!;
  const { path, known } = rnd.pick(use.length > 0 ? use : deep);
  let node: Json = root;
  for (const key of path) node = (node as Record<string | number, Json>)[key]!;
  const target = node as JsonObject;
  const meant = rnd.pick(known.filter((k) => k !== 'apiVersion' && k !== 'kind'));
  const wrong = typo(meant, known, rnd.int(0, 3));
  const present = Object.hasOwn(target, meant);
  if (present && rnd.chance(0.5)) {
    defineKey(target, wrong, target[meant]!);
    Reflect.deleteProperty(target, meant);
    return `${fieldPath([...path, meant])} renamed ${wrong}`;
  }
  defineKey(target, wrong, rnd.pick<Json>(['x', 1, true, { a: 1 }, ['x'], present ? clone(target[meant]!) : 'https://hf.corp.example']));
  return `${fieldPath([...path, wrong])} added (for ${meant})`;
}

/** How a pod, a tool or a person could print the token into a report or a condition. */
const PRINTED_TOKEN: ((token: string) => string)[] = [
  (t) => `401 Unauthorized for Bearer ${t}`,
  (t) => `token ${Buffer.from(t).toString('base64')} refused`,
  (t) => `token ${Buffer.from(t).toString('base64url')} refused`,
  (t) => `Authorization: Basic ${Buffer.from(`user:${t}`).toString('base64')}`,
  (t) => `Authorization: Basic ${Buffer.from(`me:${t}`).toString('base64')}`,
  (t) => `Authorization: Basic ${Buffer.from(`u:${t}`).toString('base64')}`,
  (t) => `GET https://hf.co/api/models?token=${encodeURIComponent(t)} 403`,
  (t) => `key ${Buffer.from(t).toString('hex')}`,
  (t) => `secret data: {"HF_TOKEN":"${Buffer.from(t).toString('base64')}"}`,
];

/**
 * The hydration Job's report, or its Failed condition, quotes the token in
 * some encoding; the token Secret holds it. The answer must hold it only in
 * the workload Secret's data.
 */
function mutateReportToken(rnd: Random, req: TestRequest): string {
  for (const set of [req.requiredResources, req.extraResources]) {
    for (const item of Object.values(set ?? {}).flatMap((s) => s.items)) {
      if (item.resource['kind'] === 'Secret') item.resource['data'] = { HF_TOKEN: FUZZ_TOKEN_B64 };
    }
  }
  const printed = rnd.pick(PRINTED_TOKEN)(FUZZ_TOKEN);
  // The download's Job or the sizing Job, whichever this request observes.
  const keys = ['hydrate', 'size'].filter((key) => req.observed?.resources?.[key] !== undefined);
  const job = keys.length === 0 ? undefined : req.observed!.resources![rnd.pick(keys)]!.resource;
  const manifest = job === undefined ? undefined : getAt(job, ['status', 'atProvider', 'manifest']);
  if (manifest === undefined || manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    return 'token: no observed hydration Job in this request';
  }
  if (rnd.chance(0.5)) {
    const report = rnd.pick<JsonObject>([
      { state: 'Failed', message: printed },
      { state: 'Downloading', commit: 'a'.repeat(40), bytesDone: 1, bytesTotal: 2, filesDone: 0, filesTotal: 1, message: printed },
    ]);
    setDeep(manifest, ['metadata', 'annotations', 'modelplane.ai/progress'], JSON.stringify(report));
    return `token: the Job's report says ${JSON.stringify(printed.slice(0, 24))}…`;
  }
  setDeep(manifest, ['status', 'conditions'], [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: printed }]);
  return `token: the Job's Failed condition says ${JSON.stringify(printed.slice(0, 24))}…`;
}

// --- The request --------------------------------------------------------------

function observedKeys(req: TestRequest): string[] {
  return Object.keys(req.observed?.resources ?? {});
}

function requiredKeys(req: TestRequest): string[] {
  return Object.keys(req.requiredResources ?? {});
}

function mutateXr(rnd: Random, req: TestRequest): string {
  const xr = req.observed?.composite?.resource;
  if (!xr) return 'xr: absent';
  return mutateInside(rnd, xr, 0, 'xr', rnd.chance(0.8) ? ['spec'] : undefined);
}

function edit(rnd: Random, target: JsonObject, edits: Edit[], label: string): string {
  const [path, values] = rnd.pick(edits);
  const value = rnd.pick(values);
  if (!setDeep(target, path, clone(value))) return `${label}.${path.join('.')}: not in this request`;
  const shown = value === undefined ? '(removed)' : JSON.stringify(value)?.slice(0, 40);
  return `${label}.${path.join('.')} = ${shown}`;
}

function mutateObserved(rnd: Random, req: TestRequest): string {
  req.observed ??= {};
  const resources = (req.observed.resources ??= {});
  const keys = observedKeys(req);
  const roll = rnd.next();
  if (keys.length === 0 || roll < 0.1) {
    const key = rnd.pick(['pvc', 'auth', 'hydrate', 'claim', 'resolve-result', 'hydration-cluster-a', 'model-serving-main', 'x', '']);
    resources[key] = { resource: rnd.pick(STRANGERS)() };
    return `observed[${key}] = a stranger`;
  }
  const key = rnd.pick(keys);
  if (roll < 0.25) {
    Reflect.deleteProperty(resources, key);
    return `observed[${key}] removed`;
  }
  if (roll < 0.45) {
    resources[key] = { resource: rnd.pick(STRANGERS)() };
    return `observed[${key}] = an object of the wrong kind`;
  }
  if (roll < 0.55) {
    // Crossplane's verdict flips without the remote object changing.
    const status = objectField(resources[key]!.resource, 'status');
    status['conditions'] = [{ type: 'Ready', status: rnd.pick(['True', 'False', 'Unknown', 5]), reason: 'Flap' }];
    return `observed[${key}] Ready flipped`;
  }
  return mutateInside(rnd, resources[key]!.resource, 0, `observed[${key}]`, rnd.chance(0.5) ? ['status'] : undefined);
}

function mutateRequired(rnd: Random, req: TestRequest, name: FunctionName): string {
  const sets = (req.requiredResources ??= {});
  const keys = requiredKeys(req);
  if (keys.length === 0) return 'required: none';
  const key = rnd.pick(keys);
  const set = sets[key]!;
  const roll = rnd.next();
  if (roll < 0.1) {
    Reflect.deleteProperty(sets, key);
    return `required[${key}] not fetched`;
  }
  if (roll < 0.2) {
    set.items = [];
    return `required[${key}] fetched, none found`;
  }
  if (roll < 0.35 && set.items.length > 0) {
    // Duplicates: the same object twice, or two objects of one name that disagree.
    const original = rnd.pick(set.items);
    const copy = clone(original);
    if (rnd.chance(0.5)) {
      const status = objectField(copy.resource, 'status');
      if (rnd.chance(0.5)) delete status['providerConfigRef'];
      else status['providerConfigRef'] = { name: 'duplicate-pc' };
      const metadata = objectField(copy.resource, 'metadata');
      metadata['labels'] = rnd.chance(0.5) ? {} : { 'modelplane.ai/tier': 'a100' };
    }
    set.items.splice(rnd.int(0, set.items.length), 0, copy);
    return `required[${key}] duplicate item`;
  }
  if (roll < 0.5) {
    const stranger = { resource: rnd.pick(STRANGERS)() };
    if (set.items.length > 0 && rnd.chance(0.5)) set.items[rnd.int(0, set.items.length - 1)] = stranger;
    else set.items.splice(rnd.int(0, set.items.length), 0, stranger);
    return `required[${key}] holds an object of the wrong kind`;
  }
  if (roll < 0.58) {
    set.items = rnd.shuffle(set.items);
    return `required[${key}] shuffled`;
  }
  if (set.items.length === 0) return `required[${key}] empty`;
  const item = rnd.pick(set.items);
  const kind = item.resource['kind'];
  if (roll < 0.8) {
    if (kind === 'InferenceCluster') return edit(rnd, item.resource, CLUSTER_EDITS, `required[${key}]`);
    if (kind === 'ModelCache') return edit(rnd, item.resource, CACHE_ENTRY_EDITS, `required[${key}]`);
    if (kind === 'Secret') {
      const data = rnd.pick<Json>([{}, { HF_TOKEN: '' }, { HF_TOKEN: 5 }, { OTHER: FUZZ_TOKEN_B64 }, null, 'x']);
      setDeep(item.resource, ['data'], clone(data));
      return `required[${key}].data = ${JSON.stringify(data)}`;
    }
  }
  return mutateInside(rnd, item.resource, 0, `required[${key}]`, name === 'compose-model-replica' ? ['status'] : undefined);
}

/** A whole-request change: older Crossplane, a hostile tag, the XR gone. */
function mutateEnvelope(rnd: Random, req: TestRequest): string {
  const roll = rnd.next();
  if (roll < 0.3 && req.requiredResources) {
    req.extraResources = req.requiredResources;
    delete req.requiredResources;
    return 'required resources sent as extraResources (Crossplane before v2)';
  }
  if (roll < 0.6) {
    const tag = rnd.pick(['', '🚀', 'x'.repeat(10_000), 'nul\u0000tag']);
    req.meta = { tag };
    return `tag ${JSON.stringify(tag.slice(0, 10))}`;
  }
  if (roll < 0.75) {
    delete req.observed?.composite;
    return 'no observed composite';
  }
  if (roll < 0.9) {
    req.context = { 'apiextensions.crossplane.io/environment': { a: [1, { b: null }] } };
    return 'context from an earlier step';
  }
  req.desired = { composite: { resource: { status: { fromEarlierStep: true } } }, resources: { 'earlier-step': { resource: { a: 1 } } } };
  return 'desired state from an earlier step';
}

/** Past the codec's bound, or exactly at it: the server must refuse the first with a gRPC error and answer the second. */
function mutateDepth(rnd: Random, req: TestRequest): string {
  const xr = req.observed?.composite?.resource;
  if (!xr) return 'depth: no XR';
  // "annotations" sits at level 1 (metadata) + 1; the nested value starts at level 2.
  const levels = MAX_STRUCT_DEPTH - 2 + rnd.pick([0, 1, 2, 20]);
  setDeep(xr, ['metadata', 'annotations'], { deep: nested(levels) as JsonObject });
  return `depth: a Struct ${levels + 2} containers deep`;
}

// --- Reports a workload cluster writes back (issue 29, point 2) ---------------

const GIB = 1024 ** 3;
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
/** Numbers no report should carry, or only in the right combination: out of range, of the wrong type, at the bounds. */
const BAD_NUMBERS: Json[] = [
  -1,
  -(2 ** 53),
  0,
  0.5,
  1.5,
  1e9,
  1e15,
  2 ** 53 + 2,
  1e308,
  100_000,
  100_001,
  100_000 * GIB,
  100_000 * GIB + 1,
  '20',
  '1e9',
  null,
  true,
  [],
  {},
];
const REPORT_FIELDS = ['bytesDone', 'bytesTotal', 'filesDone', 'filesTotal', 'requiredGiB', 'stalledSeconds'] as const;
const REPORT_STATES = ['Sized', 'Downloading', 'Verifying', 'Verified', 'Failed', 'Unverified', 'Done', '', 5];

/** A report as hydrate.py writes one, then broken: a field out of range, or the fields inconsistent with each other. */
function hostileReport(rnd: Random): { value: Json; name: string } {
  const total = rnd.pick([0, 1, 1024, GIB, 10 * GIB, 20 * GIB, 21 * GIB, 5000 * GIB, 100_000 * GIB]);
  const report: JsonObject = {
    state: rnd.pick(REPORT_STATES.slice(0, 4)),
    commit: COMMIT,
    bytesDone: Math.floor(total / 2),
    bytesTotal: total,
    filesDone: 1,
    filesTotal: total === 0 ? rnd.pick([0, 1]) : 4,
    requiredGiB: Math.ceil((total * 1.1) / GIB) + 1,
  };
  const roll = rnd.next();
  let name: string;
  if (roll < 0.4) {
    const field = rnd.pick(REPORT_FIELDS);
    const value = rnd.pick(BAD_NUMBERS);
    report[field] = clone(value);
    name = `${field} = ${JSON.stringify(value)?.slice(0, 20)}`;
  } else if (roll < 0.55) {
    report['bytesDone'] = total + rnd.pick([1, GIB]);
    name = 'bytesDone > bytesTotal';
  } else if (roll < 0.65) {
    report['filesDone'] = (report['filesTotal'] as number) + 1;
    name = 'filesDone > filesTotal';
  } else if (roll < 0.78) {
    report['requiredGiB'] = rnd.pick([1, 2, 13, 1000, 1e9, 100_000, 100_001, Math.ceil(total / GIB) - 1]);
    name = `requiredGiB ${String(report['requiredGiB'])} for ${total} bytes`;
  } else if (roll < 0.85) {
    report['state'] = rnd.pick(REPORT_STATES);
    name = `state ${JSON.stringify(report['state'])}`;
  } else if (roll < 0.9) {
    report['commit'] = rnd.pick(['main', 'x'.repeat(5000), COMMIT.toUpperCase(), 5]);
    name = 'bad commit';
  } else if (roll < 0.95) {
    report['state'] = 'Failed';
    report['message'] = rnd.pick(['x'.repeat(1001), 'x'.repeat(100_000), 5, '']);
    name = 'Failed with a bad message';
  } else {
    name = 'consistent';
  }
  return { value: report, name };
}

/** A child's (or an entry's, or an inherited) status with out-of-range or inconsistent numbers. */
function hostileStatus(rnd: Random, base: JsonObject): { value: JsonObject; name: string } {
  const status: JsonObject = { ...base };
  const roll = rnd.next();
  const total = rnd.pick([10 * GIB, 2 ** 60, 100_000 * GIB]);
  if (roll < 0.3) {
    const value = rnd.pick(BAD_NUMBERS);
    status['sizeGiB'] = clone(value);
    return { value: status, name: `status.sizeGiB = ${JSON.stringify(value)?.slice(0, 20)}` };
  }
  if (roll < 0.6) {
    const progress: JsonObject = { percent: 50, bytesDone: total / 2, bytesTotal: total, filesDone: 1, filesTotal: 2, summary: '50%' };
    const field = rnd.pick(['percent', 'bytesDone', 'bytesTotal', 'filesDone', 'filesTotal', 'summary']);
    progress[field] = clone(rnd.pick<Json>([...BAD_NUMBERS, 'x'.repeat(100)]));
    status['progress'] = progress;
    return { value: status, name: `status.progress.${field} broken` };
  }
  if (roll < 0.75) {
    status['attempts'] = clone(rnd.pick(BAD_NUMBERS));
    return { value: status, name: 'status.attempts broken' };
  }
  if (roll < 0.85) {
    status['digest'] = rnd.pick(['sha256:zz', `sha256:${'A'.repeat(64)}`, 'x'.repeat(10_000), 5]);
    return { value: status, name: 'status.digest broken' };
  }
  status['message'] = rnd.pick(['m'.repeat(40_000), 5, '']);
  status['commit'] = rnd.pick(['main', 'c'.repeat(5000)]);
  return { value: status, name: 'status.message and commit broken' };
}

/** Where the remote object sits in an observed Object. */
function remoteOf(resource: JsonObject): JsonObject {
  const status = objectField(resource, 'status');
  const atProvider = objectField(status, 'atProvider');
  return objectField(atProvider, 'manifest');
}

/** The OCI resolver's ConfigMap with a result that contradicts itself. */
function hostileResult(rnd: Random, configMap: JsonObject): string {
  const remote = remoteOf(configMap);
  const data = objectField(remote, 'data');
  const manifest = typeof data['manifest'] === 'string' ? data['manifest'] : '{"schemaVersion":2}';
  const roll = rnd.next();
  if (roll < 0.4) data['digest'] = `sha256:${'a'.repeat(64)}`;
  else if (roll < 0.6) data['digest'] = rnd.pick(['sha256:zz', 'x'.repeat(100_000), `sha256:${'A'.repeat(64)}`, '']);
  else if (roll < 0.8) data['manifest'] = `${manifest} `;
  else data['manifest'] = 'm'.repeat(rnd.pick([10_000, 1 << 20]));
  return `the resolver's result contradicts itself (${roll < 0.4 ? 'digest of another manifest' : roll < 0.6 ? 'malformed digest' : roll < 0.8 ? 'manifest changed' : 'huge manifest'})`;
}

/**
 * A report a workload cluster wrote, broken: the progress or sizing report on
 * a hydration Job, the resolver's result, a child's status rolled up by a
 * shard or a cache, a shard's entries, a status handed on, the cache entry a
 * replica reads.
 */
function mutateClusterReport(rnd: Random, req: TestRequest, name: FunctionName): string {
  const resources = req.observed?.resources ?? {};
  const xr = req.observed?.composite?.resource;
  if (name === 'compose-model-cache-hydration') {
    const jobs = ['hydrate', 'size'].filter((key) => resources[key] !== undefined);
    const result = resources['resolve-result'];
    const roll = rnd.next();
    if (jobs.length > 0 && roll < 0.6) {
      const key = rnd.pick(jobs);
      const report = hostileReport(rnd);
      const metadata = objectField(remoteOf(resources[key]!.resource), 'metadata');
      const annotations = objectField(metadata, 'annotations');
      annotations['modelplane.ai/progress'] = rnd.chance(0.95) ? JSON.stringify(report.value) : 'x'.repeat(rnd.pick([5000, 200_000]));
      return `report on ${key}: ${report.name}`;
    }
    if (result !== undefined && roll < 0.8) return hostileResult(rnd, result.resource);
    if (!xr) return 'report: no XR';
    if (rnd.chance(0.5)) {
      const spec = objectField(xr, 'spec');
      const inherited = hostileStatus(rnd, { phase: rnd.pick(['Ready', 'Hydrating', 'Failed']), staged: 'Qwen/Qwen3-0.6B' });
      spec['inheritedStatus'] = inherited.value;
      delete xr['status'];
      return `spec.inheritedStatus: ${inherited.name}`;
    }
    const own = hostileStatus(rnd, (xr['status'] as JsonObject | undefined) ?? { phase: 'Hydrating' });
    xr['status'] = own.value;
    return `own status: ${own.name}`;
  }
  if (name === 'compose-model-cache') {
    const keys = Object.keys(resources).filter((key) => key.startsWith('hydration-') || key.startsWith('shard-'));
    if (keys.length === 0) return 'report: no child or shard observed';
    const key = rnd.pick(keys);
    const resource = resources[key]!.resource;
    const status = objectField(resource, 'status');
    if (key.startsWith('shard-')) {
      const entries = Array.isArray(status['clusters']) ? (status['clusters'] as JsonObject[]) : [];
      if (entries.length === 0) return `report: ${key} has no entries`;
      const index = rnd.int(0, entries.length - 1);
      const entry = hostileStatus(rnd, entries[index]!);
      entries[index] = entry.value;
      return `${key} entry ${index}: ${entry.name}`;
    }
    const child = hostileStatus(rnd, status);
    resource['status'] = { ...child.value, conditions: status['conditions'] ?? [] };
    return `${key}: ${child.name}`;
  }
  // The replica: its cluster's hydration, or its cache's entry.
  const sets = Object.values(req.requiredResources ?? {});
  const targets = sets
    .flatMap((set) => set.items)
    .filter((item) => item.resource['kind'] === 'ModelCacheHydration' || item.resource['kind'] === 'ModelCache');
  if (targets.length === 0) return 'report: nothing required to read';
  const target = rnd.pick(targets).resource;
  const status = objectField(target, 'status');
  if (target['kind'] === 'ModelCache' && Array.isArray(status['clusters']) && status['clusters'].length > 0) {
    const entries = status['clusters'] as JsonObject[];
    const index = rnd.int(0, entries.length - 1);
    entries[index] = hostileStatus(rnd, entries[index]!).value;
    return `required ModelCache entry ${index} broken`;
  }
  const broken = hostileStatus(rnd, status);
  target['status'] = broken.value;
  return `required ${target['kind'] === 'ModelCache' ? 'ModelCache' : 'ModelCacheHydration'}: ${broken.name}`;
}

export interface Mutated {
  request: TestRequest;
  mutations: string[];
}

/** One case: a copy of `seed` with one to four mutations. */
export function mutate(rnd: Random, name: FunctionName, seed: TestRequest): Mutated {
  const request = clone(seed);
  const mutations: string[] = [];
  const count = rnd.chance(0.5) ? 1 : rnd.int(2, 4);
  for (let i = 0; i < count; i++) {
    const roll = rnd.next();
    if (roll < 0.25) mutations.push(mutateXr(rnd, request));
    else if (roll < 0.52) {
      const xr = request.observed?.composite?.resource;
      mutations.push(xr ? edit(rnd, xr, rnd.chance(0.8) ? EDITS[name] : COMMON_EDITS, 'xr') : 'xr: absent');
    } else if (roll < 0.7) mutations.push(mutateObserved(rnd, request));
    else if (roll < 0.8) mutations.push(mutateRequired(rnd, request, name));
    else if (roll < 0.86) mutations.push(mutateClusterReport(rnd, request, name));
    // The settings (issue 15), a credential in them and a misspelled field (issue 29).
    else if (roll < 0.91) mutations.push(mutateInput(rnd, request, name));
    else if (roll < 0.93 && name === 'compose-model-cache-hydration') mutations.push(mutateReportToken(rnd, request));
    else if (roll < 0.97) mutations.push(mutateEnvelope(rnd, request));
    else mutations.push(mutateDepth(rnd, request));
  }
  return { request, mutations };
}
