// Real pods (issue 28): on a plane whose workload clusters have real nodes
// (`make e2e E2E=nodes`, docs/nodes.md), a gated
// HuggingFace ModelCache on two clusters of three is staged by the Jobs'
// own pods, with no stand-in: the scheduler places them, the kubelet runs
// the Modelplane hydration image from the plane's registry, the script
// downloads from the plane's hub (the hfEndpoint setting) with the token,
// writes the files and the marker on a claim local-path-provisioner bound,
// and patches its progress onto its Job with its ServiceAccount; the Job
// controller completes the Job. workload-kubelet.sh is never called here.
//
// On a plane without nodes it is skipped (the other e2e files play that plane).

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HYDRATION_IMAGE,
  HYDRATION_MOUNT_PATH,
  REMOTE_NAMESPACE,
  asArray,
  cacheNames,
  getIn,
  getString,
  hydrationName,
  isObject,
} from '#lib';
import type { JsonObject } from '#lib';
import { artifactOf, hubMarker } from '../../functions/compose-model-cache-hydration/src/huggingface.js';
import { sha256, type Recorded } from '../support/fake-hub.js';
import { cacheStaged, hub, removeStory, snapshotDir, volumeOnNode, weightGets } from './hub/client.js';
import { HUB_FILES, HUB_GATED_REPO, HUB_TOKEN, hubRevision } from './hub/repo.js';
import {
  E2E_HF_TOKEN,
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
  names,
  reasonOf,
  setInferenceClusterStatus,
  tokenLeft,
  type ApiServer,
  nodesPlane,
} from './plane.js';

const NAMESPACE = 'e2e-nodes';
const CACHE = 'tiny';
const TIER = 'modelplane.ai/tier';
const STAGED = ['cluster-a', 'cluster-b'] as const;
const REMOTE = REMOTE_NAMESPACE;
const COMMIT = hubRevision().commit;
const TOTAL_BYTES = HUB_FILES.reduce((sum, file) => sum + file.content.length, 0);
const SOURCE = { repo: HUB_GATED_REPO, revision: 'main', authSecret: { name: 'hf-token', key: 'HF_TOKEN' } };
const remote = cacheNames(NAMESPACE, CACHE);
/** A pod's start, a download and the Job controller, on two shared cores: minutes, not seconds. */
const WAIT = { timeoutMs: 300_000 };

const hydrationOf = (cluster: string): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, cluster), NAMESPACE);

/** Pods of a Job on a workload cluster (the Job controller labels them job-name). */
const podsOf = (cluster: ApiServer, job: string): JsonObject[] => list(cluster, 'pods', REMOTE, `job-name=${job}`);

/** An object with its managedFields (who wrote what), which kubectl leaves out unless asked. */
function withManagedFields(cluster: ApiServer, resource: string, name: string): JsonObject | undefined {
  const result = kubectl(cluster, ['get', resource, name, '-n', REMOTE, '-o', 'json', '--show-managed-fields']);
  return result.code === 0 ? (JSON.parse(result.stdout) as JsonObject) : undefined;
}

/** The managedFields entries of an object that set a field path (dot-separated, as f:... keys). */
function managersOf(object: JsonObject | undefined, ...path: string[]): JsonObject[] {
  return asArray(getIn(object, 'metadata', 'managedFields'))
    .filter(isObject)
    .filter((entry) => getIn(entry, 'fieldsV1', ...path.map((p) => `f:${p}`)) !== undefined);
}

describe.skipIf(!nodesPlane('nodes.e2e.ts'))('real pods on real nodes: a gated HuggingFace cache staged by its own Jobs', () => {
  /** What each cluster's Job and pod showed when its Job completed (the TTL removes them three minutes later). */
  const seen: Record<string, { job: JsonObject; pods: JsonObject[] }> = {};

  afterAll(() => removeStory(NAMESPACE, WORKLOAD_CLUSTERS));

  it('has a Ready node on every workload cluster, and the default ReadWriteMany class', () => {
    for (const cluster of WORKLOAD_CLUSTERS) {
      const node = getObject(cluster, 'node', `${cluster}-node`);
      expect(getString(condition(node, 'Ready') ?? {}, 'status'), `${cluster}-node Ready`).toBe('True');
      const storageClass = getObject(cluster, 'storageclass', 'modelplane-rwx');
      expect(getString(storageClass, 'provisioner')).toBe('rancher.io/local-path');
    }
  });

  it('stages the cache on the two selected clusters with real Job pods, and nothing on the third', async () => {
    await hub('reset', { method: 'POST' });
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    apply(
      'control-plane',
      inferenceCluster('cluster-a', { [TIER]: 'nodes' }),
      inferenceCluster('cluster-b', { [TIER]: 'nodes' }),
      inferenceCluster('cluster-c', { [TIER]: 'elsewhere' }),
    );
    for (const cluster of WORKLOAD_CLUSTERS) {
      setInferenceClusterStatus(cluster, {
        providerConfigRef: { name: cluster },
        cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
      });
    }
    apply('control-plane', hfTokenSecret(NAMESPACE));
    // No sizeGiB: a sizing Job's pod reads the hub's listing first, and the claim is sized from its report.
    apply('control-plane', {
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelCache',
      metadata: { name: CACHE, namespace: NAMESPACE },
      spec: { source: 'HuggingFace', huggingFace: SOURCE, clusterSelector: { matchLabels: { [TIER]: 'nodes' } } },
    });

    for (const cluster of STAGED) {
      const job = await eventually(
        `the hydration Job on ${cluster} Complete, by the Job controller`,
        () => {
          const found = withManagedFields(cluster, 'job', remote.job);
          return getString(condition(found, 'Complete') ?? {}, 'status') === 'True' ? found : undefined;
        },
        {
          ...WAIT,
          describe: () =>
            JSON.stringify({
              job: getIn(getObject(cluster, 'job', remote.job, REMOTE), 'status'),
              pods: podsOf(cluster, remote.job).map((p) => getIn(p, 'status')),
              hydration: getIn(hydrationOf(cluster), 'status', 'conditions'),
            }),
        },
      );
      seen[cluster] = { job, pods: podsOf(cluster, remote.job) };
    }
    // Nothing of this cache (by its names there): another story's objects on cluster-c may outlive it by a Job TTL.
    for (const [kind, name] of [
      ['job', remote.job],
      ['job', remote.sizer],
      ['pvc', remote.pvc],
      ['secret', remote.authSecret],
    ] as const)
      expect(getObject('cluster-c', kind, name, REMOTE), `${kind} ${name} on cluster-c`).toBeUndefined();
  });

  it('ran each Job as a real pod: scheduled on the cluster’s node, the hydration image, Succeeded', () => {
    for (const cluster of STAGED) {
      const { job, pods } = seen[cluster]!;
      expect(getIn(job, 'status', 'succeeded')).toBe(1);
      // The Job's status is the Job controller's (kube-controller-manager), not a stand-in's.
      expect(managersOf(job, 'status').map((m) => getString(m, 'manager'))).toContain('kube-controller-manager');
      const succeeded = pods.filter((pod) => getIn(pod, 'status', 'phase') === 'Succeeded');
      expect(succeeded.length, `a Succeeded pod of ${remote.job} on ${cluster}`).toBeGreaterThanOrEqual(1);
      const pod = succeeded[0]!;
      expect(getIn(pod, 'spec', 'nodeName')).toBe(`${cluster}-node`);
      expect(getIn(pod, 'spec', 'serviceAccountName')).toBe(remote.job);
      const [status] = asArray(getIn(pod, 'status', 'containerStatuses')).filter(isObject);
      expect(getString(status, 'image')).toBe(HYDRATION_IMAGE);
      expect(getIn(status, 'state', 'terminated', 'exitCode')).toBe(0);
    }
  });

  it("reported its progress from inside the pod, with the pod's own ServiceAccount, and the hydration shows it", async () => {
    for (const cluster of STAGED) {
      const { job } = seen[cluster]!;
      const report = JSON.parse(getString(job, 'metadata', 'annotations', 'modelplane.ai/progress') ?? '{}') as JsonObject;
      expect(report).toMatchObject({
        state: 'Verified',
        commit: COMMIT,
        filesTotal: HUB_FILES.length,
        filesDone: HUB_FILES.length,
        bytesTotal: TOTAL_BYTES,
        bytesDone: TOTAL_BYTES,
      });
      // Python's urllib (the script's reporter) wrote the annotation: no one else does on a node plane.
      const writers = managersOf(job, 'metadata', 'annotations', 'modelplane.ai/progress').map((m) => getString(m, 'manager') ?? '');
      expect(writers.some((manager) => manager.startsWith('Python-urllib'))).toBe(true);
      const hydration = await eventually(
        `the ModelCacheHydration for ${cluster} Ready`,
        () => {
          const found = hydrationOf(cluster);
          return reasonOf(found, 'ArtifactReady') === 'Staged' ? found : undefined;
        },
        WAIT,
      );
      expect(getIn(hydration, 'status', 'progress')).toMatchObject({
        percent: 100,
        bytesDone: TOTAL_BYTES,
        bytesTotal: TOTAL_BYTES,
        filesDone: HUB_FILES.length,
        filesTotal: HUB_FILES.length,
      });
      expect(getIn(hydration, 'status', 'verified')).toBe(true);
      expect(getIn(hydration, 'status', 'commit')).toBe(COMMIT);
      // Sized by the sizing Job's pod from the hub's listing: 12 MiB plus the margin is 2 GiB.
      expect(getIn(hydration, 'status', 'sizeGiB')).toBe(2);
    }
  });

  it('downloaded from the hub with the token, through hfEndpoint', async () => {
    const requests = (await hub('requests')) as Recorded[];
    const weights = await weightGets(HUB_GATED_REPO, COMMIT);
    // One download per cluster (a retried pod would download again: at least two).
    expect(weights.length).toBeGreaterThanOrEqual(STAGED.length);
    expect(requests.filter((r) => r.url.startsWith(`/api/models/${HUB_GATED_REPO}`) || r.url.includes('/resolve/'))).not.toHaveLength(0);
    for (const request of requests.filter((r) => r.url.includes(HUB_GATED_REPO))) {
      expect(request.authorization, `${request.method} ${request.url}`).toBe(`Bearer ${HUB_TOKEN}`);
    }
    expect(HUB_TOKEN).toBe(E2E_HF_TOKEN);
  });

  it("wrote every file and the marker on the claim, in the hub layout, on the node's disk", () => {
    const marker = hubMarker(artifactOf(SOURCE)).slice(HYDRATION_MOUNT_PATH.length + 1);
    for (const cluster of STAGED) {
      const { pvc, pv, dir } = volumeOnNode(cluster, remote.pvc);
      expect(getIn(pvc, 'status', 'phase')).toBe('Bound');
      expect(getString(pv, 'metadata', 'annotations', 'pv.kubernetes.io/provisioned-by')).toBe('rancher.io/local-path');
      expect(dir.startsWith(join(STATE_DIR, 'nodes', cluster, 'volumes'))).toBe(true);
      const snapshot = snapshotDir(dir, HUB_GATED_REPO, COMMIT);
      expect(readdirSync(snapshot).sort()).toEqual(HUB_FILES.map((f) => f.path).sort());
      for (const file of HUB_FILES) {
        expect(sha256(readFileSync(join(snapshot, file.path))), `${cluster}: ${file.path}`).toBe(sha256(file.content));
      }
      const recorded = JSON.parse(readFileSync(join(dir, marker), 'utf8')) as JsonObject;
      expect(recorded).toMatchObject({ state: 'Verified', commit: COMMIT, bytesDone: TOTAL_BYTES, filesDone: HUB_FILES.length });
    }
  });

  it('took the token off both clusters, and the ModelCache is Ready on each', async () => {
    for (const cluster of STAGED) {
      // Its Secret emptied and handed to the finished Job, to go with it (release.ts).
      await eventually(`the token gone from ${cluster}`, () => tokenLeft(cluster, remote.authSecret, REMOTE), WAIT);
    }
    const cache = await cacheStaged(NAMESPACE, CACHE, WAIT);
    expect(getIn(cache, 'status', 'summary', 'ready')).toBe('2/2');
    const entries = asArray(getIn(cache, 'status', 'clusters')).filter(isObject);
    expect(names(entries.map((e) => ({ metadata: { name: e['name'] ?? '' } })))).toEqual([...STAGED]);
    for (const entry of entries) {
      expect(entry['phase']).toBe('Ready');
      expect(asArray(getIn(entry, 'mount', 'env'))).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: COMMIT });
    }
  });
});
