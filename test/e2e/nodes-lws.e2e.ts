// A gang replica on a real node with the real LeaderWorkerSet controller
// (issue 28.5), on a plane with real nodes (`make e2e`): a HuggingFace
// ModelCache staged on cluster-b by its Job, then a ModelReplica whose engine
// is a Leader and one Worker, each the vLLM stand-in with a fake GPU. The
// replica composes a LeaderWorkerSet; kubernetes-sigs' controller (node.sh,
// LWS_VERSION) makes the gang's StatefulSets, its pod webhook labels the pods
// and puts the LWS_* env first in each container, and the StatefulSet
// controller, the scheduler and the kubelet do the rest. Asserted in the
// running containers: the leader address and rank we compose as aliases of
// LWS's env (MODELPLANE_LEADER_ADDRESS=$(LWS_LEADER_ADDRESS)) expand to LWS's
// values, both pods read the model offline through the mount contract, and the
// LeaderWorkerSet's own Available condition makes the replica Serving.
//
// On a plane without nodes it is skipped.

import { afterAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, getIn, getString } from '#lib';
import type { JsonObject } from '#lib';
import {
  ENGINE_TEST_TIMEOUT,
  ENGINE_WAIT as WAIT,
  HUB_FILE_SHAS,
  cacheStaged,
  closeStory,
  engineFiles,
  envNames,
  gangPodsBy,
  gangReady,
  hubCache,
  nodeOf,
  openStory,
  reachLeader,
  readShas,
  replicaOf,
  runningEnv,
  standinGangReplica,
} from './hub/engine.js';
import { apply, conditionTrue, eventually, list, reasonOf, nodesPlane } from './plane.js';
import { HUB_BESIDE_REPO } from './hub/repo.js';

const NAMESPACE = 'e2e-node-lws';
const CACHE = 'gang';
const REPLICA = 'gang-chat';
const CLUSTER = 'cluster-b';
/** The story's InferenceCluster on it, a name of its own: the story plays beside others (docs/nodes.md, "Two lanes"). */
const INFERENCE_CLUSTER = 'lws-b';
const LWS_NAME = 'leaderworkerset.sigs.k8s.io/name';

/** The LeaderWorkerSet the replica composed on the cluster (the only one of its story). */
const leaderWorkerSet = (): JsonObject | undefined =>
  list(CLUSTER, 'leaderworkersets.leaderworkerset.x-k8s.io', REMOTE_NAMESPACE).find((lws) =>
    (getString(lws, 'metadata', 'name') ?? '').startsWith(`${REPLICA}-`),
  );

/** The leader's address as LWS gives it: the leader pod's hostname under the gang's headless Service (its subdomain). */
const leaderAddress = (lws: string, leader: JsonObject | undefined): string =>
  `${lws}-0.${getString(leader, 'spec', 'subdomain') ?? ''}.${REMOTE_NAMESPACE}`;

/** The gang's pods, leader first (LWS names them <lws>-0 and <lws>-0-1). */
const gangPods = (lws: string): JsonObject[] => gangPodsBy(CLUSTER, `${LWS_NAME}=${lws}`);

describe.skipIf(!nodesPlane('nodes-lws.e2e.ts'))(
  'real pods on real nodes: a gang replica run by the real LeaderWorkerSet controller',
  () => {
    afterAll(() => closeStory(NAMESPACE, REPLICA, CLUSTER, INFERENCE_CLUSTER));

    it(
      'stages the cache on the cluster, then the controller makes the gang’s leader and worker pods',
      { timeout: ENGINE_TEST_TIMEOUT },
      async () => {
        openStory(NAMESPACE, CLUSTER, 'modelplane.ai/node-lws', INFERENCE_CLUSTER);
        apply('control-plane', hubCache(NAMESPACE, CACHE, 'modelplane.ai/node-lws', HUB_BESIDE_REPO));
        await cacheStaged(NAMESPACE, CACHE, INFERENCE_CLUSTER);
        apply('control-plane', standinGangReplica(NAMESPACE, REPLICA, INFERENCE_CLUSTER, CACHE));

        const lws = await eventually('the LeaderWorkerSet on cluster-b', leaderWorkerSet, WAIT);
        const name = getString(lws, 'metadata', 'name') ?? '';
        const pods = await gangReady(() => gangPods(name));
        expect(pods.map((p) => getString(p, 'metadata', 'name'))).toEqual([`${name}-0`, `${name}-0-1`]);
        for (const pod of pods) expect(getString(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));
        // The controller's own workload objects: the leaders' StatefulSet and the group's workers'.
        const statefulSets = list(CLUSTER, 'statefulsets', REMOTE_NAMESPACE, `${LWS_NAME}=${name}`).map((s) =>
          getString(s, 'metadata', 'name'),
        );
        expect(statefulSets.sort()).toEqual([name, `${name}-0`]);
      },
    );

    it('gives each pod LWS’s env first, so the leader address and rank we compose expand in the running containers', () => {
      const name = getString(leaderWorkerSet(), 'metadata', 'name') ?? '';
      const [leader, worker] = gangPods(name);
      for (const pod of [leader!, worker!]) {
        const env = envNames(pod);
        // LWS's pod webhook puts its variables at the front: a `$(VAR)` after them expands.
        expect(env.slice(0, 3)).toEqual(['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX']);
        expect(env.indexOf('MODELPLANE_LEADER_ADDRESS')).toBeGreaterThan(env.indexOf('LWS_LEADER_ADDRESS'));
      }
      const address = leaderAddress(name, leader);
      for (const [pod, rank] of [
        [leader, '0'],
        [worker, '1'],
      ] as const) {
        expect(runningEnv(CLUSTER, pod!, 'LWS_LEADER_ADDRESS')).toBe(address);
        expect(runningEnv(CLUSTER, pod!, 'MODELPLANE_LEADER_ADDRESS'), 'our alias, expanded by Kubernetes').toBe(address);
        expect(runningEnv(CLUSTER, pod!, 'MODELPLANE_RANK')).toBe(rank);
      }
    });

    it('resolves that address in the worker to the leader pod, through the cluster’s DNS, and reaches its engine there', () => {
      const name = getString(leaderWorkerSet(), 'metadata', 'name') ?? '';
      const [leader, worker] = gangPods(name);
      expect(reachLeader(CLUSTER, worker!)).toEqual({
        name: leaderAddress(name, leader),
        ip: getString(leader, 'status', 'podIP'),
        health: 200,
      });
    });

    it('reads the model offline in both pods, and the LeaderWorkerSet’s Available makes the replica Serving', async () => {
      const name = getString(leaderWorkerSet(), 'metadata', 'name') ?? '';
      for (const pod of gangPods(name)) expect(readShas(await engineFiles(pod))).toEqual(HUB_FILE_SHAS);
      await eventually('the LeaderWorkerSet Available, by its controller', () => conditionTrue(leaderWorkerSet(), 'Available'), WAIT);
      await eventually('the replica Serving', () => reasonOf(replicaOf(NAMESPACE, REPLICA), 'ModelReady') === 'Serving', {
        ...WAIT,
        describe: () => JSON.stringify(getIn(replicaOf(NAMESPACE, REPLICA), 'status', 'conditions')),
      });
    });
  },
);
