// An engine pod on a real node (issue 28.4), on a plane with real nodes
// (`make e2e-nodes`): a HuggingFace ModelCache staged on cluster-a by its real
// Job, and a ModelReplica there whose engine is the vLLM stand-in
// (images/engine/), asking for one GPU of the DeviceClass gpu.example.com.
// Its claim is allocated by the real scheduler from the ResourceSlice the
// node's dra-example-driver publishes, and prepared by that driver through
// CDI; the pod lands on the node's pool, starts only once the cache is Ready
// there, loads the model offline through the mount contract (HF_HUB_OFFLINE=1,
// snapshot_download(local_files_only=True)) and serves /health; its /files
// says what it read (checked against the hub) and which device it was given.
//
// On a plane without nodes it is skipped.

import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_MOUNT_PATH, REMOTE_NAMESPACE, asArray, getIn, getString, hydrationName, isObject } from '#lib';
import type { JsonObject } from '#lib';
import { sha256 } from '../support/fake-hub.js';
import { PLANE_HAS_NODES, hub, removeStory, setFaults, snapshotDir } from './hub/client.js';
import { HUB_FILES, HUB_REPO, hubRevision } from './hub/repo.js';
import {
  ENGINE_STANDIN_IMAGE,
  apply,
  condition,
  engineDeployments,
  eventually,
  getObject,
  inferenceCluster,
  kubectl,
  kubectlOk,
  list,
  reasonOf,
  setInferenceClusterStatus,
} from './plane.js';

const NAMESPACE = 'e2e-node-serving';
const CACHE = 'served';
const REPLICA = 'served-chat';
const CLUSTER = 'cluster-a';
const NODE = `${CLUSTER}-node`;
const POOL = 'e2e-standin';
const DEVICE_CLASS = 'gpu.example.com';
const COMMIT = hubRevision().commit;
const WEIGHTS = 'model.safetensors';
/** A Job's pod, then the engine's image pull, start and readiness probe (30 s before its first try). */
const WAIT = { timeoutMs: 300_000 };

const hydration = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, CLUSTER), NAMESPACE);
const replica = (): JsonObject | undefined => getObject('control-plane', 'modelreplica', REPLICA, NAMESPACE);
const enginePods = (): JsonObject[] =>
  list(CLUSTER, 'pods', REMOTE_NAMESPACE).filter((pod) =>
    asArray(getIn(pod, 'spec', 'containers')).some((c) => isObject(c) && c['image'] === ENGINE_STANDIN_IMAGE),
  );

function servingReplica(): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: { name: REPLICA, namespace: NAMESPACE },
    spec: {
      clusterName: CLUSTER,
      modelCacheRef: { name: CACHE },
      serving: { mode: 'Unified' },
      engines: [
        {
          name: 'main',
          copies: 1,
          members: [
            {
              role: 'Standalone',
              nodePoolName: POOL,
              deviceRequests: [{ name: 'gpu', deviceClassName: DEVICE_CLASS, count: 1 }],
              template: {
                spec: {
                  // vLLM's own args, as docs/engine-contract.md writes them.
                  containers: [
                    {
                      name: 'engine',
                      image: ENGINE_STANDIN_IMAGE,
                      args: ['--model=$(MODELPLANE_MODEL)', '--revision=$(MODELPLANE_MODEL_REVISION)'],
                    },
                  ],
                },
              },
            },
          ],
        },
      ],
    },
  };
}

describe.skipIf(!PLANE_HAS_NODES)(
  'real pods on real nodes: an engine with a DRA device reads the staged model through the mount contract',
  () => {
    afterAll(async () => {
      await setFaults({});
      kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--wait=false']);
      await eventually('the replica gone', () => list('control-plane', 'modelreplicas', NAMESPACE).length === 0, { timeoutMs: 180_000 });
      await removeStory(NAMESPACE);
      kubectl(CLUSTER, ['label', 'node', NODE, 'modelplane.ai/pool-']);
    });

    it('starts no engine before the cache is Ready on the cluster', async () => {
      await hub('reset', { method: 'POST' });
      // The weights trickle (about 40 s), so the replica waits on a cache that is really on its way.
      await setFaults({ repo: HUB_REPO, slow: { path: WEIGHTS, delayMs: 50 } });
      // The platform team's part: the node in the pool a replica names (composed pods select modelplane.ai/pool).
      kubectlOk(CLUSTER, ['label', 'node', NODE, `modelplane.ai/pool=${POOL}`, '--overwrite']);
      apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      apply('control-plane', inferenceCluster(CLUSTER, { 'modelplane.ai/node-serving': 'yes' }));
      setInferenceClusterStatus(CLUSTER, {
        providerConfigRef: { name: CLUSTER },
        cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
      });
      apply('control-plane', {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCache',
        metadata: { name: CACHE, namespace: NAMESPACE },
        spec: {
          source: 'HuggingFace',
          huggingFace: { repo: HUB_REPO, sizeGiB: 1 },
          clusterSelector: { matchLabels: { 'modelplane.ai/node-serving': 'yes' } },
        },
      });
      apply('control-plane', servingReplica());
      // Until the hydration is Ready, no engine workload exists on the cluster and the replica says it waits.
      const early: string[] = [];
      await eventually(
        'the cache Ready on cluster-a',
        () => {
          const ready = reasonOf(hydration(), 'ArtifactReady') === 'Staged';
          if (!ready && (engineDeployments(CLUSTER, REPLICA).length > 0 || enginePods().length > 0)) early.push(new Date().toISOString());
          return ready;
        },
        { ...WAIT, describe: () => JSON.stringify(getIn(hydration(), 'status')) },
      );
      expect(early, 'an engine existed before the cache was Ready').toEqual([]);
      expect(reasonOf(replica(), 'ModelReady')).not.toBe('Serving');
    });

    it(
      'schedules the engine onto the node with a device the DRA driver prepared, and it serves what it read offline from the claim',
      { timeout: 2 * WAIT.timeoutMs + 60_000 },
      async () => {
        const pod = await eventually(
          'the engine pod Ready on cluster-a',
          () => enginePods().find((p) => getString(condition(p, 'Ready') ?? {}, 'status') === 'True'),
          { ...WAIT, describe: () => JSON.stringify(enginePods().map((p) => getIn(p, 'status'))) },
        );
        expect(getIn(pod, 'spec', 'nodeName')).toBe(NODE);
        await eventually('the replica Serving', () => reasonOf(replica(), 'ModelReady') === 'Serving', {
          ...WAIT,
          describe: () => JSON.stringify(getIn(replica(), 'status', 'conditions')),
        });

        // The pod's ResourceClaim, made by the resource-claim controller from the composed template,
        // allocated by the scheduler from the node's ResourceSlice and reserved for this pod.
        const claimName = getString(asArray(getIn(pod, 'status', 'resourceClaimStatuses')).find(isObject) ?? {}, 'resourceClaimName');
        expect(claimName, 'the pod names its generated ResourceClaim').toBeTruthy();
        const claim = getObject(CLUSTER, 'resourceclaims.resource.k8s.io', claimName ?? '', REMOTE_NAMESPACE);
        const results = asArray(getIn(claim, 'status', 'allocation', 'devices', 'results')).filter(isObject);
        expect(results.map((r) => [getString(r, 'driver'), getString(r, 'pool')])).toEqual([[DEVICE_CLASS, NODE]]);
        const device = getString(results[0] ?? {}, 'device');
        expect(device).toMatch(/^gpu-\d+$/);
        expect(
          asArray(getIn(claim, 'status', 'reservedFor'))
            .filter(isObject)
            .map((r) => r['name']),
        ).toEqual([getString(pod, 'metadata', 'name')]);

        // What the engine read and was given, from the engine itself (a pod's IP is routed from the host).
        const ip = getString(pod, 'status', 'podIP');
        const health = await fetch(`http://${ip}:8000/health`);
        expect(health.status).toBe(200);
        const files = (await (await fetch(`http://${ip}:8000/files`)).json()) as JsonObject;
        expect(getString(files, 'snapshot')).toBe(snapshotDir(CACHE_MOUNT_PATH, HUB_REPO, COMMIT));
        expect(getIn(files, 'hfHubOffline')).toBe('1');
        expect(getIn(files, 'devices'), 'the device the driver prepared, in the engine’s env through CDI').toEqual([device]);
        const read = asArray(getIn(files, 'files'))
          .filter(isObject)
          .map((f) => [getString(f, 'path'), getString(f, 'sha256')]);
        expect(Object.fromEntries(read)).toEqual(Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(f.content)])));
      },
    );
  },
);
