// HuggingFace staging you can watch and trust (docs/walkthrough-progress.md),
// on the live control plane of `make up`: one ModelCache over two clusters
// going 0% → 37% → 100% → verified → Ready, each step read back from what the
// API servers hold, and the page's YAML blocks recorded from them.
//
// The download script (hydrate.py) can't run here: the workload clusters are
// bare API servers, with no kubelet to start its pod. The workload kubelet
// stand-in writes its report instead (`report-progress`), exactly as the
// script writes it: a JSON merge patch of the annotation modelplane.ai/progress
// on its own Job, made as the Job's ServiceAccount, so the Role the function
// composed is what allows it. Everything after that is real: provider-kubernetes
// observes the Job into its Object, compose-model-cache-hydration reads the
// report into the child's status, compose-model-cache rolls it up.
// (functions/compose-model-cache-hydration/test/hydrate-script.test.ts runs the
// script itself, under Python with huggingface_hub, against a fake hub.)

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, cacheNames, getIn, getString, hydrationName, isObject, type JsonObject, type JsonValue } from '#lib';
import { REPO_ROOT } from '../support/server.js';
import { asShown, checkOrUpdate } from './excerpts.js';
import {
  clusterEntry,
  type ApiServer,
  eventually,
  getObject as read,
  kubectl,
  kubectlOk,
  kubelet,
  list,
  accessNotOwnedByJob,
  pick,
  reasonOf,
  setInferenceClusterStatus,
  settled,
  standInPlane,
} from './plane.js';

const DOC = join(REPO_ROOT, 'docs', 'walkthrough-progress.md');
const NAMESPACE = 'ml-progress';
const CACHE = 'qwen';
const REMOTE = REMOTE_NAMESPACE;
/** Two InferenceClusters of this story, each reporting a workload cluster of the plane as its provider config. */
const WORKLOAD = { 'progress-a': 'cluster-a', 'progress-b': 'cluster-b' } as const;
type Cluster = keyof typeof WORKLOAD;
const CLUSTERS = Object.keys(WORKLOAD) as Cluster[];
const OBJECTS = 'objects.kubernetes.m.crossplane.io';
const STEP_WAIT = { timeoutMs: 240_000 };
const REMOTE_NAMES = cacheNames(NAMESPACE, CACHE);
/** What main resolved to on the hub when the script listed it (a made-up commit: no hub is reached here). */
const COMMIT = 'c1dcf1f5c9e1f4b1b9a2e7c3f0d4a6b8e2c5d7f9';
/** Qwen/Qwen3-0.6B's selected files, as the listing would total them. */
const TOTAL = 1519087626;
const FILES = 10;

const excerpts = new Map<string, unknown>();
function excerpt(name: string, value: unknown): void {
  if (excerpts.has(name)) throw new Error(`excerpt ${name} recorded twice`);
  excerpts.set(name, JSON.parse(JSON.stringify(asShown(value))) as unknown);
}

const CACHE_XR: JsonObject = {
  apiVersion: 'modelplane.ai/v1alpha1',
  kind: 'ModelCache',
  metadata: { name: CACHE, namespace: NAMESPACE },
  spec: {
    source: 'HuggingFace',
    huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main', sizeGiB: 20, include: ['*.safetensors', '*.json'] },
    clusterSelector: { matchLabels: { 'modelplane.ai/tier': 'progress-demo' } },
  },
};

function applyServerSide(server: ApiServer, object: JsonObject): void {
  kubectlOk(server, ['apply', '--server-side', '--field-manager=progress-walkthrough', '-f', '-'], JSON.stringify(object));
}

const cache = (): JsonObject | undefined => read('control-plane', 'modelcache', CACHE, NAMESPACE);
const child = (cluster: Cluster): JsonObject | undefined =>
  read('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, cluster), NAMESPACE);

/** The Objects a child composed, by composition resource name. */
function composedKeys(xr: JsonObject | undefined): string[] {
  const owner = getString(xr, 'metadata', 'name');
  return list('control-plane', OBJECTS, NAMESPACE)
    .filter((object) => asArray(getIn(object, 'metadata', 'ownerReferences')).some((ref) => isObject(ref) && ref['name'] === owner))
    .map((object) => getString(object, 'metadata', 'annotations', 'crossplane.io/composition-resource-name') ?? '')
    .sort();
}

/** `kubectl get` as a person types it, without the AGE column (a moment, different on every run). */
function table(resource: string): string[] {
  const lines = kubectlOk('control-plane', ['get', resource, '-n', NAMESPACE]).trimEnd().split('\n');
  return lines.map((line) => line.replace(/\s+\S+\s*$/, '').trimEnd());
}

/** The report the script writes, for this story's numbers. */
function report(fields: JsonObject): string {
  const base: JsonObject = {
    bytesDone: 0,
    bytesTotal: TOTAL,
    commit: COMMIT,
    filesDone: 0,
    filesTotal: FILES,
    requiredGiB: 3,
    state: 'Downloading',
  };
  return JSON.stringify({ ...base, ...fields });
}

/** The stand-in reports on both clusters' Jobs (retrying until provider-kubernetes has created the Job's Role and binding). */
async function reportEverywhere(value: string): Promise<void> {
  for (const cluster of CLUSTERS) {
    await eventually(
      `the report written on ${WORKLOAD[cluster]} as the Job's ServiceAccount`,
      () => kubelet(WORKLOAD[cluster], 'report-progress', REMOTE_NAMES.job, value),
      STEP_WAIT,
    );
  }
}

/** Wait for the cache's rolled-up progress to read `summary`, every child having reported it. */
async function cacheAt(summary: string, each: (entry: JsonObject) => boolean): Promise<JsonObject> {
  return eventually(
    `the cache at ${summary}`,
    () => {
      const found = settled(cache());
      const entries = CLUSTERS.map((cluster) => clusterEntry(found, cluster));
      return getIn(found, 'status', 'summary', 'progress') === summary && entries.every((e) => e !== undefined && each(e))
        ? found
        : undefined;
    },
    { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
  );
}

function leftovers(): string[] {
  return CLUSTERS.flatMap((cluster) =>
    list(WORKLOAD[cluster], 'jobs,persistentvolumeclaims,serviceaccounts,roles,rolebindings', REMOTE)
      .map((object) => `${WORKLOAD[cluster]}: ${getString(object, 'kind')!}/${getString(object, 'metadata', 'name')!}`)
      .filter((entry) => entry.includes(`modelcache-${NAMESPACE}-${CACHE}-`)),
  );
}

const STAND_IN = standInPlane('progress.e2e.ts');

beforeAll(() => {
  if (!STAND_IN) return;
  applyServerSide('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  for (const [name, workload] of Object.entries(WORKLOAD)) {
    applyServerSide('control-plane', {
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'InferenceCluster',
      metadata: { name, labels: { 'modelplane.ai/tier': 'progress-demo' } },
      spec: { cluster: { gke: { region: 'us-east4' } } },
    });
    setInferenceClusterStatus(name, { providerConfigRef: { name: workload }, cache: { storageClassName: 'modelplane-rwx' } });
  }
}, 300_000);

afterAll(async () => {
  if (!STAND_IN) return;
  kubectl('control-plane', ['delete', 'modelcache', CACHE, '-n', NAMESPACE, '--ignore-not-found', '--wait=false']);
  await eventually(
    'every XR and Object of the story gone',
    () =>
      cache() === undefined &&
      list('control-plane', `modelcachehydrations,${OBJECTS}`, NAMESPACE).filter((o) =>
        (getString(o, 'metadata', 'name') ?? '').startsWith(`modelcache-${NAMESPACE}-${CACHE}-`),
      ).length === 0,
    { timeoutMs: 240_000 },
  );
  // A Job is orphaned, never deleted (its TTL removes it once finished); the next file needn't wait for that.
  for (const cluster of CLUSTERS) kubectl(WORKLOAD[cluster], ['delete', 'job', REMOTE_NAMES.job, '-n', REMOTE, '--ignore-not-found']);
  kubectl('control-plane', ['delete', 'inferenceclusters', ...CLUSTERS, '--ignore-not-found']);
  kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--wait=false']);
  await eventually('nothing of the story left on the workload clusters', () => leftovers().length === 0, {
    timeoutMs: 120_000,
    describe: () => leftovers().join(', '),
  });
}, 600_000);

describe.skipIf(!STAND_IN)('progress on the live plane: 0% → 37% → 100% → verified → Ready on two clusters', () => {
  it('step 1: the cache is applied; each cluster gets the claim, the download Job and the Job’s report access', async () => {
    applyServerSide('control-plane', CACHE_XR);
    for (const cluster of CLUSTERS) {
      await eventually(
        `${cluster}'s child composing the claim, the Job and its ServiceAccount, Role and RoleBinding`,
        () => composedKeys(child(cluster)).join() === 'hydrate,hydrate-account,hydrate-binding,hydrate-role,pvc',
        STEP_WAIT,
      );
    }
    const role = await eventually('the Role on cluster-a', () => read(WORKLOAD['progress-a'], 'role', REMOTE_NAMES.job, REMOTE), STEP_WAIT);
    excerpt('role', { kind: 'Role', metadata: { name: getString(role, 'metadata', 'name')! }, rules: getIn(role, 'rules') as JsonValue });
    for (const cluster of CLUSTERS) kubelet(WORKLOAD[cluster], 'bind-claims');
    const hydrating = await eventually(
      'both clusters Hydrating',
      () => {
        const found = settled(cache());
        return CLUSTERS.every((c) => getString(clusterEntry(found, c), 'phase') === 'Hydrating') ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    expect(getIn(hydrating, 'status', 'summary', 'progress')).toBeUndefined();
  });

  it('step 2: the downloads start and report 0%', async () => {
    await reportEverywhere(report({}));
    const found = await cacheAt('0%', (e) => getIn(e, 'progress', 'percent') === 0);
    excerpt('cache-0', { status: pick(getIn(found, 'status'), 'summary') });
    // The summary also counts the clusters by phase and the shards (one for two clusters).
    expect(getIn(found, 'status', 'summary')).toMatchObject({
      clusters: 2,
      shards: 1,
      failed: 0,
      ready: '0/2',
      progress: '0%',
      bytesDone: 0,
      bytesTotal: 2 * TOTAL,
      commit: COMMIT,
    });
  });

  it('step 3: 37% on each cluster, per cluster and overall, in the PROGRESS column', async () => {
    const done = Math.floor(TOTAL * 0.372);
    await reportEverywhere(report({ bytesDone: done, filesDone: 3 }));
    const found = await cacheAt('37%', (e) => getIn(e, 'progress', 'percent') === 37);
    excerpt('cache-37', { status: { summary: getIn(found, 'status', 'summary'), clusters: CLUSTERS.map((c) => clusterEntry(found, c)) } });
    excerpt('get-37', { modelcaches: table('modelcaches'), modelcachehydrations: table('modelcachehydrations') });
    expect(getString(clusterEntry(found, 'progress-a'), 'message')).toBe(
      `downloading Qwen/Qwen3-0.6B@main include=["*.json","*.safetensors"] to PVC ${REMOTE_NAMES.pvc} on progress-a: 37% (538.9 MiB of 1.4 GiB, 3 of 10 files)`,
    );
  });

  it('step 4: 100% downloaded, each file being checked against the hub', async () => {
    await reportEverywhere(report({ bytesDone: TOTAL, filesDone: FILES, state: 'Verifying' }));
    const found = await cacheAt('100%', (e) => getIn(e, 'progress', 'summary') === '100%, verifying');
    excerpt('cache-100', {
      status: {
        summary: getIn(found, 'status', 'summary'),
        clusters: CLUSTERS.map((c) => pick(clusterEntry(found, c), 'name', 'phase', 'message')),
      },
    });
    expect(CLUSTERS.map((c) => getString(clusterEntry(found, c), 'phase'))).toEqual(['Hydrating', 'Hydrating']);
  });

  it('step 5: verified, the Jobs complete: Ready on both, the mount pinned to the commit', async () => {
    await reportEverywhere(report({ bytesDone: TOTAL, filesDone: FILES, state: 'Verified' }));
    for (const cluster of CLUSTERS) kubelet(WORKLOAD[cluster], 'complete-job', REMOTE_NAMES.job);
    const found = await eventually(
      'the cache Staged and Ready, verified',
      () => {
        const ready = settled(cache());
        return reasonOf(ready, 'ArtifactReady') === 'Staged' &&
          reasonOf(ready, 'Ready') === 'Available' &&
          getIn(ready, 'status', 'summary', 'progress') === '100%, verified'
          ? ready
          : undefined;
      },
      { ...STEP_WAIT, describe: () => JSON.stringify(getIn(cache(), 'status')) },
    );
    const entry = clusterEntry(found, 'progress-a');
    expect(pick(entry, 'phase', 'verified', 'commit')).toEqual({ phase: 'Ready', verified: true, commit: COMMIT });
    expect(getIn(entry, 'mount', 'env')).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: COMMIT });
    excerpt('cache-ready', {
      status: {
        summary: getIn(found, 'status', 'summary'),
        clusters: CLUSTERS.map((c) => {
          const e = clusterEntry(found, c);
          return {
            ...pick(e, 'name', 'phase', 'progress', 'verified', 'commit', 'sizeGiB'),
            mount: { env: getIn(e, 'mount', 'env') as JsonValue },
          };
        }),
        conditions: asArray(getIn(found, 'status', 'conditions')).filter(
          (c) => isObject(c) && c['type'] === 'ArtifactReady',
        ) as JsonObject[],
      },
    });
    excerpt('get-ready', { modelcaches: table('modelcaches'), modelcachehydrations: table('modelcachehydrations') });
    // Once Ready, the Job's report access is handed to the finished Job and goes with it (its TTL): the
    // child composes only its claim, and the cluster shows the ServiceAccount, Role and RoleBinding owned by the Job.
    for (const cluster of CLUSTERS) {
      await eventually(`${cluster}'s child composing only its claim`, () => composedKeys(child(cluster)).join() === 'pvc', STEP_WAIT);
      // The Job finished moments ago: its TTL (180 s) has not removed it yet.
      await eventually(
        `the Job's report access on ${WORKLOAD[cluster]} owned by the Job`,
        () => accessNotOwnedByJob(WORKLOAD[cluster], REMOTE_NAMES.job, REMOTE).length === 0,
        { ...STEP_WAIT, describe: () => accessNotOwnedByJob(WORKLOAD[cluster], REMOTE_NAMES.job, REMOTE).join(', ') },
      );
    }
  });

  it('docs/walkthrough-progress.md shows what this run recorded', async () => {
    expect(
      await checkOrUpdate(DOC, excerpts),
      'run this file with UPDATE_DOCS=1 to refresh the excerpts, then read the story around them',
    ).toEqual([]);
  });
});
