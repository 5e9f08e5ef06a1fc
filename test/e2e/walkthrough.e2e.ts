// The walkthrough (docs/walkthrough.md), played on the live control plane of
// `make up` with its real nodes (docs/nodes.md): one
// ModelCache (HuggingFace) over three InferenceClusters, its three
// ModelCacheHydration children, one of them failing and recovering, and a
// ModelReplica that waits for the cache on its cluster and then serves.
// Crossplane, provider-kubernetes, the API servers, our three function
// servers, and on each workload cluster a kubelet, containerd, the scheduler,
// the controllers, local-path-provisioner and a DRA driver are real: the Jobs'
// pods download from the plane's hub, the Job controller completes or fails
// them, the engine pod starts on a fake GPU. What a step changes is the world
// around them: the hub holds the weights until a step lets them go (so a
// step can look at a download in flight), and refuses us-west-a100's pods for
// a while, as its egress proxy would (test/support/fake-hub.ts, hold and
// refuseFrom). Each step is asserted on what the API servers hold, and the
// page's YAML blocks are excerpts of those objects (excerpts.ts: `asShown`
// says what varies and is left out). The last test checks the page shows
// them; UPDATE_DOCS=1 rewrites the blocks. On a plane without nodes it is
// skipped.
//
// The objects are the ones in examples/: the clusters and the cache of
// examples/model-cache/first-compose (each cluster's provider config pointed at
// a workload cluster of the plane, its class at the node's), the token Secret
// of examples/model-cache-hydration/huggingface-first-compose, the replica of
// examples/model-replica/cache-ready (its vLLM image is the serving stand-in
// there, its gpu.nvidia.com device a fake one: docs/nodes.md). lifecycle.e2e.ts
// uses the same namespace and cache name on a plane without nodes.

import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CACHE_MOUNT_PATH,
  REMOTE_NAMESPACE,
  asArray,
  cacheNames,
  composedManifest,
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
import { sha256 } from '../support/fake-hub.js';
import { asShown, checkOrUpdate } from './excerpts.js';
import { clusterClients, hub, setFaults, snapshotDir, volumeOnNode } from './hub/client.js';
import { HUB_FILE_SHAS, engineFiles, joinPool, leavePool, nodeOf, readShas } from './hub/engine.js';
import { HUB_FILES, HUB_WALKTHROUGH_REPO, HUB_WEIGHTS, hubRevision } from './hub/repo.js';
import {
  type ApiServer,
  clusterEntry,
  conditionTrue,
  eventually,
  getObject as read,
  kubectl,
  kubectlOk,
  list,
  messageOf,
  accessNotOwnedByJob,
  pick,
  reasonOf,
  statusSays,
  setInferenceClusterStatus,
  settled,
  tokenLeft,
  nodesPlane,
  ofStory,
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
/** The file the hub holds back while a step looks at a download in flight, and what comes before it. */
/** hydrate.py downloads the files in name order: these are on the claim while the weights are held. */
const BEFORE_WEIGHTS = HUB_FILES.filter((f) => f.path < HUB_WEIGHTS);
const BEFORE_WEIGHTS_BYTES = BEFORE_WEIGHTS.reduce((sum, f) => sum + f.content.length, 0);
/** A cache's entry for a cluster whose Job's pod waits at the held weights, the files before them on the claim. */
const atTheWeights = (entry: JsonObject | undefined): boolean =>
  getString(entry, 'phase') === 'Hydrating' &&
  getIn(entry, 'progress', 'filesDone') === BEFORE_WEIGHTS.length &&
  getIn(entry, 'progress', 'bytesDone') === BEFORE_WEIGHTS_BYTES;
/** The ReadWriteMany class of the nodes' local-path-provisioner (docs/nodes.md, Storage). */
const NODE_CLASS = 'modelplane-rwx';
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

/**
 * The InferenceCluster's status as upstream's composition would write it, pointing at the plane's workload cluster
 * and at the class its node's provisioner serves (node.sh: modelplane-rwx, ReadWriteMany).
 */
function provision(cluster: JsonObject): void {
  const name = getString(cluster, 'metadata', 'name') as Cluster;
  const written = getObject(cluster, 'status')!;
  const status = {
    ...written,
    providerConfigRef: { name: WORKLOAD[name] },
    cache: { ...getObject(written, 'cache'), storageClassName: NODE_CLASS },
  };
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

const manifest = (object: JsonObject): JsonObject => composedManifest(object) ?? {};

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

/**
 * `Kind/name` of everything of the story's in a workload cluster's `default` namespace: what the functions label as
 * the team's (modelplane.ai/namespace), so the objects of the stories playing beside it (docs/nodes.md, "Two lanes")
 * are not counted.
 */
function inventory(cluster: Cluster): string[] {
  return list(WORKLOAD[cluster], WORKLOAD_KINDS, REMOTE, ofStory(NAMESPACE))
    .map((object) => `${getString(object, 'kind')!}/${getString(object, 'metadata', 'name')!}`)
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

/** The node the replica's pool label puts its engine on (examples/model-replica/cache-ready: nodePoolName a100). */
const REPLICA_NODE = nodeOf(WORKLOAD[US_EAST]);
const POOL = 'a100';

/** The pods of the story's Job on a cluster (the Job controller labels them job-name). */
const jobPods = (cluster: Cluster): JsonObject[] => list(WORKLOAD[cluster], 'pods', REMOTE, `job-name=${REMOTE_NAMES.job}`);

/** The replica's engine pods on us-east-a100 (its Deployment's). */
const enginePods = (): JsonObject[] =>
  list(WORKLOAD[US_EAST], 'pods', REMOTE).filter((pod) =>
    (getString(pod, 'metadata', 'name') ?? '').startsWith(`${replicaNames({ namespace: NAMESPACE, name: REPLICA }).deployment('main')}-`),
  );

/** What a page shows of a pod: where it runs, as whom, and each container's state by its kind (running, terminated: reason, exit code, message). */
function podShown(pod: JsonObject | undefined): JsonObject {
  const states = asArray(getIn(pod, 'status', 'containerStatuses'))
    .filter(isObject)
    .map((status) => {
      const state = getObject(status, 'state') ?? {};
      const shown: JsonObject = {};
      for (const [kind, detail] of Object.entries(state))
        shown[kind] = isObject(detail) ? pick(detail, 'reason', 'exitCode', 'message') : {};
      return {
        name: getString(status, 'name')!,
        image: getString(status, 'image')!,
        ready: getIn(status, 'ready') as boolean,
        state: shown,
      };
    });
  return {
    spec: pick(getObject(pod, 'spec'), 'nodeName', 'serviceAccountName'),
    status: { phase: getString(pod, 'status', 'phase')!, containerStatuses: states },
  };
}

const firstContainer = (pod: JsonObject | undefined): JsonObject | undefined =>
  asArray(getIn(pod, 'status', 'containerStatuses')).find(isObject);
const restartsOf = (pod: JsonObject | undefined): number => Number(getIn(firstContainer(pod), 'restartCount') ?? 0);
const lastTerminated = (pod: JsonObject | undefined): JsonObject | undefined => getObject(firstContainer(pod), 'lastState', 'terminated');

/** What a page shows of a pod whose container was restarted: where it runs, how often, and how its last run ended. */
function podRetried(pod: JsonObject | undefined): JsonObject {
  const status = firstContainer(pod);
  return {
    spec: pick(getObject(pod, 'spec'), 'nodeName', 'restartPolicy'),
    status: {
      containerStatuses: [
        {
          name: getString(status, 'name')!,
          restartCount: restartsOf(pod),
          lastState: { terminated: pick(lastTerminated(pod), 'reason', 'exitCode', 'message') },
        },
      ],
    },
  };
}

/** The hub's faults for the story's model: `hold` keeps the weights back; `refuse` turns us-west-a100's pods away. */
function faults(options: { hold: boolean; refuse: boolean }): Promise<unknown> {
  return setFaults({
    repo: HUB_WALKTHROUGH_REPO,
    ...(options.hold ? { hold: HUB_WEIGHTS } : {}),
    ...(options.refuse ? { refuseFrom: clusterClients(WORKLOAD[US_WEST]) } : {}),
  });
}

// --- the story ----------------------------------------------------------------

describe.skipIf(!nodesPlane('walkthrough.e2e.ts'))(
  'walkthrough on real nodes: one ModelCache over three clusters, one failing and recovering, and a replica that waits for it',
  () => {
    let failedJobUid = '';

    beforeAll(async () => {
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
      await hub('reset', { method: 'POST' });
      // The weights wait until step 4 lets them go: step 1 to 3 look at the downloads in flight.
      await faults({ hold: true, refuse: false });
      joinPool(WORKLOAD[US_EAST], POOL);
      createdNamespace = kubectl('control-plane', ['get', 'namespace', NAMESPACE]).code !== 0;
      applyServerSide('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      for (const cluster of inferenceClusters) applyServerSide('control-plane', withoutStatus(cluster));
      for (const cluster of inferenceClusters) provision(cluster);
      applyServerSide('control-plane', tokenSecret);
    }, 300_000);

    afterAll(async () => {
      await setFaults({});
      // The replica first: its Usage refuses the cache's deletion while it exists.
      kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=180s']);
      kubectl('control-plane', ['delete', 'modelcache', CACHE, '-n', NAMESPACE, '--ignore-not-found', '--wait=false']);
      // A Job is orphaned, never deleted (its TTL removes it when finished), and its pods keep the claim in use
      // until it goes: the story doesn't wait for the TTL.
      await eventually('the cache gone', () => cache() === undefined, { timeoutMs: 240_000 });
      for (const cluster of CLUSTERS) kubectl(WORKLOAD[cluster], ['delete', 'job', REMOTE_NAMES.job, '-n', REMOTE, '--ignore-not-found']);
      await eventually(
        'every XR, Object and Usage of the story gone from the control plane',
        () =>
          list('control-plane', `modelcachehydrations,${OBJECTS},${USAGES}`, NAMESPACE).filter((o) =>
            /^(qwen-|modelcache-ml-team-qwen-)/.test(getString(o, 'metadata', 'name') ?? ''),
          ).length === 0,
        { timeoutMs: 240_000 },
      );
      kubectl('control-plane', ['delete', 'secret', getString(tokenSecret, 'metadata', 'name')!, '-n', NAMESPACE, '--ignore-not-found']);
      kubectl('control-plane', ['delete', 'inferenceclusters', ...CLUSTERS, '--ignore-not-found']);
      if (createdNamespace) kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--wait=false']);
      leavePool(WORKLOAD[US_EAST]);
      await eventually('nothing of the story left on the workload clusters', () => leftovers().length === 0, {
        timeoutMs: 180_000,
        describe: () => leftovers().join(', '),
      });
    }, 900_000);

    it('step 1: the platform team applies the ModelCache: three children, their Objects on three clusters, the Jobs’ pods downloading, 0/3', async () => {
      excerpt('cluster', {
        ...pick(read('control-plane', 'inferencecluster', US_WEST), 'apiVersion', 'kind'),
        metadata: pick(getObject(read('control-plane', 'inferencecluster', US_WEST), 'metadata'), 'name', 'labels'),
        ...pick(read('control-plane', 'inferencecluster', US_WEST), 'spec', 'status'),
      });
      applyServerSide('control-plane', readYamlObject(example('model-cache/first-compose/xr.yaml')));

      // Hydrating, with the files before the held weights on the claim: the pods' report while they wait for them.
      const hydrating = await eventually(
        'every cluster Hydrating, its pod waiting for the weights, rolled up 0/3',
        () => {
          const found = settled(cache());
          const entries = CLUSTERS.map((cluster) => clusterEntry(found, cluster));
          return getIn(found, 'status', 'summary', 'ready') === '0/3' &&
            entries.every(atTheWeights) &&
            statusSays(found, { reasons: { ArtifactReady: 'Hydrating', Ready: 'Creating' } })
            ? found
            : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
      );
      excerpt('cache', asApplied(hydrating));
      excerpt('cache-composed', {
        spec: { crossplane: pick(getObject(hydrating, 'spec', 'crossplane'), 'compositionRef', 'resourceRefs') },
      });
      // Three clusters fit one shard: the ModelCache composes shard 0, and the shard the three children.
      expect(asArray(getIn(hydrating, 'spec', 'crossplane', 'resourceRefs')).map((ref) => getString(ref, 'name'))).toEqual([
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
        expect(composedKeys(child(cluster))).toEqual(STAGING_KEYS);
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

      excerpt('cache-hydrating', cacheStatus(hydrating, 'summary', 'clusters', 'conditions'));

      const events = await eventually(
        'the Staging events of the cache and its three children',
        () => {
          const found = functionEvents();
          return found.filter((event) => event['reason'] === 'Staging').length === 4 ? found : undefined;
        },
        { describe: () => JSON.stringify(functionEvents()) },
      );
      excerpt('events-first-compose', events);
      expectTokenOnlyInSecrets();
    });

    it('step 2: the ML team applies a ModelReplica on us-east-a100: it waits, composing no engine, only a Usage', async () => {
      applyServerSide('control-plane', readYamlObject(example('model-replica/cache-ready/xr.yaml')));
      const waiting = await eventually(
        'the replica waiting for the cache, saying why',
        () => {
          const found = settled(replica());
          return reasonOf(found, 'ModelAccepted') === 'Hydrating' && reasonOf(found, 'ModelReady') === 'WaitingForModel'
            ? found
            : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replica(), 'status')) },
      );
      expect(messageOf(waiting, 'ModelAccepted')).toContain(`waiting for ModelCache qwen on ${US_EAST}: Hydrating`);
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
      expect(enginePods()).toEqual([]);
      expectTokenOnlyInSecrets();
    });

    it('step 3: on us-east-a100 while its Job downloads: the claim Bound by the provisioner, the Job’s pod Running on the node', async () => {
      const bound = await eventually('the claim Object Ready on us-east-a100', () => {
        const found = composed(child(US_EAST)).get('pvc');
        return reasonOf(found, 'Ready') === 'Available' ? found : undefined;
      });
      excerpt('pvc-bound', objectStatus(bound));
      const pv = read(
        WORKLOAD[US_EAST],
        'pv',
        getString(read(WORKLOAD[US_EAST], 'pvc', REMOTE_NAMES.pvc, REMOTE), 'spec', 'volumeName') ?? '',
      );
      expect(getString(pv, 'metadata', 'annotations', 'pv.kubernetes.io/provisioned-by')).toBe('rancher.io/local-path');

      const running = await eventually(
        'the Job Object reporting one active, ready pod',
        () => {
          const found = composed(child(US_EAST)).get('hydrate');
          const remote = getObject(found, 'status', 'atProvider', 'manifest', 'status');
          return getIn(remote, 'active') === 1 && getIn(remote, 'ready') === 1 ? found : undefined;
        },
        STEP_WAIT,
      );
      excerpt('job-running', objectStatus(running));
      const pods = jobPods(US_EAST);
      expect(pods).toHaveLength(1);
      expect(getString(pods[0], 'spec', 'nodeName')).toBe(REPLICA_NODE);
      excerpt('job-pod', podShown(pods[0]));
      // Its progress is the pod's own: patched onto its Job with the composed ServiceAccount, read back by the child.
      excerpt('child-progress', { status: pick(getObject(child(US_EAST), 'status'), 'phase', 'message', 'progress') });

      expect(reasonOf(replica(), 'ModelAccepted')).toBe('Hydrating');
      expect(inventory(US_EAST)).toHaveLength(6);
      expectTokenOnlyInSecrets();
    });

    it('step 4: the weights come; two downloads complete, us-west-a100’s egress refuses the hub and its Job fails: 2/3, HydrationFailed naming it; the replica starts', async () => {
      await faults({ hold: false, refuse: true });

      // The pod between two refused tries (the kubelet restarts its container, restartPolicy OnFailure): the Job
      // controller deletes it when the Job fails, so it is read on the way.
      let retrying: JsonObject | undefined;
      const failedJob = await eventually(
        'provider-kubernetes reporting the failed Job',
        () => {
          const pod = jobPods(US_WEST).find((p) => restartsOf(p) === 1 && lastTerminated(p) !== undefined);
          retrying ??= pod;
          const found = composed(child(US_WEST)).get('hydrate');
          const failed = asArray(getIn(found, 'status', 'atProvider', 'manifest', 'status', 'conditions')).find(
            (c) => getString(c, 'type') === 'Failed',
          );
          return failed ? found : undefined;
        },
        { timeoutMs: 360_000 },
      );
      failedJobUid = getString(failedJob, 'status', 'atProvider', 'manifest', 'metadata', 'uid')!;
      excerpt('job-failed', objectStatus(failedJob));
      // Its first run and three retries, each refused by the hub, each ending with the script's reason; then the Job
      // controller removed the pod.
      expect(retrying, 'the Job’s pod seen between two tries').toBeDefined();
      excerpt('pod-failed', podRetried(retrying));
      expect(jobPods(US_WEST)).toEqual([]);

      const failedChild = await eventually(
        'the us-west-a100 child Failed',
        () => {
          const found = settled(child(US_WEST));
          return statusSays(found, { phase: 'Failed', reasons: { ArtifactReady: 'HydrationFailed' } }) ? found : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(child(US_WEST), 'status')) },
      );
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
      expect(messageOf(failed, 'ArtifactReady')).toMatch(
        new RegExp(`^${US_WEST}: hydration Job ${REMOTE_NAMES.job} on ${US_WEST} failed \\(attempt 1 of 3\\)`),
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
        expect(conditionTrue(job, 'Complete'), `the Job on ${WORKLOAD[cluster]}, completed by the Job controller`).toBe(true);
        expect(accessNotOwnedByJob(WORKLOAD[cluster], REMOTE_NAMES.job, REMOTE), `${cluster}'s access not owned by the Job`).toEqual([]);
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
      expectTokenOnlyInSecrets();
    }, 900_000);

    it('step 5: the engine pod starts on a GPU of the node, reads the model offline and serves; the operator fixes us-west-a100’s egress', async () => {
      const pod = await eventually('the engine pod Ready on us-east-a100', () => enginePods().find((p) => conditionTrue(p, 'Ready')), {
        timeoutMs: 300_000,
        describe: () => JSON.stringify(enginePods().map((p) => getIn(p, 'status'))),
      });
      expect(getString(pod, 'spec', 'nodeName')).toBe(REPLICA_NODE);
      excerpt('engine-pod', podShown(pod));
      // What the engine read, in its own words: the staged snapshot, offline, every file as the hub has it.
      const files = await engineFiles(pod);
      expect(getString(files, 'snapshot')).toBe(snapshotDir(CACHE_MOUNT_PATH, HUB_WALKTHROUGH_REPO, hubRevision().commit));
      expect(getIn(files, 'hfHubOffline')).toBe('1');
      expect(readShas(files)).toEqual(HUB_FILE_SHAS);
      expect(asArray(getIn(files, 'devices'))).toHaveLength(1);
      // The page shows what it read and where from; each file's sha256 is checked above, the device varies by run.
      excerpt('engine-files', {
        ...pick(files, 'model', 'modelFrom', 'revision', 'revisionFrom', 'source', 'snapshot', 'hfHubCache', 'hfHubOffline', 'totalBytes'),
        files: asArray(getIn(files, 'files'))
          .filter(isObject)
          .map((f) => pick(f, 'path', 'size')),
      });

      const serving = await eventually(
        'the replica serving',
        () => {
          const found = settled(replica());
          return reasonOf(found, 'ModelReady') === 'Serving' && reasonOf(found, 'Ready') === 'Available' ? found : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replica(), 'status')) },
      );
      excerpt('replica-serving', conditions(serving));

      // The egress fixed; the weights held again, so step 6 can look at the next download in flight. Fixing the
      // cause changes nothing by itself: the failed Job stays (its pods' logs with it) for its TTL.
      await faults({ hold: true, refuse: false });
      expect(phases()[US_WEST]).toBe('Failed');
      expect(getString(read(WORKLOAD[US_WEST], 'job', REMOTE_NAMES.job, REMOTE), 'metadata', 'uid')).toBe(failedJobUid);
      expectTokenOnlyInSecrets();
    }, 900_000);

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
        'provider-kubernetes reporting the new Job, its pod at the held weights',
        () => {
          const found = composed(child(US_WEST)).get('hydrate');
          const remote = getObject(found, 'status', 'atProvider', 'manifest');
          const fresh = getString(remote, 'metadata', 'uid') !== failedJobUid;
          return fresh && getIn(remote, 'status', 'active') === 1 && getIn(remote, 'status', 'ready') === 1 ? found : undefined;
        },
        STEP_WAIT,
      );
      excerpt('job-recreated', objectStatus(recreated));

      // The new pod found the four files the first attempt finished on the claim, and waits for the weights.
      const partial = await eventually(
        'the cache Partial, us-west-a100 Hydrating at the weights',
        () => {
          const found = settled(cache());
          return atTheWeights(clusterEntry(found, US_WEST)) && reasonOf(found, 'ArtifactReady') === 'Partial' ? found : undefined;
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
    }, 600_000);

    it('step 7: the weights come again; the download completes: 3/3, Staged, the ModelCache Ready', async () => {
      await faults({ hold: false, refuse: false });
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
          return (
            tokenLeft(WORKLOAD[US_WEST], REMOTE_NAMES.authSecret, REMOTE) &&
            accessNotOwnedByJob(WORKLOAD[US_WEST], REMOTE_NAMES.job, REMOTE).length === 0
          );
        },
        STEP_WAIT,
      );
      // The files on us-west-a100's node, as its pod wrote them: the hub's.
      const { dir } = volumeOnNode(WORKLOAD[US_WEST], REMOTE_NAMES.pvc);
      const snapshot = snapshotDir(dir, HUB_WALKTHROUGH_REPO, hubRevision().commit);
      expect(Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(readFileSync(join(snapshot, f.path)))]))).toEqual(HUB_FILE_SHAS);
      expectTokenOnlyInSecrets();
    });

    it('docs/walkthrough.md shows what this run recorded', async () => {
      expect(
        await checkOrUpdate(DOC, excerpts),
        'run `UPDATE_DOCS=1 make e2e E2E=walkthrough` to refresh the excerpts, then read the story around them',
      ).toEqual([]);
    });
  },
);
