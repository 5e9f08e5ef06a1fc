// The walkthrough (docs/walkthrough.md), played on the live control plane of
// `make up`: one ModelCache (HuggingFace) over three InferenceClusters, its
// three ModelCacheHydration children, one of them failing and recovering, and
// a ModelReplica that waits for the cache on its cluster and then serves.
// Crossplane, provider-kubernetes, the API servers and our three function
// servers are real; the workload kubelet stand-in (workload-kubelet.sh) binds
// the claims and finishes the Jobs when a step says so. Each step is asserted
// on what the API servers hold, and the page's YAML blocks are excerpts of
// those objects (excerpts.ts: `asShown` says what varies and is left out). The
// last test checks the page shows them; UPDATE_DOCS=1 rewrites the blocks.
//
// The objects are the ones in examples/: the clusters and the cache of
// examples/model-cache/first-compose (each cluster's provider config pointed at
// a workload cluster of the plane), the token Secret of
// examples/model-cache-hydration/huggingface-first-compose, the replica of
// examples/model-replica/cache-ready. It runs after lifecycle.e2e.ts, which
// uses the same namespace and cache name and cleans up after itself; this
// file does the same.

import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REMOTE_NAMESPACE,
  asArray,
  cacheNames,
  getIn,
  getObject,
  getString,
  hydrationName,
  shardName,
  replicaNames,
  isObject,
  type JsonObject,
  type JsonValue,
} from '#lib';
import { REPO_ROOT } from '../support/server.js';
import { readYamlObject, readYamlStream } from '../render/yaml.js';
import { asShown, checkOrUpdate } from './excerpts.js';
import {
  type ApiServer,
  eventually,
  getObject as read,
  kubectl,
  kubectlOk,
  kubelet,
  list,
  messageOf,
  names,
  ownedByJob,
  pick,
  reasonOf,
  setInferenceClusterStatus,
  settled,
  tokenLeft,
} from './plane.js';

const DOC = join(REPO_ROOT, 'docs', 'walkthrough.md');
const NAMESPACE = 'ml-team';
const REMOTE = REMOTE_NAMESPACE;
const CACHE = 'qwen';
const REPLICA = 'qwen-chat-7d2e4';
const [US_EAST, US_WEST, EU_WEST] = ['us-east-a100', 'us-west-a100', 'eu-west-a100'] as const;
/** The workload cluster of the plane each InferenceCluster reports as its provider config. */
const WORKLOAD = { [US_EAST]: 'cluster-a', [US_WEST]: 'cluster-b', [EU_WEST]: 'cluster-c' } as const;
type Cluster = keyof typeof WORKLOAD;
const CLUSTERS = [US_EAST, US_WEST, EU_WEST] as const;
const OBJECTS = 'objects.kubernetes.m.crossplane.io';
const USAGES = 'usages.protection.crossplane.io';
/** What our Compositions put on a workload cluster, for its inventory. */
const WORKLOAD_KINDS =
  'jobs,persistentvolumeclaims,secrets,configmaps,deployments,services,serviceaccounts,roles,rolebindings,resourceclaimtemplates,inferencepools,httproutes';
/** A step waits this long for what real controllers do in their own time (provider-kubernetes can take a minute or two). */
const STEP_WAIT = { timeoutMs: 240_000 };

/** What the cache composes on each workload cluster: the claim, the download Job and the token Secret. */
const REMOTE_NAMES = cacheNames(NAMESPACE, CACHE);
/** A staging child's composed keys: the token, the Job and the access it reports its progress with, and the claim. */
const STAGING_KEYS = ['auth', 'hydrate', 'hydrate-account', 'hydrate-binding', 'hydrate-role', 'pvc'];
const example = (path: string) => join(REPO_ROOT, 'examples', path);
const inferenceClusters = readYamlStream(example('model-cache/first-compose/required.yaml'));
const tokenSecret = readYamlStream(example('model-cache-hydration/huggingface-first-compose/required.yaml')).find(
  (doc) => doc['kind'] === 'Secret',
)!;
const TOKEN_BASE64 = getString(tokenSecret, 'data', 'HF_TOKEN')!;
const TOKEN = Buffer.from(TOKEN_BASE64, 'base64').toString('utf8');

/** What docs/walkthrough.md shows, by excerpt name. */
const excerpts = new Map<string, unknown>();
let createdNamespace = false;

function excerpt(name: string, value: unknown): void {
  if (excerpts.has(name)) throw new Error(`excerpt ${name} recorded twice`);
  excerpts.set(name, JSON.parse(JSON.stringify(asShown(value))) as unknown);
}

// --- acting on the plane ------------------------------------------------------

/** Server-side apply: no last-applied annotation, so the token Secret's value is only in its data. */
function applyServerSide(server: ApiServer, object: JsonObject): void {
  kubectlOk(server, ['apply', '--server-side', '--field-manager=walkthrough', '-f', '-'], JSON.stringify(object));
}

function withoutStatus(object: JsonObject): JsonObject {
  return Object.fromEntries<JsonValue | undefined>(Object.entries(object).filter(([field]) => field !== 'status'));
}

/** The InferenceCluster's status as upstream's composition would write it, pointing at the plane's workload cluster. */
function provision(cluster: JsonObject): void {
  const name = getString(cluster, 'metadata', 'name') as Cluster;
  const status = { ...getObject(cluster, 'status')!, providerConfigRef: { name: WORKLOAD[name] } };
  setInferenceClusterStatus(name, status);
}

// --- reading the plane --------------------------------------------------------

const cache = (): JsonObject | undefined => read('control-plane', 'modelcache', CACHE, NAMESPACE);
const replica = (): JsonObject | undefined => read('control-plane', 'modelreplica', REPLICA, NAMESPACE);
const child = (cluster: Cluster): JsonObject | undefined =>
  read('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, cluster), NAMESPACE);

/** The resources an XR composed, by composition resource name (the key its function gave each). */
function composed(xr: JsonObject | undefined, resource = OBJECTS): Map<string, JsonObject> {
  const owner = getString(xr, 'metadata', 'name');
  const out = new Map<string, JsonObject>();
  for (const object of list('control-plane', resource, NAMESPACE)) {
    if (!asArray(getIn(object, 'metadata', 'ownerReferences')).some((ref) => isObject(ref) && ref['name'] === owner)) continue;
    out.set(getString(object, 'metadata', 'annotations', 'crossplane.io/composition-resource-name') ?? '', object);
  }
  return out;
}

const composedKeys = (xr: JsonObject | undefined): string[] => [...composed(xr).keys()].sort();

function composedObject(xr: JsonObject | undefined, key: string): JsonObject {
  const found = composed(xr).get(key);
  if (!found) throw new Error(`${getString(xr, 'metadata', 'name') ?? 'the XR'} composes no ${key} now`);
  return found;
}

/** `cluster: phase` for every entry of the cache's status.clusters[]. */
function phases(found = cache()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of asArray(getIn(found, 'status', 'clusters'))) out[getString(entry, 'name')!] = getString(entry, 'phase')!;
  return out;
}

/** The XR's status once Crossplane has written its own conditions next to the function's. */
function specWithoutCrossplane(xr: JsonObject | undefined): JsonObject {
  return Object.fromEntries<JsonValue | undefined>(Object.entries(getObject(xr, 'spec') ?? {}).filter(([field]) => field !== 'crossplane'));
}

/** An XR as its author wrote it, read back from the API server (without what Crossplane keeps in spec.crossplane). */
function asApplied(xr: JsonObject | undefined): JsonObject {
  return {
    apiVersion: getString(xr, 'apiVersion')!,
    kind: getString(xr, 'kind')!,
    metadata: pick(getObject(xr, 'metadata'), 'name', 'namespace', 'labels'),
    spec: specWithoutCrossplane(xr),
  };
}

const manifest = (object: JsonObject): JsonObject => getObject(object, 'spec', 'forProvider', 'manifest') ?? {};

/** What provider-kubernetes reports about an Object: the remote object's status and the Object's conditions. */
function objectStatus(object: JsonObject): JsonObject {
  return {
    status: {
      atProvider: { manifest: { status: getObject(object, 'status', 'atProvider', 'manifest', 'status') ?? {} } },
      conditions: getIn(object, 'status', 'conditions') as JsonObject[],
    },
  };
}

const cacheStatus = (found: JsonObject | undefined, ...fields: string[]): JsonObject => ({
  status: pick(getObject(found, 'status'), ...fields),
});
const conditions = (found: JsonObject | undefined): JsonObject => ({
  status: { conditions: getIn(found, 'status', 'conditions') as JsonObject[] },
});

/** `Kind/name` of everything of ours in a workload cluster's `default` namespace. */
function inventory(cluster: Cluster): string[] {
  return list(WORKLOAD[cluster], WORKLOAD_KINDS, REMOTE)
    .map((object) => `${getString(object, 'kind')!}/${getString(object, 'metadata', 'name')!}`)
    .filter((entry) => entry !== 'Service/kubernetes')
    .sort();
}

/** The events our functions' results became (Crossplane prefixes them with the pipeline step), in a stable order. */
function functionEvents(): JsonObject[] {
  return list('control-plane', 'events', NAMESPACE)
    .filter((event) => (getString(event, 'message') ?? '').startsWith('Pipeline step "'))
    .map((event) => ({
      type: getString(event, 'type')!,
      reason: getString(event, 'reason')!,
      object: `${getString(event, 'involvedObject', 'kind')!}/${getString(event, 'involvedObject', 'name')!}`,
      message: getString(event, 'message')!,
    }))
    .sort((a, b) => `${a.object} ${a.reason} ${a.message}`.localeCompare(`${b.object} ${b.reason} ${b.message}`));
}

// --- what must hold at every step ---------------------------------------------

/** Every path in a value where `needle` occurs in a string. */
function occurrences(value: unknown, needle: string, path = ''): string[] {
  if (typeof value === 'string') return value.includes(needle) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => occurrences(item, needle, `${path}[${i}]`));
  if (isObject(value)) return Object.entries(value).flatMap(([key, item]) => occurrences(item, needle, path ? `${path}.${key}` : key));
  return [];
}

/** The token is in the control-plane Secret and in the data of the workload Secrets (and the Objects that carry them); nowhere else. */
function expectTokenOnlyInSecrets(): void {
  const allowed = /^(data|spec\.forProvider\.manifest\.data|status\.atProvider\.manifest\.data)\.HF_TOKEN$/;
  const everything: [string, JsonObject][] = [
    ...list('control-plane', `modelcaches,modelcachehydrations,modelreplicas,${OBJECTS},${USAGES},secrets,events`, NAMESPACE).map(
      (object): [string, JsonObject] => ['control plane', object],
    ),
    ...list('control-plane', 'inferenceclusters').map((object): [string, JsonObject] => ['control plane', object]),
    ...CLUSTERS.flatMap((cluster) =>
      list(WORKLOAD[cluster], `${WORKLOAD_KINDS},events`, REMOTE).map((object): [string, JsonObject] => [cluster, object]),
    ),
  ];
  for (const needle of [TOKEN_BASE64, TOKEN]) {
    for (const [where, object] of everything) {
      const at = `${where}: ${getString(object, 'kind') ?? ''}/${getString(object, 'metadata', 'name') ?? ''}`;
      expect(
        occurrences(object, needle).filter((path) => !allowed.test(path)),
        at,
      ).toEqual([]);
    }
  }
}

// --- the plane before and after -----------------------------------------------

/** Anything of this story's on the workload clusters: what the cache and the replica compose there. */
function leftovers(): string[] {
  return CLUSTERS.flatMap((cluster) =>
    inventory(cluster)
      .filter(
        (entry) => entry.includes(`modelcache-${NAMESPACE}-${CACHE}-`) || entry.includes(`${REPLICA}-`) || entry.endsWith(`/${REPLICA}`),
      )
      .map((entry) => `${WORKLOAD[cluster]}: ${entry}`),
  );
}

beforeAll(async () => {
  // lifecycle.e2e.ts uses the same namespace and cache name; it must have cleaned up.
  await eventually(
    'a plane with nothing of this story on it',
    () =>
      cache() === undefined &&
      replica() === undefined &&
      list('control-plane', 'inferenceclusters').filter((c) =>
        (CLUSTERS as readonly string[]).includes(getString(c, 'metadata', 'name') ?? ''),
      ).length === 0 &&
      leftovers().length === 0,
    { timeoutMs: 240_000, describe: () => leftovers().join(', ') },
  );
  createdNamespace = kubectl('control-plane', ['get', 'namespace', NAMESPACE]).code !== 0;
  applyServerSide('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  for (const cluster of inferenceClusters) applyServerSide('control-plane', withoutStatus(cluster));
  for (const cluster of inferenceClusters) provision(cluster);
  applyServerSide('control-plane', tokenSecret);
}, 300_000);

afterAll(async () => {
  // The replica first: its Usage refuses the cache's deletion while it exists.
  kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=180s']);
  kubectl('control-plane', ['delete', 'modelcache', CACHE, '-n', NAMESPACE, '--ignore-not-found', '--wait=false']);
  await eventually(
    'every XR, Object and Usage of the story gone from the control plane',
    () =>
      cache() === undefined &&
      list('control-plane', `modelcachehydrations,${OBJECTS},${USAGES}`, NAMESPACE).filter((o) =>
        /^(qwen-|modelcache-ml-team-qwen-)/.test(getString(o, 'metadata', 'name') ?? ''),
      ).length === 0,
    { timeoutMs: 240_000 },
  );
  // A Job is orphaned, never deleted (its TTL removes it when finished); the next file needn't wait for that.
  for (const cluster of CLUSTERS) kubectl(WORKLOAD[cluster], ['delete', 'job', REMOTE_NAMES.job, '-n', REMOTE, '--ignore-not-found']);
  kubectl('control-plane', ['delete', 'secret', getString(tokenSecret, 'metadata', 'name')!, '-n', NAMESPACE, '--ignore-not-found']);
  kubectl('control-plane', ['delete', 'inferenceclusters', ...CLUSTERS, '--ignore-not-found']);
  if (createdNamespace) kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--wait=false']);
  await eventually('nothing of the story left on the workload clusters', () => leftovers().length === 0, {
    timeoutMs: 120_000,
    describe: () => leftovers().join(', '),
  });
}, 600_000);

// --- the story ----------------------------------------------------------------

describe('walkthrough on the live plane: one ModelCache over three clusters, one failing and recovering, and a replica that waits for it', () => {
  let failedJobUid = '';

  it('step 1: the platform team applies the ModelCache: three children, three Objects each on three clusters, 0/3', async () => {
    excerpt('cluster', {
      ...pick(read('control-plane', 'inferencecluster', US_WEST), 'apiVersion', 'kind'),
      metadata: pick(getObject(read('control-plane', 'inferencecluster', US_WEST), 'metadata'), 'name', 'labels'),
      ...pick(read('control-plane', 'inferencecluster', US_WEST), 'spec', 'status'),
    });
    applyServerSide('control-plane', readYamlObject(example('model-cache/first-compose/xr.yaml')));

    const pending = await eventually(
      'every cluster Pending, rolled up 0/3',
      () => {
        const found = settled(cache());
        const all = phases(found);
        // Pending with the claim there (not only desired): every child has seen provider-kubernetes create it.
        const seen = asArray(getIn(found, 'status', 'clusters')).every((entry) =>
          (getString(entry, 'message') ?? '').endsWith('(it is Pending)'),
        );
        return getIn(found, 'status', 'summary', 'ready') === '0/3' && CLUSTERS.every((c) => all[c] === 'Pending') && seen
          ? found
          : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    excerpt('cache', asApplied(pending));
    excerpt('cache-composed', { spec: { crossplane: pick(getObject(pending, 'spec', 'crossplane'), 'compositionRef', 'resourceRefs') } });
    // Three clusters fit one shard: the ModelCache composes shard 0, and the shard the three children.
    expect(asArray(getIn(pending, 'spec', 'crossplane', 'resourceRefs')).map((ref) => getString(ref, 'name'))).toEqual([
      shardName(NAMESPACE, CACHE, 0),
    ]);
    expect(CLUSTERS.map((cluster) => getString(child(cluster), 'metadata', 'name'))).toEqual(
      CLUSTERS.map((cluster) => hydrationName(NAMESPACE, CACHE, cluster)),
    );

    const usWest = child(US_WEST);
    expect(getString(usWest, 'metadata', 'name')).toBe('modelcache-ml-team-qwen-us-west-a100-4c5b1');
    excerpt('child', {
      apiVersion: getString(usWest, 'apiVersion')!,
      kind: getString(usWest, 'kind')!,
      metadata: pick(getObject(usWest, 'metadata'), 'name', 'namespace', 'labels', 'annotations', 'ownerReferences'),
      spec: specWithoutCrossplane(usWest),
    });

    for (const cluster of CLUSTERS) {
      await eventually(
        `the claim, the Job, its report access and the token Secret on ${WORKLOAD[cluster]}`,
        () => composedKeys(child(cluster)).join() === STAGING_KEYS.join() && inventory(cluster).length === 6,
        STEP_WAIT,
      );
      expect(inventory(cluster)).toEqual([
        `Job/${REMOTE_NAMES.job}`,
        `PersistentVolumeClaim/${REMOTE_NAMES.pvc}`,
        `Role/${REMOTE_NAMES.job}`,
        `RoleBinding/${REMOTE_NAMES.job}`,
        `Secret/${REMOTE_NAMES.authSecret}`,
        `ServiceAccount/${REMOTE_NAMES.job}`,
      ]);
    }
    const usEast = child(US_EAST);
    const pvc = composedObject(usEast, 'pvc');
    excerpt('pvc-object', {
      apiVersion: getString(pvc, 'apiVersion')!,
      kind: getString(pvc, 'kind')!,
      metadata: pick(getObject(pvc, 'metadata'), 'generateName', 'labels', 'annotations', 'ownerReferences'),
      spec: getObject(pvc, 'spec')!,
    });
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
      valueFrom: { secretKeyRef: { name: REMOTE_NAMES.authSecret, key: 'HF_TOKEN' } },
    });

    expect(reasonOf(pending, 'ArtifactReady')).toBe('Hydrating');
    expect(reasonOf(pending, 'Ready')).toBe('Creating');
    excerpt('cache-pending', cacheStatus(pending, 'summary', 'clusters', 'conditions'));

    const events = await eventually('the Staging events of the cache and its three children', () => {
      const found = functionEvents();
      return found.filter((event) => event['reason'] === 'Staging').length === 4 ? found : undefined;
    });
    excerpt('events-first-compose', events);
    expectTokenOnlyInSecrets();
  });

  it('step 2: the ML team applies a ModelReplica on us-east-a100: it waits, composing no engine, only a Usage', async () => {
    applyServerSide('control-plane', readYamlObject(example('model-replica/cache-ready/xr.yaml')));
    const waiting = await eventually(
      'the replica waiting for the cache, saying why',
      () => {
        const found = settled(replica());
        return reasonOf(found, 'ModelAccepted') === 'Hydrating' && reasonOf(found, 'ModelReady') === 'WaitingForModel' ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replica(), 'status')) },
    );
    expect(messageOf(waiting, 'ModelAccepted')).toContain(`waiting for ModelCache qwen on ${US_EAST}: Pending`);
    excerpt('replica', asApplied(waiting));
    excerpt('replica-waiting', conditions(waiting));

    const usage = await eventually('the Usage, Ready', () => {
      const found = composed(replica(), USAGES).get('model-cache-usage');
      return reasonOf(found, 'Ready') === 'Available' ? found : undefined;
    });
    expect([...composed(replica(), USAGES).keys(), ...composed(replica()).keys()]).toEqual(['model-cache-usage']);
    excerpt('usage', {
      apiVersion: getString(usage, 'apiVersion')!,
      kind: getString(usage, 'kind')!,
      metadata: pick(getObject(usage, 'metadata'), 'generateName', 'labels', 'annotations', 'ownerReferences'),
      spec: getObject(usage, 'spec')!,
      status: getObject(usage, 'status')!,
    });
    const inUse = await eventually(
      'the ModelCache marked in use',
      () => {
        const found = cache();
        return getString(found, 'metadata', 'labels', 'crossplane.io/in-use') === 'true' ? found : undefined;
      },
      STEP_WAIT,
    );
    excerpt('cache-in-use', { metadata: pick(getObject(inUse, 'metadata'), 'name', 'labels') });
    // Nothing of the replica's is on its cluster.
    expect(inventory(US_EAST)).toHaveLength(6);
    expectTokenOnlyInSecrets();
  });

  it('step 3: the claims bind and the downloads start: every cluster Hydrating; the replica keeps waiting', async () => {
    for (const cluster of CLUSTERS) kubelet(WORKLOAD[cluster], 'bind-claims');

    const hydrating = await eventually(
      'every cluster Hydrating',
      () => {
        const found = settled(cache());
        const all = phases(found);
        return CLUSTERS.every((c) => all[c] === 'Hydrating') ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    expect(getIn(hydrating, 'status', 'summary', 'ready')).toBe('0/3');
    expect(reasonOf(hydrating, 'ArtifactReady')).toBe('Hydrating');
    excerpt('cache-hydrating', cacheStatus(hydrating, 'summary', 'clusters'));

    const bound = await eventually('the claim Object Ready on us-east-a100', () => {
      const found = composed(child(US_EAST)).get('pvc');
      return reasonOf(found, 'Ready') === 'Available' ? found : undefined;
    });
    excerpt('pvc-bound', objectStatus(bound));

    await eventually(
      "the replica's message following the cluster",
      () => (messageOf(replica(), 'ModelAccepted') ?? '').includes(`${US_EAST}: Hydrating`),
      STEP_WAIT,
    );
    expect(reasonOf(replica(), 'ModelAccepted')).toBe('Hydrating');
    expect(inventory(US_EAST)).toHaveLength(6);
    expectTokenOnlyInSecrets();
  });

  it('step 4: two downloads complete, the one on us-west-a100 fails: 2/3, HydrationFailed naming it; the replica starts', async () => {
    kubelet(WORKLOAD[US_EAST], 'complete-job', REMOTE_NAMES.job);
    kubelet(WORKLOAD[EU_WEST], 'complete-job', REMOTE_NAMES.job);
    kubelet(WORKLOAD[US_WEST], 'fail-job', REMOTE_NAMES.job);
    failedJobUid = getString(read(WORKLOAD[US_WEST], 'job', REMOTE_NAMES.job, REMOTE), 'metadata', 'uid')!;

    const failedJob = await eventually(
      'provider-kubernetes reporting the failed Job',
      () => {
        const found = composed(child(US_WEST)).get('hydrate');
        const failed = asArray(getIn(found, 'status', 'atProvider', 'manifest', 'status', 'conditions')).find(
          (c) => getString(c, 'type') === 'Failed',
        );
        return failed ? found : undefined;
      },
      STEP_WAIT,
    );
    excerpt('job-failed', objectStatus(failedJob));

    const failedChild = await eventually(
      'the us-west-a100 child Failed',
      () => {
        const found = settled(child(US_WEST));
        return getString(found, 'status', 'phase') === 'Failed' ? found : undefined;
      },
      STEP_WAIT,
    );
    expect(reasonOf(failedChild, 'ArtifactReady')).toBe('HydrationFailed');
    excerpt('child-failed', { status: pick(getObject(failedChild, 'status'), 'phase', 'message', 'conditions') });

    const failed = await eventually(
      'the cache 2/3, HydrationFailed',
      () => {
        const found = settled(cache());
        const all = phases(found);
        return all[US_EAST] === 'Ready' &&
          all[EU_WEST] === 'Ready' &&
          all[US_WEST] === 'Failed' &&
          reasonOf(found, 'ArtifactReady') === 'HydrationFailed'
          ? found
          : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    expect(getIn(failed, 'status', 'summary', 'ready')).toBe('2/3');
    expect(messageOf(failed, 'ArtifactReady')).toBe(
      `${US_WEST}: hydration Job ${REMOTE_NAMES.job} on ${US_WEST} failed (attempt 1 of 3): BackoffLimitExceeded: Job has reached the specified backoff limit; ` +
        'attempt 2 starts when Kubernetes removes the failed Job, 180s after it failed (delete it on the workload cluster to start now)',
    );
    excerpt('cache-failed', cacheStatus(failed, 'summary', 'clusters', 'conditions'));

    // Ready children keep only the claim: the Job is orphaned to its TTL, and its report access and the token
    // Secret, emptied, are handed to the Job on the cluster, to go with it: the token leaves at once.
    for (const cluster of [US_EAST, EU_WEST] as const) {
      await eventually(
        `${cluster}'s child composing only its claim, its token gone`,
        () => composedKeys(child(cluster)).join() === 'pvc' && tokenLeft(WORKLOAD[cluster], REMOTE_NAMES.authSecret, REMOTE),
        STEP_WAIT,
      );
      const job = read(WORKLOAD[cluster], 'job', REMOTE_NAMES.job, REMOTE);
      expect(job, `the Job on ${WORKLOAD[cluster]}`).toBeDefined();
      for (const kind of ['serviceaccount', 'role', 'rolebinding'])
        expect(ownedByJob(read(WORKLOAD[cluster], kind, REMOTE_NAMES.job, REMOTE), job), `${cluster}'s ${kind} owned by the Job`).toBe(
          true,
        );
    }
    expect(composedKeys(child(US_WEST))).toEqual(STAGING_KEYS);

    // The replica's cluster is Ready: the engine starts with the cache's volume, mount and env, its args as written.
    const deployment = await eventually('the engine Deployment composed', () => composed(replica()).get('model-serving-main'), STEP_WAIT);
    const pod = getObject(manifest(deployment), 'spec', 'template', 'spec')!;
    const engine = asArray(pod['containers']).find((c) => getString(c, 'name') === 'engine') as JsonObject;
    // The engine container as the replica's author wrote it (spec.engines[0].members[0]).
    const member = asArray(
      getIn(asArray(getIn(readYamlObject(example('model-replica/cache-ready/xr.yaml')), 'spec', 'engines'))[0], 'members'),
    )[0];
    const written = asArray(getIn(member, 'template', 'spec', 'containers'))[0];
    expect(engine['args']).toEqual(getIn(written, 'args'));
    // The contract's env first, then the user's, each name once.
    const env = asArray(engine['env']);
    expect(env).toContainEqual({ name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' });
    expect(env.slice(-asArray(getIn(written, 'env')).length)).toEqual(getIn(written, 'env'));
    expect(new Set(env.map((e) => getString(e, 'name'))).size).toBe(env.length);
    expect(pod['volumes']).toContainEqual({ name: 'model-cache', persistentVolumeClaim: { claimName: REMOTE_NAMES.pvc } });
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

    const starting = await eventually(
      'the replica Accepted, starting, waiting for its two Deployments',
      () => {
        const found = settled(replica());
        return reasonOf(found, 'ModelAccepted') === 'Accepted' &&
          reasonOf(found, 'ModelReady') === 'ModelStarting' &&
          messageOf(found, 'Ready') === 'Unready resources: epp, model-serving-main'
          ? found
          : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replica(), 'status')) },
    );
    excerpt('replica-starting', conditions(starting));
    expectTokenOnlyInSecrets();
  });

  it('step 5: the operator fixes the cause on us-west-a100; the engine is Available: the replica serves', async () => {
    const deployments = list(WORKLOAD[US_EAST], 'deployments', REMOTE);
    // The replica's names carry its namespace (docs/design/names.md): qwen-chat-7d2e4-epp-14f3c and its engine's.
    const remote = replicaNames({ namespace: NAMESPACE, name: REPLICA });
    expect(names(deployments)).toEqual([remote.epp, remote.deployment('main')].sort());
    for (const deployment of names(deployments)) kubelet(WORKLOAD[US_EAST], 'available', deployment);

    const serving = await eventually(
      'the replica serving',
      () => {
        const found = settled(replica());
        return reasonOf(found, 'ModelReady') === 'Serving' && reasonOf(found, 'Ready') === 'Available' ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replica(), 'status')) },
    );
    excerpt('replica-serving', conditions(serving));
    // Fixing the cause changes nothing by itself: the failed Job stays (its pods' logs with it) for its TTL.
    expect(phases()[US_WEST]).toBe('Failed');
    expect(getString(read(WORKLOAD[US_WEST], 'job', REMOTE_NAMES.job, REMOTE), 'metadata', 'uid')).toBe(failedJobUid);
    expectTokenOnlyInSecrets();
  });

  it('step 6: the failed Job reaches its TTL and goes; provider-kubernetes creates it again: us-west-a100 Hydrating, 2/3 Partial', async () => {
    // ttlSecondsAfterFinished is 180: the workload cluster's TTL controller deletes the Job three minutes after it failed.
    await eventually(
      'a new Job on us-west-a100',
      () => {
        const uid = getString(read(WORKLOAD[US_WEST], 'job', REMOTE_NAMES.job, REMOTE), 'metadata', 'uid');
        return uid !== undefined && uid !== failedJobUid;
      },
      { timeoutMs: 300_000 },
    );
    const recreated = await eventually(
      'provider-kubernetes reporting the new Job',
      () => {
        const found = composed(child(US_WEST)).get('hydrate');
        const remote = getObject(found, 'status', 'atProvider', 'manifest');
        const fresh = getString(remote, 'metadata', 'uid') !== failedJobUid && isObject(remote?.['status']);
        return fresh && Object.keys(getObject(remote, 'status')!).length === 0 ? found : undefined;
      },
      STEP_WAIT,
    );
    excerpt('job-recreated', objectStatus(recreated));

    const partial = await eventually(
      'the cache Partial, us-west-a100 Hydrating',
      () => {
        const found = settled(cache());
        return phases(found)[US_WEST] === 'Hydrating' && reasonOf(found, 'ArtifactReady') === 'Partial' ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    expect(getIn(partial, 'status', 'summary', 'ready')).toBe('2/3');
    excerpt('cache-partial', cacheStatus(partial, 'summary', 'conditions'));

    // The Jobs that completed in step 4 reached their TTL too, and the cluster's garbage collector took their
    // access and emptied Secret with them; their Objects were dropped then, so nothing creates them again.
    const jobAndAccess = [
      ...['Job', 'ServiceAccount', 'Role', 'RoleBinding'].map((kind) => `${kind}/${REMOTE_NAMES.job}`),
      `Secret/${REMOTE_NAMES.authSecret}`,
    ];
    for (const cluster of [US_EAST, EU_WEST] as const) {
      await eventually(
        `the completed Job and its access gone from ${WORKLOAD[cluster]}`,
        () => !inventory(cluster).some((entry) => jobAndAccess.includes(entry)),
        STEP_WAIT,
      );
    }
    excerpt('inventory-partial', Object.fromEntries(CLUSTERS.map((cluster) => [cluster, inventory(cluster)])));
    expect(inventory(EU_WEST)).toEqual([`PersistentVolumeClaim/${REMOTE_NAMES.pvc}`]);
    expectTokenOnlyInSecrets();
  }, 480_000);

  it('step 7: the download completes: 3/3, Staged, the ModelCache Ready', async () => {
    kubelet(WORKLOAD[US_WEST], 'complete-job', REMOTE_NAMES.job);
    const staged = await eventually(
      'the cache Staged and Ready',
      () => {
        const found = settled(cache());
        return reasonOf(found, 'ArtifactReady') === 'Staged' && reasonOf(found, 'Ready') === 'Available' ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    expect(phases(staged)).toEqual({ [EU_WEST]: 'Ready', [US_EAST]: 'Ready', [US_WEST]: 'Ready' });
    expect(getIn(staged, 'status', 'summary', 'ready')).toBe('3/3');
    expect(messageOf(staged, 'ArtifactReady')).toBe('staged on all 3 clusters');
    excerpt('cache-staged', cacheStatus(staged, 'summary', 'conditions'));
    for (const cluster of CLUSTERS) {
      await eventually(`${cluster}'s child composing only its claim`, () => composedKeys(child(cluster)).join() === 'pvc', STEP_WAIT);
    }
    await eventually(
      "the token gone from us-west-a100, the Job's report access owned by the Job",
      () => {
        const job = read(WORKLOAD[US_WEST], 'job', REMOTE_NAMES.job, REMOTE);
        return (
          tokenLeft(WORKLOAD[US_WEST], REMOTE_NAMES.authSecret, REMOTE) &&
          ['serviceaccount', 'role', 'rolebinding'].every((kind) =>
            ownedByJob(read(WORKLOAD[US_WEST], kind, REMOTE_NAMES.job, REMOTE), job),
          )
        );
      },
      STEP_WAIT,
    );
    expect(inventory(US_WEST)).toEqual(
      [
        ...['Job', 'RoleBinding', 'Role', 'ServiceAccount'].map((kind) => `${kind}/${REMOTE_NAMES.job}`),
        `PersistentVolumeClaim/${REMOTE_NAMES.pvc}`,
        `Secret/${REMOTE_NAMES.authSecret}`,
      ].sort(),
    );
    expectTokenOnlyInSecrets();
  });

  it('docs/walkthrough.md shows what this run recorded', async () => {
    expect(
      await checkOrUpdate(DOC, excerpts),
      'run `UPDATE_DOCS=1 make e2e` to refresh the excerpts, then read the story around them',
    ).toEqual([]);
  });
});
