// An engine pod on a real node (issue 28.4), on a plane with real nodes
// (`make e2e`): a HuggingFace ModelCache staged on cluster-a by its real
// Job, and a ModelReplica there whose engine is the vLLM stand-in
// (images/engine/), asking for one GPU of the DeviceClass gpu.example.com.
// Its claim is allocated by the real scheduler from the ResourceSlice the
// node's dra-example-driver publishes, and prepared by that driver through
// CDI; the pod lands on the node's pool, starts only once the cache is Ready
// there, loads the model offline through the mount contract (HF_HUB_OFFLINE=1,
// snapshot_download(local_files_only=True)) and serves /health; its /files
// says what it read (checked against the hub) and which device it was given.
// Then the cluster leaves the cache's selector and comes back (issue 28.4,
// nothing that exists is lost): the replica keeps it, the running engine pod,
// its claim and the files on the node's disk stay as they were, and selecting
// it again downloads nothing.
//
// On a plane without nodes it is skipped.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_MOUNT_PATH, REMOTE_NAMESPACE, asArray, cacheNames, getIn, getString, hydrationName, isObject } from '#lib';
import type { JsonObject } from '#lib';
import { sha256 } from '../support/fake-hub.js';
import { hub, setFaults, snapshotDir, volumeOnNode, weightGets } from './hub/client.js';
import {
  ENGINE_TEST_TIMEOUT,
  ENGINE_WAIT as WAIT,
  FAKE_GPU_CLASS,
  HUB_FILE_SHAS,
  VLLM_ARGS,
  closeStory,
  engineFiles,
  hubCache,
  nodeOf,
  openStory,
  readShas,
  replicaOf,
  servingPod,
  standinPods,
  standinReplica,
} from './hub/engine.js';
import { HUB_REPO, HUB_WEIGHTS, hubRevision } from './hub/repo.js';
import { apply, clusterEntry, condition, engineDeployments, eventually, getObject, kubectlOk, reasonOf, nodesPlane } from './plane.js';

const NAMESPACE = 'e2e-node-serving';
const CACHE = 'served';
const REPLICA = 'served-chat';
const CLUSTER = 'cluster-a';
const COMMIT = hubRevision().commit;
const LABEL = 'modelplane.ai/node-serving';
const CLAIM = cacheNames(NAMESPACE, CACHE).pvc;

/** The cache's status entry for the cluster. */
const entry = (): JsonObject | undefined => clusterEntry(getObject('control-plane', 'modelcache', CACHE, NAMESPACE), CLUSTER);

/** The hub's GETs of the weights so far (a download asks for them at least once). */
const weightGetCount = async (): Promise<number> => (await weightGets(HUB_REPO, COMMIT)).length;

const hydration = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, CLUSTER), NAMESPACE);

/** What must outlive the cluster leaving the selector and coming back. */
interface Existing {
  claim: string;
  pods: { uid?: string; restarts: number[]; ready?: string }[];
  files: Record<string, string>;
}

/** The claim's uid, the engine pods' uids, restarts and readiness, and each staged file's sha256 on the node's disk. */
function whatExists(): Existing {
  const { pvc, dir } = volumeOnNode(CLUSTER, CLAIM);
  const snapshot = snapshotDir(dir, HUB_REPO, COMMIT);
  const pods = standinPods(CLUSTER, REPLICA).map((pod) => ({
    uid: getString(pod, 'metadata', 'uid'),
    restarts: asArray(getIn(pod, 'status', 'containerStatuses'))
      .filter(isObject)
      .map((c) => Number(c['restartCount'])),
    ready: getString(condition(pod, 'Ready') ?? {}, 'status'),
  }));
  const files = Object.fromEntries(readdirSync(snapshot).map((file) => [file, sha256(readFileSync(join(snapshot, file)))]));
  return { claim: getString(pvc, 'metadata', 'uid') ?? 'gone', pods, files };
}

describe.skipIf(!nodesPlane('nodes-serving.e2e.ts'))(
  'real pods on real nodes: an engine with a DRA device reads the staged model through the mount contract',
  () => {
    afterAll(async () => {
      await setFaults({});
      await closeStory(NAMESPACE, REPLICA, CLUSTER);
    });

    it('starts no engine before the cache is Ready on the cluster', async () => {
      await hub('reset', { method: 'POST' });
      // The weights trickle (about 40 s), so the replica waits on a cache that is really on its way.
      await setFaults({ repo: HUB_REPO, slow: { path: HUB_WEIGHTS, delayMs: 50 } });
      openStory(NAMESPACE, CLUSTER, LABEL);
      apply('control-plane', hubCache(NAMESPACE, CACHE, LABEL));
      apply('control-plane', standinReplica(NAMESPACE, REPLICA, CLUSTER, CACHE, VLLM_ARGS));
      // Until the hydration is Ready, no engine workload exists on the cluster and the replica says it waits.
      const early: string[] = [];
      await eventually(
        'the cache Ready on cluster-a',
        () => {
          const ready = reasonOf(hydration(), 'ArtifactReady') === 'Staged';
          if (!ready && (engineDeployments(CLUSTER, REPLICA).length > 0 || standinPods(CLUSTER, REPLICA).length > 0))
            early.push(new Date().toISOString());
          return ready;
        },
        { ...WAIT, describe: () => JSON.stringify(getIn(hydration(), 'status')) },
      );
      expect(early, 'an engine existed before the cache was Ready').toEqual([]);
      expect(reasonOf(replicaOf(NAMESPACE, REPLICA), 'ModelReady')).not.toBe('Serving');
    });

    it(
      'schedules the engine onto the node with a device the DRA driver prepared, and it serves what it read offline from the claim',
      { timeout: ENGINE_TEST_TIMEOUT },
      async () => {
        const pod = await servingPod(NAMESPACE, REPLICA, CLUSTER);
        expect(getIn(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));

        // The pod's ResourceClaim, made by the resource-claim controller from the composed template,
        // allocated by the scheduler from the node's ResourceSlice and reserved for this pod.
        const claimName = getString(asArray(getIn(pod, 'status', 'resourceClaimStatuses')).find(isObject) ?? {}, 'resourceClaimName');
        expect(claimName, 'the pod names its generated ResourceClaim').toBeTruthy();
        const claim = getObject(CLUSTER, 'resourceclaims.resource.k8s.io', claimName ?? '', REMOTE_NAMESPACE);
        const results = asArray(getIn(claim, 'status', 'allocation', 'devices', 'results')).filter(isObject);
        expect(results.map((r) => [getString(r, 'driver'), getString(r, 'pool')])).toEqual([[FAKE_GPU_CLASS, nodeOf(CLUSTER)]]);
        const device = getString(results[0] ?? {}, 'device');
        expect(device).toMatch(/^gpu-\d+$/);
        expect(
          asArray(getIn(claim, 'status', 'reservedFor'))
            .filter(isObject)
            .map((r) => r['name']),
        ).toEqual([getString(pod, 'metadata', 'name')]);

        // What the engine read and was given, from the engine itself.
        const health = await fetch(`http://${getString(pod, 'status', 'podIP')}:8000/health`);
        expect(health.status).toBe(200);
        const files = await engineFiles(pod);
        expect(getString(files, 'snapshot')).toBe(snapshotDir(CACHE_MOUNT_PATH, HUB_REPO, COMMIT));
        expect(getIn(files, 'hfHubOffline')).toBe('1');
        expect(getIn(files, 'devices'), 'the device the driver prepared, in the engine’s env through CDI').toEqual([device]);
        expect(readShas(files)).toEqual(HUB_FILE_SHAS);
      },
    );

    it('keeps the claim, its files and the running engine when the cluster is deselected, and downloads nothing when it is selected again', async () => {
      const before = whatExists();
      expect(before.files).toEqual(HUB_FILE_SHAS);
      expect(before.pods.map((p) => [p.ready, p.restarts])).toEqual([['True', [0]]]);
      const downloads = await weightGetCount();

      // Deselected while the replica runs there: retained, as it was.
      kubectlOk('control-plane', ['label', 'inferencecluster', CLUSTER, `${LABEL}=no`, '--overwrite']);
      await eventually('cluster-a retained for the replica', () => /retained/.test(getString(entry() ?? {}, 'message') ?? ''), {
        ...WAIT,
        describe: () => JSON.stringify(entry()),
      });
      expect(getString(entry() ?? {}, 'phase')).toBe('Ready');
      expect(whatExists()).toEqual(before);
      const pod = standinPods(CLUSTER, REPLICA)[0];
      expect((await fetch(`http://${getString(pod ?? {}, 'status', 'podIP')}:8000/health`)).status).toBe(200);

      // Selected again: a member as before, Ready on the same claim with no new download.
      kubectlOk('control-plane', ['label', 'inferencecluster', CLUSTER, `${LABEL}=yes`, '--overwrite']);
      await eventually(
        'cluster-a a member again, Ready',
        () => {
          const found = entry();
          // The hydration's condition too: Crossplane writes it after the phase the cache copies (plane.ts statusSays).
          return (
            getString(found ?? {}, 'phase') === 'Ready' &&
            !/retained/.test(getString(found ?? {}, 'message') ?? '') &&
            reasonOf(hydration(), 'ArtifactReady') === 'Staged'
          );
        },
        { ...WAIT, describe: () => JSON.stringify({ entry: entry(), hydration: getIn(hydration(), 'status', 'conditions') }) },
      );
      expect(reasonOf(replicaOf(NAMESPACE, REPLICA), 'ModelReady')).toBe('Serving');
      expect(whatExists()).toEqual(before);
      expect(await weightGetCount(), 'the weights asked for again').toBe(downloads);
    });
  },
);
