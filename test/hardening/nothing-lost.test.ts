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
  | { dropped: string[]; rule: string }
  /** Everything protected stays, and the shard `from` is told to drop these clusters' children (its spec.drop), by the rule that says they must go. */
  | { leaves: string[]; from: string; rule: string };

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

function check(table: Table, beforeReq: TestRequest, row: Row, rsp: TestResponse): void {
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
  const protectedKeys = Object.keys(beforeReq.observed?.resources ?? {}).filter(table.protects);
  expect(protectedKeys.length, 'the state holds something to protect').toBeGreaterThan(0);
  const dropped = 'dropped' in expectation ? expectation.dropped : [];
  if ('dropped' in expectation) expect(expectation.rule.length).toBeGreaterThan(10);
  if ('leaves' in expectation) {
    expect(expectation.rule.length).toBeGreaterThan(10);
    const shardSpec = (desired[expectation.from]?.['spec'] ?? {}) as JsonObject;
    const listed = ((shardSpec['clusters'] ?? []) as JsonObject[]).map((member) => member['name']);
    for (const cluster of expectation.leaves) {
      expect(shardSpec['drop'], `${expectation.from} drops ${cluster} (${expectation.rule})`).toContain(cluster);
      expect(listed, `${expectation.from} no longer lists ${cluster}`).not.toContain(cluster);
    }
  } else if (protectedKeys.some((key) => key.startsWith('shard-'))) {
    // Nothing leaves: no shard is told to drop anything it was not told to before.
    for (const key of protectedKeys.filter((key) => key.startsWith('shard-'))) {
      const before = ((observedBody(beforeReq, key)['spec'] as JsonObject | undefined)?.['drop'] ?? []) as string[];
      const after = (((desired[key]?.['spec'] as JsonObject | undefined)?.['drop'] ?? []) as string[]).filter((c) => !before.includes(c));
      expect(after, `${key} is told to drop nothing new`).toEqual([]);
    }
  }
  for (const key of protectedKeys) {
    if (dropped.includes(key)) {
      expect(desired, `${key} goes (${'dropped' in expectation ? expectation.rule : ''})`).not.toHaveProperty(key);
      continue;
    }
    expect(desired, `${key} stays desired`).toHaveProperty(key);
    // A resource Crossplane names itself (the Usage) is the same object by its key alone.
    const named = identity(desired[key]);
    if (named !== undefined || desired[key]!['kind'] === 'Object') {
      expect(named, `${key} names the same object`).toBe(identity(observedBody(beforeReq, key)));
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

// --- compose-model-cache: the ModelCache ------------------------------------------

/**
 * A ModelCache's shards own its children, and the children the staged PVCs:
 * dropping a shard deletes all of them. A cluster leaves by being named in its
 * shard's spec.drop (the shard then drops that child alone). During an upgrade,
 * the single-function PVC Objects and the children of the layout before shards
 * are the cache's own.
 */
const CACHE_RULES = {
  leftFootprint:
    'compose-model-cache spec, behaviour 4 and architecture decision 2: a cluster leaves the footprint when it stops matching; with no ModelReplica of this cache there, its shard is told to drop its child (spec.drop), and Crossplane deletes it',
  reclaimed: 'compose-model-cache spec, behaviour 4 (reclaim guard): once no replica uses it, its shard is told to drop it',
  legacyHandOver:
    'compose-model-cache spec, behaviour 8 (architecture decision 12): once the single-function Objects are observed without Delete, they are dropped (the remote PVC stays) and the child adopts the PVC by name',
  flatHandOver:
    'docs/design/fleet.md, "Upgrading in place": once its shard is observed listing the cluster with the status to inherit, the child of the layout before shards (orphan-on-delete: its Objects cannot delete) is dropped, and the shard stamps one of the same name that adopts what is on the cluster',
};

const cacheStates: Table['states'] = {
  ready: () => seed('compose-model-cache', 'ready'),
  'retained for a replica': () => seed('compose-model-cache', 'retained-for-replica'),
  'upgrading from the single function': () => seed('compose-model-cache', 'upgrade-legacy-with-delete'),
  'handing over (orphaning)': () => seed('compose-model-cache', 'upgrade-orphan'),
  'handing over (listed)': () => seed('compose-model-cache', 'upgrade-list'),
  'handing over (release)': () => seed('compose-model-cache', 'upgrade-release'),
};

const shardSpec = (req: TestRequest, key = 'shard-0'): JsonObject => observedBody(req, key)['spec'] as JsonObject;

runTable({
  name: 'compose-model-cache',
  states: cacheStates,
  protects: (key) => key.startsWith('shard-') || key.startsWith('hydration-') || key.startsWith('pvc-'),
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
      expect: { leaves: ['us-east-a100'], from: 'shard-0', rule: CACHE_RULES.leftFootprint },
    },
    {
      state: 'ready',
      input: 'a cluster gone',
      change: withoutCluster('us-east-a100'),
      expect: { leaves: ['us-east-a100'], from: 'shard-0', rule: CACHE_RULES.leftFootprint },
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
      expect: { leaves: ['eu-west-a100', 'us-east-a100', 'us-west-a100'], from: 'shard-0', rule: CACHE_RULES.leftFootprint },
    },
    {
      state: 'ready',
      input: 'selector edited to match nothing listed',
      change: (req) => {
        spec(req)['clusterSelector'] = { matchLabels: { 'modelplane.ai/tier': 'h100' } };
      },
      expect: { leaves: ['eu-west-a100', 'us-east-a100', 'us-west-a100'], from: 'shard-0', rule: CACHE_RULES.leftFootprint },
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
      input: 'the shard’s status gone (it holds nothing, as far as the cache can tell)',
      change: (req) => {
        delete observedBody(req, 'shard-0')['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'the shard’s status and spec both gone (nothing says where a cluster is)',
      change: (req) => {
        delete observedBody(req, 'shard-0')['status'];
        delete observedBody(req, 'shard-0')['spec'];
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'the shard’s status garbage (composed and clusters not lists, a cluster Failed)',
      change: (req) => {
        const status = statusOf(observedBody(req, 'shard-0'));
        status['composed'] = 'eu-west-a100';
        status['clusters'] = { phase: 'Failed' };
        status['summary'] = { ready: 'all of them' };
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'the shard observed as something else entirely',
      change: (req) => {
        req.observed!.resources!['shard-0'] = {
          resource: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modelcache-ml-team-qwen-shard-0-bf0ec' } },
        };
      },
      expect: { kept: true },
    },
    {
      state: 'ready',
      input: 'a second shard observed that lists the same clusters (a late view)',
      change: (req) => {
        const twin = structuredClone(observedBody(req, 'shard-0'));
        (twin['metadata'] as JsonObject)['name'] = 'modelcache-ml-team-qwen-shard-1-0d6a7';
        req.observed!.resources!['shard-1'] = { resource: twin };
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
      expect: { leaves: ['cluster-b'], from: 'shard-0', rule: CACHE_RULES.reclaimed },
    },
    {
      state: 'retained for a replica',
      input: 'the replica’s cluster gone from the list too',
      change: withoutCluster('cluster-b'),
      expect: { kept: true },
    },
    { state: 'upgrading from the single function', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'upgrading from the single function',
      input: 'the cluster unprovisioned mid-upgrade',
      change: (req) => {
        delete clusterStatus(req, 'clusters')['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading from the single function',
      input: 'its status gone mid-upgrade',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading from the single function',
      input: 'the legacy PVC observed without Delete (hand-over)',
      change: (req) => {
        for (const key of ['pvc-cluster-a', 'hydrate-cluster-a', 'auth-cluster-a']) {
          (observedBody(req, key)['spec'] as JsonObject)['managementPolicies'] = ['Observe', 'Create', 'Update', 'LateInitialize'];
        }
      },
      expect: { dropped: ['pvc-cluster-a'], rule: CACHE_RULES.legacyHandOver },
    },
    {
      state: 'upgrading from the single function',
      input: 'the cluster gone mid-upgrade, a replica on it',
      change: (req) => {
        noneFound('clusters')(req);
        items(req, 'replicas').push(replicaOn('cluster-a'));
      },
      expect: { kept: true },
    },
    {
      state: 'upgrading from the single function',
      input: 'a bad field introduced mid-upgrade',
      change: (req) => {
        spec(req)['huggingFace'] = 'Qwen/Qwen3-0.6B';
      },
      expect: { fatal: true },
    },
    { state: 'handing over (orphaning)', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'handing over (orphaning)',
      input: 'a child’s status gone',
      change: (req) => {
        delete observedBody(req, 'hydration-us-east-a100')['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'handing over (orphaning)',
      input: 'a cluster unprovisioned',
      change: (req) => {
        delete clusterStatus(req, 'clusters')['providerConfigRef'];
      },
      expect: { kept: true },
    },
    {
      state: 'handing over (orphaning)',
      input: 'a cluster gone before its child gave up Delete',
      change: withoutCluster('us-east-a100'),
      expect: { dropped: ['hydration-us-east-a100'], rule: CACHE_RULES.leftFootprint },
    },
    { state: 'handing over (listed)', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'handing over (listed)',
      input: 'a cluster gone once its child gave up Delete (it first gets Delete back)',
      change: withoutCluster('us-east-a100'),
      expect: { kept: true },
    },
    {
      state: 'handing over (listed)',
      input: 'a child reporting orphanOnDelete as garbage',
      change: (req) => {
        statusOf(observedBody(req, 'hydration-us-east-a100'))['orphanOnDelete'] = 'yes';
      },
      expect: { kept: true },
    },
    {
      state: 'handing over (release)',
      input: 'nothing changed',
      change: () => undefined,
      expect: { dropped: ['hydration-eu-west-a100', 'hydration-us-east-a100', 'hydration-us-west-a100'], rule: CACHE_RULES.flatHandOver },
    },
    {
      state: 'handing over (release)',
      input: 'the shard observed listing them without what they inherit',
      change: (req) => {
        for (const member of shardSpec(req)['clusters'] as JsonObject[]) delete member['inheritedStatus'];
      },
      expect: { kept: true },
    },
    {
      state: 'handing over (release)',
      input: 'the shard observed as something else entirely',
      change: (req) => {
        req.observed!.resources!['shard-0'] = {
          resource: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modelcache-ml-team-qwen-shard-0-bf0ec' } },
        };
      },
      expect: { kept: true },
    },
    {
      state: 'handing over (release)',
      input: 'a child that has its Delete policy back (orphanOnDelete false)',
      change: (req) => {
        statusOf(observedBody(req, 'hydration-us-east-a100'))['orphanOnDelete'] = false;
      },
      expect: { dropped: ['hydration-eu-west-a100', 'hydration-us-west-a100'], rule: CACHE_RULES.flatHandOver },
    },
  ],
});

// A hand-over drops the PVC Object: the check above shows it goes; this shows it can no longer delete what it names.
describe('compose-model-cache, the hand-over', () => {
  it('re-desires the single-function PVC without Delete before it ever drops it', async () => {
    const req = await cacheStates['upgrading from the single function']!();
    expect(canDelete(observedBody(req, 'pvc-cluster-a'))).toBe(true);
    const rsp = await client('compose-model-cache').run(req);
    const pvc = desiredResources(rsp)['pvc-cluster-a']!;
    expect(canDelete(pvc)).toBe(false);
    expect(desiredResources(rsp)).not.toHaveProperty('hydration-cluster-a');
  });

  it('releases a child of the layout before shards only once it is orphan-on-delete', async () => {
    const req = await cacheStates['handing over (orphaning)']!();
    const rsp = await client('compose-model-cache').run(req);
    for (const [key, child] of Object.entries(desiredResources(rsp)).filter(([key]) => key.startsWith('hydration-'))) {
      expect((child['metadata'] as JsonObject)['annotations'], key).toMatchObject({ 'modelplane.ai/orphan-on-delete': 'true' });
    }
    const released = await cacheStates['handing over (release)']!();
    for (const key of Object.keys(released.observed!.resources!).filter((key) => key.startsWith('hydration-'))) {
      expect(statusOf(observedBody(released, key))['orphanOnDelete'], key).toBe(true);
    }
  });
});

// --- compose-model-cache: a ModelCacheShard ---------------------------------------

const SHARD_RULE =
  'docs/design/fleet.md, "Which shard holds a cluster": a shard drops a child only when its ModelCache names the cluster in spec.drop (it left the cache)';

const shardStates: Table['states'] = {
  hydrating: () => seed('compose-model-cache', 'model-cache-shard:hydrating'),
  'keeping one for a replica': () => seed('compose-model-cache', 'model-cache-shard:kept'),
  'dropping one': () => seed('compose-model-cache', 'model-cache-shard:dropped'),
};

runTable({
  name: 'compose-model-cache',
  states: shardStates,
  protects: (key) => key.startsWith('hydration-'),
  rows: [
    { state: 'hydrating', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'hydrating',
      input: 'its clusters unlisted (the cache listed none, dropped none)',
      change: (req) => {
        spec(req)['clusters'] = [];
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a cluster moved to another spelling',
      change: (req) => {
        (spec(req)['clusters'] as JsonObject[])[0]!['name'] = 'eu-west-a100-renamed';
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'its own status gone',
      change: (req) => {
        delete xr(req)['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a child’s status gone',
      change: (req) => {
        delete observedBody(req, 'hydration-us-east-a100')['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a child’s status flapping (Failed, then garbage)',
      change: (req) => {
        statusOf(observedBody(req, 'hydration-us-east-a100'))['phase'] = 'Failed';
        statusOf(observedBody(req, 'hydration-us-west-a100'))['phase'] = { not: 'a phase' };
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a child observed as something else entirely',
      change: (req) => {
        req.observed!.resources!['hydration-us-east-a100'] = {
          resource: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modelcache-ml-team-qwen-us-east-a100-dd185' } },
        };
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a drop naming a cluster it does not hold',
      change: (req) => {
        spec(req)['drop'] = ['ap-south-a100'];
      },
      expect: { kept: true },
    },
    {
      state: 'hydrating',
      input: 'a bad member (a name not a DNS label)',
      change: (req) => {
        (spec(req)['clusters'] as JsonObject[])[0]!['name'] = 'EU_WEST';
      },
      expect: { fatal: true },
    },
    {
      state: 'hydrating',
      input: 'a cluster listed twice',
      change: (req) => {
        const clusters = spec(req)['clusters'] as JsonObject[];
        clusters.push(structuredClone(clusters[0]!));
      },
      expect: { fatal: true },
    },
    {
      state: 'hydrating',
      input: 'the source emptied',
      change: (req) => {
        delete spec(req)['huggingFace'];
      },
      expect: { fatal: true },
    },
    {
      state: 'hydrating',
      input: 'a cluster named in spec.drop',
      change: (req) => {
        spec(req)['clusters'] = (spec(req)['clusters'] as JsonObject[]).filter((member) => member['name'] !== 'us-west-a100');
        spec(req)['drop'] = ['us-west-a100'];
      },
      expect: { dropped: ['hydration-us-west-a100'], rule: SHARD_RULE },
    },
    { state: 'keeping one for a replica', input: 'nothing changed', change: () => undefined, expect: { kept: true } },
    {
      state: 'keeping one for a replica',
      input: 'the kept child’s status gone',
      change: (req) => {
        delete observedBody(req, 'hydration-us-east-a100')['status'];
      },
      expect: { kept: true },
    },
    {
      state: 'dropping one',
      input: 'nothing changed',
      change: () => undefined,
      expect: { dropped: ['hydration-us-west-a100'], rule: SHARD_RULE },
    },
    {
      state: 'dropping one',
      input: 'the dropped cluster listed again as well',
      change: (req) => {
        (spec(req)['clusters'] as JsonObject[]).push({ name: 'us-west-a100' });
      },
      expect: { kept: true },
    },
  ],
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
