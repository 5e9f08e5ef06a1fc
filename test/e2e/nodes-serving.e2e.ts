// An engine pod on a real node (issue 28.4), on a plane with real nodes
// (`make e2e-nodes`): a HuggingFace ModelCache staged on cluster-a by its real
// Job, and a ModelReplica there whose engine is the vLLM stand-in
// (images/engine/): scheduled by the real scheduler onto the node's pool,
// started only once the cache is Ready there, loading the model offline through the mount
// contract (HF_HUB_OFFLINE=1, snapshot_download(local_files_only=True)) and
// serving /health; its /files says what it read, checked against the hub.
// It asks for no device: no DRA driver runs on the nodes yet (docs/nodes.md),
// so a DRA claim would leave the pod Pending.
//
// On a plane without nodes it is skipped.

import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, getIn, getString, hydrationName, isObject } from '#lib';
import type { JsonObject } from '#lib';
import { PLANE_HAS_NODES, hub, setFaults } from './hub/client.js';
import { HUB_FILES, HUB_REPO, hubRevision } from './hub/repo.js';
import {
  ENGINE_STANDIN_IMAGE,
  WORKLOAD_CLUSTERS,
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
const POOL = 'e2e-standin';
const COMMIT = hubRevision().commit;
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

describe.skipIf(!PLANE_HAS_NODES)('real pods on real nodes: an engine reads the staged model through the mount contract', () => {
  afterAll(async () => {
    kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--wait=false']);
    kubectl('control-plane', ['delete', 'modelcaches', '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually(
      'every XR gone',
      () => ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, NAMESPACE).length === 0),
      { timeoutMs: 180_000 },
    );
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', ...WORKLOAD_CLUSTERS, '--ignore-not-found']);
    kubectl(CLUSTER, ['label', 'node', `${CLUSTER}-node`, 'modelplane.ai/pool-']);
  });

  it('starts no engine before the cache is Ready on the cluster', async () => {
    await hub('reset', { method: 'POST' });
    // The weights trickle (about 40 s), so the replica waits on a cache that is really on its way.
    await setFaults({ slow: { path: 'model.safetensors', delayMs: 50 } });
    kubectlOk(CLUSTER, ['label', 'node', `${CLUSTER}-node`, `modelplane.ai/pool=${POOL}`, '--overwrite']);
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
    await setFaults({});
  });

  it('schedules the engine onto the node, and it serves what it read offline from the claim', async () => {
    const pod = await eventually(
      'the engine pod Ready on cluster-a',
      () => enginePods().find((p) => getString(condition(p, 'Ready') ?? {}, 'status') === 'True'),
      { ...WAIT, describe: () => JSON.stringify(enginePods().map((p) => getIn(p, 'status'))) },
    );
    expect(getIn(pod, 'spec', 'nodeName')).toBe(`${CLUSTER}-node`);
    await eventually('the replica Serving', () => reasonOf(replica(), 'ModelReady') === 'Serving', WAIT);

    // What the engine read, from the engine itself (a pod's IP is routed from the host).
    const ip = getString(pod, 'status', 'podIP');
    const health = await fetch(`http://${ip}:8000/health`);
    expect(health.status).toBe(200);
    const files = (await (await fetch(`http://${ip}:8000/files`)).json()) as JsonObject;
    expect(getString(files, 'snapshot')).toBe(`/mnt/models/models--${HUB_REPO.replace('/', '--')}/snapshots/${COMMIT}`);
    expect(getIn(files, 'hfHubOffline')).toBe('1');
    const read = asArray(getIn(files, 'files'))
      .filter(isObject)
      .map((f) => [getString(f, 'path'), getString(f, 'sha256')]);
    const sha256 = (content: Buffer): string => createHash('sha256').update(content).digest('hex');
    expect(Object.fromEntries(read)).toEqual(Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(f.content)])));
  });
});
