// Nothing lost: for every function, states it composed before and Crossplane
// observed × inputs that turn bad or go missing. A staged PVC (a ModelCache's
// child, which owns it; a single-function PVC Object; a hydration's `pvc`) or
// a serving workload (everything a replica composed) stays in desired state,
// unless the spec says it must go: each such row names the rule. A Fatal
// result changes nothing (Crossplane applies nothing from it); an answer with
// a requirement not yet fetched is not final (Crossplane fetches it and calls
// again) - both are asserted as what they are, never assumed.

import { describe, expect, it } from 'vitest';
import { type JsonObject } from '#lib';
import {
  desiredResources,
  manifestOf,
  type FunctionClient,
  type FunctionName,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';
import { clientFor, seedsFor, settled } from './support/seeds.js';

const clients = new Map<FunctionName, FunctionClient>();
function client(name: FunctionName): FunctionClient {
  let found = clients.get(name);
  if (!found) {
    found = clientFor(name);
    clients.set(name, found);
  }
  return found;
}

async function seed(name: FunctionName, stage: string): Promise<TestRequest> {
  const found = (await seedsFor(name)).find((s) => s.name === stage);
  if (!found) throw new Error(`no seed ${stage} for ${name}`);
  return structuredClone(found.request);
}

// --- Reading and editing requests ---------------------------------------------

const xr = (req: TestRequest): JsonObject => req.observed!.composite!.resource;
const spec = (req: TestRequest): JsonObject => xr(req)['spec'] as JsonObject;
const items = (req: TestRequest, key: string): TestResource[] => req.requiredResources![key]!.items;
const statusOf = (object: JsonObject): JsonObject => (object['status'] ??= {}) as JsonObject;
const observedBody = (req: TestRequest, key: string): JsonObject => req.observed!.resources![key]!.resource;
const remoteOf = (req: TestRequest, key: string): JsonObject =>
  ((statusOf(observedBody(req, key))['atProvider'] as JsonObject)['manifest'] ??= {}) as JsonObject;

function notFetched(key: string): (req: TestRequest) => void {
  return (req) => {
    Reflect.deleteProperty(req.requiredResources!, key);
  };
}

function noneFound(key: string): (req: TestRequest) => void {
  return (req) => {
    req.requiredResources![key] = { items: [] };
  };
}

function withoutCluster(name: string): (req: TestRequest) => void {
  return (req) => {
    req.requiredResources!['clusters']!.items = items(req, 'clusters').filter(
      (item) => (item.resource['metadata'] as JsonObject)['name'] !== name,
    );
  };
}

function clusterStatus(req: TestRequest, key: string, index = 0): JsonObject {
  return statusOf(items(req, key)[index]!.resource);
}

function cacheEntry(req: TestRequest): JsonObject {
  return (statusOf(items(req, 'cache')[0]!.resource)['clusters'] as JsonObject[])[0]!;
}

function replicaOn(cluster: string): TestResource {
  return {
    resource: {
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelReplica',
      metadata: { name: 'chat', namespace: 'ml-team' },
      spec: { clusterName: cluster, modelCacheRef: { name: 'qwen' }, engines: [] },
    },
  };
}

// --- The check ----------------------------------------------------------------

type Expectation =
  /** Every protected key stays desired, naming the same object. */
  | { kept: true }
  /** A Fatal result: Crossplane applies nothing from it, so everything stays as it is. */
  | { fatal: true }
  /** A requirement not fetched yet: the function answers with requirements only, and Crossplane calls again once it has them. */
  | { notFinal: true }
  /** These protected keys go, and the rule that says they must. */
  | { dropped: string[]; rule: string };

interface Row {
  state: string;
  input: string;
  change: (req: TestRequest) => void;
  expect: Expectation;
}

interface Table {
  name: FunctionName;
  /** The states, by name: a request the function answered before (what it composed is observed). */
  states: Record<string, () => Promise<TestRequest>>;
  /** The observed keys that hold what must not be lost. */
  protects: (key: string) => boolean;
  rows: Row[];
}

/** What names the object behind a key: a child's own name, or an Object's remote manifest name. */
function identity(object: JsonObject | undefined): string | undefined {
  if (!object) return undefined;
  if (object['kind'] !== 'Object') return (object['metadata'] as JsonObject | undefined)?.['name'] as string | undefined;
  return (manifestOf(object)['metadata'] as JsonObject | undefined)?.['name'] as string | undefined;
}

/** Could provider-kubernetes delete the remote object if this Object went away? */
function canDelete(object: JsonObject): boolean {
  const policies = (object['spec'] as JsonObject | undefined)?.['managementPolicies'];
  return !Array.isArray(policies) || policies.includes('*') || policies.includes('Delete');
}

function check(table: Table, before: TestRequest, row: Row, rsp: TestResponse): void {
  const fatal = rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL');
  const expectation = row.expect;
  if ('fatal' in expectation) {
    expect(fatal.length, 'a Fatal result').toBe(1);
    return;
  }
  expect(fatal, 'no Fatal result').toEqual([]);
  const desired = desiredResources(rsp);
  if ('notFinal' in expectation) {
    expect(desired, 'requirements only').toEqual({});
    expect(rsp.desired?.composite).toBeUndefined();
    expect(Object.keys(rsp.requirements?.resources ?? {}).length).toBeGreaterThan(0);
    return;
  }
  const protectedKeys = Object.keys(before.observed?.resources ?? {}).filter(table.protects);
  expect(protectedKeys.length, 'the state holds something to protect').toBeGreaterThan(0);
  const dropped = 'dropped' in expectation ? expectation.dropped : [];
  if ('dropped' in expectation) expect(expectation.rule.length).toBeGreaterThan(10);
  for (const key of protectedKeys) {
    if (dropped.includes(key)) {
      expect(desired, `${key} goes (${'dropped' in expectation ? expectation.rule : ''})`).not.toHaveProperty(key);
      continue;
    }
    expect(desired, `${key} stays desired`).toHaveProperty(key);
    // A resource Crossplane names itself (the Usage) is the same object by its key alone.
    const named = identity(desired[key]);
    if (named !== undefined || desired[key]!['kind'] === 'Object') {
      expect(named, `${key} names the same object`).toBe(identity(observedBody(before, key)));
    }
  }
}

function runTable(table: Table): void {
  describe(table.name, () => {
    it.each(table.rows.map((row) => [`${row.state} × ${row.input}`, row] as const))('%s', async (_title, row) => {
      const before = await table.states[row.state]!();
      const req = structuredClone(before);
      row.change(req);
      check(table, before, row, await client(table.name).run(req));
    });
  });
}

// --- compose-model-cache --------------------------------------------------------

/** Its children own the staged PVCs (dropping a child deletes them); during the upgrade, the single-function PVC Object. */
const CACHE_RULES = {
  leftFootprint:
    'compose-model-cache spec, behaviour 4 and architecture decision 2: a cluster leaves the footprint when it stops matching; with no ModelReplica of this cache there, its child is dropped and Crossplane deletes it',
  handover:
    'compose-model-cache spec, behaviour 8 (architecture decision 12): once the single-function Objects are observed without Delete, they are dropped (the remote PVC stays) and the child adopts the PVC by name',
};

const cacheStates: Table['states'] = {
  ready: () => seed('compose-model-cache', 'ready'),
  'retained for a replica': () => seed('compose-model-cache', 'retained-for-replica'),
  upgrading: () => seed('compose-model-cache', 'upgrade-legacy-with-delete'),
};

runTable({
  name: 'compose-model-cache',
  states: cacheStates,
  protects: (key) => key.startsWith('hydration-') || key.startsWith('pvc-'),
  rows: [
    { state: 'ready', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    { state: 'ready', input: 'clusters not fetched yet', change: notFetched('clusters'), expect: { notFinal: true } },
    { state: 'ready', input: 'replicas not fetched yet', change: notFetched('replicas'), expect: { notFinal: true } },
    {
      state: 'ready',
      input: 'a cluster unprovisioned (providerConfigRef gone)',
      change: (req) => {
        delete clusterStatus(req, 'clusters')['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'every cluster unprovisioned',
      change: (req) => {
        for (const item of items(req, 'clusters')) delete statusOf(item.resource)['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a cluster unreadable (status not an object)',
      change: (req) => {
        items(req, 'clusters')[0]!.resource['status'] = 'garbage';
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a cluster’s name no longer a DNS label (listed under another spelling)',
      change: (req) => {
        const metadata = items(req, 'clusters')[0]!.resource['metadata'] as JsonObject;
        metadata['name'] = (metadata['name'] as string).toUpperCase();
      },
      expect: { dropped: ['hydration-us-east-a100'], rule: CACHE_RULES.leftFootprint },
    },
    {
      state: 'ready',
      input: 'a cluster gone',
      change: withoutCluster('us-east-a100'),
      expect: { dropped: ['hydration-us-east-a100'], rule: CACHE_RULES.leftFootprint },
    },
    {
      state: 'ready',
      input: 'a cluster gone, a replica still on it',
      change: (req) => {
        withoutCluster('us-east-a100')(req);
        items(req, 'replicas').push(replicaOn('us-east-a100'));
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'every cluster gone (fetched, none found)',
      change: noneFound('clusters'),
      expect: {
        dropped: ['hydration-us-east-a100', 'hydration-us-west-a100', 'hydration-eu-west-a100'],
        rule: CACHE_RULES.leftFootprint,
      },
    },
    {
      state: 'ready',
      input: 'selector edited to match nothing listed',
      change: (req) => {
        spec(req)['clusterSelector'] = { matchLabels: { 'modelplane.ai/tier': 'h100' } };
      },
      expect: {
        dropped: ['hydration-us-east-a100', 'hydration-us-west-a100', 'hydration-eu-west-a100'],
        rule: CACHE_RULES.leftFootprint,
      },
    },
    {
      state: 'ready',
      input: 'a cluster’s labels edited out of the selector, a replica on it',
      change: (req) => {
        (items(req, 'clusters')[0]!.resource['metadata'] as JsonObject)['labels'] = {};
        items(req, 'replicas').push(replicaOn('us-east-a100'));
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'its own status gone',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a child’s status gone',
      change: (req) => {
        delete observedBody(req, 'hydration-us-east-a100')['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a child’s status flapping (Failed, then garbage)',
      change: (req) => {
        statusOf(observedBody(req, 'hydration-us-east-a100'))['phase'] = 'Failed';
        statusOf(observedBody(req, 'hydration-us-west-a100'))['phase'] = { not: 'a phase' };
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a child observed as something else entirely',
      change: (req) => {
        req.observed!.resources!['hydration-us-east-a100'] = {
          resource: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modelcache-ml-team-qwen-us-east-a100-e1dd1' } },
        };
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'token reference removed (authSecret gone from the spec)',
      change: (req) => {
        delete (spec(req)['huggingFace'] as JsonObject)['authSecret'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a bad field introduced (sizeGiB "20")',
      change: (req) => {
        (spec(req)['huggingFace'] as JsonObject)['sizeGiB'] = '20';
      },
      expect: { fatal: true },
    },
    {
      state: 'ready',
      input: 'an unknown source',
      change: (req) => {
        spec(req)['source'] = 'S3';
      },
      expect: { fatal: true },
    },
    {
      state: 'ready',
      input: 'the selector emptied',
      change: (req) => {
        spec(req)['clusterSelector'] = {};
      },
      expect: { fatal: true },
    },
    {
      state: 'retained for a replica',
      input: 'nothing changed',
      change: () => undefined,
      expect: { kept: true },
    },
    {
      state: 'retained for a replica',
      input: 'replicas fetched, none found (the replica is gone)',
      change: noneFound('replicas'),
      expect: {
        dropped: ['hydration-cluster-b'],
        rule: 'compose-model-cache spec, behaviour 4 (reclaim guard): once no replica uses it, drop it',
      },
    },
    {
      state: 'retained for a replica',
      input: 'the replica’s cluster gone from the list too',
      change: withoutCluster('cluster-b'),
      expect: { kept: true },
    },
    { state: 'upgrading', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'upgrading',
      input: 'the cluster unprovisioned mid-upgrade',
      change: (req) => {
        delete clusterStatus(req, 'clusters')['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading',
      input: 'its status gone mid-upgrade',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading',
      input: 'the legacy PVC observed without Delete (hand-over)',
      change: (req) => {
        for (const key of ['pvc-cluster-a', 'hydrate-cluster-a', 'auth-cluster-a']) {
          (observedBody(req, key)['spec'] as JsonObject)['managementPolicies'] = ['Observe', 'Create', 'Update', 'LateInitialize'];
        }
      },
      expect: { dropped: ['pvc-cluster-a'], rule: CACHE_RULES.handover },
    },
    {
      state: 'upgrading',
      input: 'the cluster gone mid-upgrade, a replica on it',
      change: (req) => {
        noneFound('clusters')(req);
        items(req, 'replicas').push(replicaOn('cluster-a'));
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading',
      input: 'a bad field introduced mid-upgrade',
      change: (req) => {
        spec(req)['huggingFace'] = 'Qwen/Qwen3-0.6B';
      },
      expect: { fatal: true },
    },
  ],
});

// A hand-over drops the PVC Object: the check above shows it goes; this shows it can no longer delete what it names.
describe('compose-model-cache, the hand-over', () => {
  it('re-desires the single-function PVC without Delete before it ever drops it', async () => {
    const req = await cacheStates['upgrading']!();
    expect(canDelete(observedBody(req, 'pvc-cluster-a'))).toBe(true);
    const rsp = await client('compose-model-cache').run(req);
    const pvc = desiredResources(rsp)['pvc-cluster-a']!;
    expect(canDelete(pvc)).toBe(false);
    expect(desiredResources(rsp)).not.toHaveProperty('hydration-cluster-a');
  });
});

// --- compose-model-cache-hydration ---------------------------------------------

const HYDRATION = 'compose-model-cache-hydration';
const hydrationStates: Table['states'] = {
  'HuggingFace hydrating': () => seed(HYDRATION, 'huggingface-hydrating'),
  'HuggingFace ready': async () => {
    const ready = await seed(HYDRATION, 'huggingface-ready');
    return settled(HYDRATION, ready);
  },
  'HuggingFace failed': () => seed(HYDRATION, 'huggingface-failed'),
  'claim ready': () => seed(HYDRATION, 'persistentvolumeclaim-ready'),
};

const HF_STATES = ['HuggingFace hydrating', 'HuggingFace ready', 'HuggingFace failed'];

/** Rows every HuggingFace state faces. */
function hydrationRows(state: string): Row[] {
  const cluster = (req: TestRequest) => clusterStatus(req, 'cluster');
  return [
    { state, input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    { state, input: 'cluster not fetched yet', change: notFetched('cluster'), expect: { notFinal: true } },
    { state, input: 'cluster gone (fetched, not found)', change: noneFound('cluster'), expect: { kept: true } },
    {
      state,
      input: 'cluster unprovisioned',
      change: (req) => {
        delete cluster(req)['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'cluster unreadable (providerConfigRef not an object)',
      change: (req) => {
        cluster(req)['providerConfigRef'] = 5;
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'cluster reports no ReadWriteMany class',
      change: (req) => {
        delete cluster(req)['cache'];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'a Secret where the cluster should be',
      change: (req) => {
        req.requiredResources!['cluster'] = { items: [{ resource: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } } }] };
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'its status gone (the Ready latch lost)',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'its status flapping (phase garbage)',
      change: (req) => {
        statusOf(xr(req))['phase'] = 'Bogus';
      },
      expect: { kept: true },
    },
    { state, input: 'token Secret gone', change: noneFound('auth-secret'), expect: { kept: true } },
    { state, input: 'token Secret not fetched yet', change: notFetched('auth-secret'), expect: { notFinal: true } },
    {
      state,
      input: 'token key removed from the Secret',
      change: (req) => {
        items(req, 'auth-secret')[0]!.resource['data'] = {};
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'the PVC observed Lost',
      change: (req) => {
        remoteOf(req, 'pvc')['status'] = { phase: 'Lost' };
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'the PVC observed as another kind',
      change: (req) => {
        remoteOf(req, 'pvc')['kind'] = 'ConfigMap';
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'a bad field introduced (sizeGiB -1)',
      change: (req) => {
        (spec(req)['huggingFace'] as JsonObject)['sizeGiB'] = -1;
      },
      expect: { fatal: true },
    },
    {
      state,
      input: 'token reference into another namespace',
      change: (req) => {
        (spec(req)['authSecret'] as JsonObject)['namespace'] = 'other-team';
      },
      expect: { fatal: true },
    },
    {
      state,
      input: 'source switched to OCI by the parent',
      change: (req) => {
        const s = spec(req);
        s['source'] = 'OCI';
        s['oci'] = { ref: 'registry.example.com/models/qwen:v1' };
        delete s['huggingFace'];
        delete s['authSecret'];
      },
      expect: {
        dropped: ['pvc'],
        rule: 'compose-model-cache-hydration spec: each source composes its own objects; the parent restamps the child when spec.source changes, and the HuggingFace PVC belongs to that source',
      },
    },
  ];
}

runTable({
  name: HYDRATION,
  states: hydrationStates,
  protects: (key) => key === 'pvc' || key === 'claim',
  rows: [
    ...HF_STATES.flatMap(hydrationRows),
    { state: 'claim ready', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    { state: 'claim ready', input: 'cluster gone', change: noneFound('cluster'), expect: { kept: true } },
    {
      state: 'claim ready',
      input: 'the claim observed gone',
      change: (req) => {
        delete statusOf(observedBody(req, 'claim'))['atProvider'];
      },
      expect: { kept: true },
    },
    {
      state: 'claim ready',
      input: 'its status gone',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'claim ready',
      input: 'a claim name that is no name',
      change: (req) => {
        (spec(req)['persistentVolumeClaim'] as JsonObject)['claimName'] = 'Qwen Weights';
      },
      expect: { fatal: true },
    },
  ],
});

// --- compose-model-replica ------------------------------------------------------

const REPLICA = 'compose-model-replica';
const replicaStates: Table['states'] = {
  serving: () => seed(REPLICA, 'cache-ready-serving'),
  'serving a gang': () => seed(REPLICA, 'gang-cache-ready-serving'),
};

const USAGE_RULE =
  'compose-model-replica spec, the cache 4: the Usage is composed while the replica references the cache; with modelCacheRef removed it goes, and the workload stays';

function replicaRows(state: string): Row[] {
  const entry = (change: (e: JsonObject) => void) => (req: TestRequest) => {
    change(cacheEntry(req));
  };
  return [
    { state, input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    { state, input: 'cluster not fetched yet', change: notFetched('cluster'), expect: { notFinal: true } },
    { state, input: 'cache not fetched yet', change: notFetched('cache'), expect: { notFinal: true } },
    { state, input: 'cluster gone', change: noneFound('cluster'), expect: { kept: true } },
    {
      state,
      input: 'cluster unprovisioned',
      change: (req) => {
        delete clusterStatus(req, 'cluster')['providerConfigRef'];
      },
      expect: { kept: true },
    },
    { state, input: 'cache gone', change: noneFound('cache'), expect: { kept: true } },
    {
      state,
      input: 'cache status gone',
      change: (req) => {
        delete items(req, 'cache')[0]!.resource['status'];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'cache entry back to Hydrating',
      change: entry((e) => {
        e['phase'] = 'Hydrating';
        delete e['mount'];
      }),
      expect: { kept: true },
    },
    { state, input: 'cache entry Failed', change: entry((e) => (e['phase'] = 'Failed')), expect: { kept: true } },
    { state, input: 'cache entry Ready without a mount', change: entry((e) => delete e['mount']), expect: { kept: true } },
    {
      state,
      input: 'cache entry mount turned invalid (hostPath)',
      change: entry((e) => (e['mount'] = { volumes: [{ name: 'x', hostPath: { path: '/' } }] })),
      expect: { kept: true },
    },
    {
      state,
      input: 'cache entry access modes turned ReadWriteOnce',
      change: entry((e) => (e['accessModes'] = ['ReadWriteOnce'])),
      // Only a gang can't share one: a Standalone engine keeps serving either way.
      expect: { kept: true },
    },
    {
      state,
      input: 'cache entry under another cluster’s name',
      change: entry((e) => (e['name'] = 'elsewhere')),
      expect: { kept: true },
    },
    {
      state,
      input: 'its status gone',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'a workload observed not Ready',
      change: (req) => {
        statusOf(observedBody(req, 'model-serving-main'))['conditions'] = [{ type: 'Ready', status: 'False', reason: 'Unavailable' }];
      },
      expect: { kept: true },
    },
    {
      state,
      input: 'modelCacheRef removed',
      change: (req) => {
        delete spec(req)['modelCacheRef'];
        delete req.requiredResources!['cache'];
      },
      expect: { dropped: ['model-cache-usage'], rule: USAGE_RULE },
    },
    {
      state,
      input: 'a bad field introduced (copies "2")',
      change: (req) => {
        (spec(req)['engines'] as JsonObject[])[0]!['copies'] = '2';
      },
      expect: { fatal: true },
    },
    {
      state,
      input: 'the cluster switched to the Dynamo stack',
      change: (req) => {
        items(req, 'cluster')[0]!.resource['spec'] = { stack: 'Dynamo' };
      },
      // A Standalone engine is the same Deployment on either stack; a running gang is never swapped for a
      // PodCliqueSet (a cluster's stack is fixed): refused.
      expect: state === 'serving' ? { kept: true } : { fatal: true },
    },
    {
      state,
      // Only one engine, so the PrefillDecode rules (one Prefill, one Decode engine) refuse it.
      input: 'PrefillDecode asked for',
      change: (req) => {
        spec(req)['serving'] = { mode: 'PrefillDecode' };
      },
      expect: { fatal: true },
    },
  ];
}

runTable({
  name: REPLICA,
  states: replicaStates,
  // Everything a replica composed serves the model: the workloads, their claims, the routing, the Usage.
  protects: () => true,
  rows: [...replicaRows('serving'), ...replicaRows('serving a gang')],
});
