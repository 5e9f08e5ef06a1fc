// The failure paths on real pods (issue 28.4), on a plane with real nodes
// (`make e2e`): each one is a real hydration Job on a real node whose
// script meets a real fault from the plane's hub, and ends in the phase and
// condition docs/troubleshooting.md documents, with the words the pod itself
// reported (its progress annotation) and the Job the Job controller failed:
//
//   refused token   a gated repository refuses the token   → Failed, HydrationFailed, the hub's 401
//   corrupted file  the weights served with flipped bytes  → Failed, HydrationFailed, the sha256 named
//   claim too small the listing exceeds sizeGiB            → Failed, HydrationFailed, the size to ask for
//   cut connection  the weights cut off after 11 MiB, once → Ready: the download resumed (a Range request)
//   node restarted  the kubelet, then containerd, restarted mid-download → Ready: the same pod ran on,
//                   nothing downloaded twice, the same claim
//
// On a plane without nodes it is skipped.

import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, cacheNames, getIn, getString, hydrationName } from '#lib';
import type { JsonObject } from '#lib';
import { sha256, type Recorded } from '../support/fake-hub.js';
import { hub, removeStory, repoFolder, setFaults, snapshotDir, volumeOnNode, weightGets } from './hub/client.js';
import {
  HUB_FILES,
  HUB_GATED_REPO,
  HUB_LARGE_REPO,
  HUB_REPO,
  HUB_RESTART_REPO,
  HUB_RESUME_REPO,
  HUB_TOKEN,
  HUB_WEIGHTS,
  hubRevision,
} from './hub/repo.js';
import { REPO_ROOT } from '../support/server.js';
import {
  STATE_DIR,
  WORKLOAD_CLUSTERS,
  apply,
  condition,
  eventually,
  getObject,
  hfTokenSecret,
  inferenceCluster,
  kubectl,
  list,
  messageOf,
  reasonOf,
  statusSays,
  setInferenceClusterStatus,
  nodesPlane,
} from './plane.js';

const NAMESPACE = 'e2e-node-faults';
const COMMIT = hubRevision().commit;
/** Four runs of a failing pod (backoffLimit 3, the kubelet's 10 s, 20 s, 40 s back-off) and the Job controller. */
const WAIT = { timeoutMs: 300_000 };

interface Case {
  cache: string;
  cluster: (typeof WORKLOAD_CLUSTERS)[number];
  huggingFace: JsonObject;
}

const REFUSED: Case = {
  cache: 'refused',
  cluster: 'cluster-a',
  huggingFace: { repo: HUB_GATED_REPO, sizeGiB: 1, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } },
};
const CORRUPT: Case = { cache: 'corrupt', cluster: 'cluster-b', huggingFace: { repo: HUB_REPO, sizeGiB: 1 } };
const TOO_SMALL: Case = { cache: 'too-small', cluster: 'cluster-c', huggingFace: { repo: HUB_LARGE_REPO, sizeGiB: 1 } };
const RESUMED: Case = { cache: 'resumed', cluster: 'cluster-a', huggingFace: { repo: HUB_RESUME_REPO, sizeGiB: 1 } };
const RESTARTED: Case = { cache: 'restarted', cluster: 'cluster-c', huggingFace: { repo: HUB_RESTART_REPO, sizeGiB: 1 } };
/** `node.sh restart`: the daemon stops as systemctl restart stops it, its supervisor starts it again; done when the node is Ready. */
function restartOnNode(cluster: (typeof WORKLOAD_CLUSTERS)[number], daemon: 'kubelet' | 'containerd'): void {
  // node.sh's INDEX is the cluster's place in WORKLOAD_CLUSTERS; its API server's port is in the plane's kubeconfig for it.
  const index = WORKLOAD_CLUSTERS.indexOf(cluster);
  const port = /server: https:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(join(STATE_DIR, 'kubeconfigs', cluster), 'utf8'))?.[1];
  if (port === undefined) throw new Error(`no API server port in ${join(STATE_DIR, 'kubeconfigs', cluster)}`);
  const run = spawnSync('bash', ['test/e2e/control-plane/node.sh', 'restart', cluster, String(index), daemon], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, MODELPLANE_UP_DIR: STATE_DIR, NODE_API_PORT: port },
  });
  if (run.status !== 0) throw new Error(`node.sh restart ${cluster} ${daemon}: ${run.stderr}`);
}

const hydrationOf = (c: Case): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, c.cache, c.cluster), NAMESPACE);

/** A cache on one cluster: each cluster carries a label naming it. */
function cacheOn(c: Case): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: { name: c.cache, namespace: NAMESPACE },
    spec: {
      source: 'HuggingFace',
      huggingFace: c.huggingFace,
      clusterSelector: { matchLabels: { 'modelplane.ai/node-faults': c.cluster } },
    },
  };
}

/** The hydration once Failed (both of Crossplane's status writes: statusSays), and its Job as the Job controller left it. */
async function failed(c: Case): Promise<{ hydration: JsonObject; job: JsonObject | undefined }> {
  const job = cacheNames(NAMESPACE, c.cache).job;
  const hydration = await eventually(
    `${c.cache} Failed on ${c.cluster}`,
    () => {
      const found = hydrationOf(c);
      return statusSays(found, { phase: 'Failed', reasons: { ArtifactReady: 'HydrationFailed' } }) ? found : undefined;
    },
    {
      ...WAIT,
      describe: () =>
        JSON.stringify({
          hydration: getIn(hydrationOf(c), 'status'),
          job: getIn(getObject(c.cluster, 'job', job, REMOTE_NAMESPACE), 'status'),
          pods: list(c.cluster, 'pods', REMOTE_NAMESPACE, `job-name=${job}`).map((p) => getIn(p, 'status', 'containerStatuses')),
        }),
    },
  );
  return { hydration, job: getObject(c.cluster, 'job', job, REMOTE_NAMESPACE) };
}

/** The pod's own last report on its Job (hydrate.py's progress annotation). */
const reportOf = (job: JsonObject | undefined): JsonObject =>
  JSON.parse(getString(job, 'metadata', 'annotations', 'modelplane.ai/progress') ?? '{}') as JsonObject;

describe.skipIf(!nodesPlane('nodes-faults.e2e.ts'))('real pods on real nodes: the failure paths', () => {
  afterAll(async () => {
    await setFaults({});
    await removeStory(NAMESPACE, WORKLOAD_CLUSTERS);
  });

  it('fails a refused token, a corrupted file and a claim too small, each with the pod’s own words', async () => {
    await hub('reset', { method: 'POST' });
    // A revoked token (every token refused on the gated repository) and the weights served flipped (the public
    // repository's only: the stories beside this one download copies of their own).
    await setFaults({ refuseToken: true, corrupt: HUB_WEIGHTS, repo: HUB_REPO });
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    apply('control-plane', ...WORKLOAD_CLUSTERS.map((cluster) => inferenceCluster(cluster, { 'modelplane.ai/node-faults': cluster })));
    for (const cluster of WORKLOAD_CLUSTERS) {
      setInferenceClusterStatus(cluster, {
        providerConfigRef: { name: cluster },
        cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
      });
    }
    apply('control-plane', hfTokenSecret(NAMESPACE));
    apply('control-plane', cacheOn(REFUSED), cacheOn(CORRUPT), cacheOn(TOO_SMALL));

    const expected: [Case, RegExp][] = [
      [REFUSED, /401|GatedRepo/],
      [CORRUPT, new RegExp(`verification failed: ${HUB_WEIGHTS.replace('.', '\\.')}: sha256 [0-9a-f]{64}, the hub says [0-9a-f]{64}`)],
      [TOO_SMALL, /more than sizeGiB 1 holds; ask for at least \d+/],
    ];
    for (const [c, words] of expected) {
      const { hydration, job } = await failed(c);
      const message = messageOf(hydration, 'ArtifactReady') ?? '';
      expect(message, c.cache).toMatch(words);
      expect(message, c.cache).toContain(cacheNames(NAMESPACE, c.cache).job);
      expect(message, c.cache).not.toContain(HUB_TOKEN);
      // The pod said it (Failed, in the same words), and the Job controller failed the Job.
      const report = reportOf(job);
      expect(report['state'], c.cache).toBe('Failed');
      expect(getString(report, 'message'), c.cache).toMatch(words);
      expect(getString(condition(job, 'Failed') ?? {}, 'status'), c.cache).toBe('True');
      expect(getString(condition(job, 'Failed') ?? {}, 'reason'), c.cache).toBe('BackoffLimitExceeded');
    }
    // The claim too small was refused before any byte of it was asked for.
    const requests = (await hub('requests')) as Recorded[];
    expect(requests.filter((r) => r.url.startsWith(`/${HUB_LARGE_REPO}/resolve/`))).toEqual([]);
    // The bad copy is not left where an engine would read it: the marker was never written.
    expect(getIn(hydrationOf(CORRUPT), 'status', 'verified')).not.toBe(true);
    const staged = readdirSync(volumeOnNode(CORRUPT.cluster, cacheNames(NAMESPACE, CORRUPT.cache).pvc).dir);
    expect(staged).toContain(repoFolder(HUB_REPO));
    expect(staged.filter((name) => name.startsWith('.modelplane-hub-hydrated-'))).toEqual([]);
    // Gone before the next cases, so no second attempt of theirs downloads beside them.
    kubectl('control-plane', ['delete', 'modelcache', REFUSED.cache, CORRUPT.cache, TOO_SMALL.cache, '-n', NAMESPACE, '--wait=false']);
    await eventually('the failed caches gone', () => list('control-plane', 'modelcachehydrations', NAMESPACE).length === 0, {
      timeoutMs: 180_000,
    });
  });

  it('resumes a cut connection and stages the model whole', async () => {
    await hub('reset', { method: 'POST' });
    // After 11 MiB: huggingface_hub writes what it reads in 10 MiB chunks, so a cut before the first
    // chunk is written leaves nothing to resume from (it starts again from byte 0, measured here).
    await setFaults({ repo: HUB_RESUME_REPO, cut: { path: HUB_WEIGHTS, after: 11 * 1024 * 1024 } });
    apply('control-plane', cacheOn(RESUMED));
    const hydration = await eventually(
      `${RESUMED.cache} Ready on ${RESUMED.cluster}`,
      () => {
        const found = hydrationOf(RESUMED);
        return reasonOf(found, 'ArtifactReady') === 'Staged' ? found : undefined;
      },
      { ...WAIT, describe: () => JSON.stringify(getIn(hydrationOf(RESUMED), 'status')) },
    );
    expect(getIn(hydration, 'status', 'verified')).toBe(true);
    expect(getIn(hydration, 'status', 'commit')).toBe(COMMIT);
    const weights = await weightGets(HUB_RESUME_REPO, COMMIT);
    // The first GET was cut; the next asked for the rest, from the first 10 MiB chunk it had written.
    expect(weights.length).toBeGreaterThanOrEqual(2);
    expect(weights.map((r) => r.range ?? 'whole')).toContain(`bytes=${10 * 1024 * 1024}-`);
    // What landed on the node's disk is the hub's file, byte for byte.
    const { dir } = volumeOnNode(RESUMED.cluster, cacheNames(NAMESPACE, RESUMED.cache).pvc);
    const file = join(snapshotDir(dir, HUB_RESUME_REPO, COMMIT), HUB_WEIGHTS);
    expect(sha256(readFileSync(file))).toBe(sha256(HUB_FILES.find((f) => f.path === HUB_WEIGHTS)!.content));
  });

  it('loses nothing when the node’s kubelet and containerd restart mid-download', async () => {
    await hub('reset', { method: 'POST' });
    // The weights trickle (16 KiB every 100 ms: about 77 s), so both restarts land mid-download.
    await setFaults({ repo: HUB_RESTART_REPO, slow: { path: HUB_WEIGHTS, delayMs: 100 } });
    apply('control-plane', cacheOn(RESTARTED));
    const names = cacheNames(NAMESPACE, RESTARTED.cache);
    const weightsGets = (): Promise<Recorded[]> => weightGets(HUB_RESTART_REPO, COMMIT);
    await eventually('the weights downloading on cluster-c', async () => (await weightsGets()).length === 1, WAIT);
    const podBefore = list(RESTARTED.cluster, 'pods', REMOTE_NAMESPACE, `job-name=${names.job}`);
    const pvcBefore = getString(getObject(RESTARTED.cluster, 'pvc', names.pvc, REMOTE_NAMESPACE), 'metadata', 'uid');
    expect(podBefore).toHaveLength(1);

    restartOnNode(RESTARTED.cluster, 'kubelet');
    restartOnNode(RESTARTED.cluster, 'containerd');

    await eventually(
      `${RESTARTED.cache} Ready on ${RESTARTED.cluster}`,
      () => reasonOf(hydrationOf(RESTARTED), 'ArtifactReady') === 'Staged',
      { ...WAIT, describe: () => JSON.stringify(getIn(hydrationOf(RESTARTED), 'status')) },
    );
    // The same pod ran through both restarts (its container's shim is its own), downloading once, onto the same claim.
    const job = getObject(RESTARTED.cluster, 'job', names.job, REMOTE_NAMESPACE);
    expect(getIn(job, 'status', 'succeeded')).toBe(1);
    expect(getIn(job, 'status', 'failed') ?? 0).toBe(0);
    const pods = list(RESTARTED.cluster, 'pods', REMOTE_NAMESPACE, `job-name=${names.job}`);
    expect(pods.map((p) => getString(p, 'metadata', 'uid'))).toEqual(podBefore.map((p) => getString(p, 'metadata', 'uid')));
    expect(getIn(asArray(getIn(pods[0], 'status', 'containerStatuses'))[0], 'restartCount')).toBe(0);
    expect(await weightsGets()).toHaveLength(1);
    expect(getString(getObject(RESTARTED.cluster, 'pvc', names.pvc, REMOTE_NAMESPACE), 'metadata', 'uid')).toBe(pvcBefore);
  });
});
