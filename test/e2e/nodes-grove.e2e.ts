// A gang replica on a real node with the real Grove operator (issue 28.5), on
// a plane with real nodes where `make grove` installed Grove on cluster-a
// (docs/nodes.md, "Grove"): a HuggingFace ModelCache staged there by its Job,
// then a ModelReplica on the Dynamo stack whose engine is a Leader and one
// Worker, each the vLLM stand-in with a fake GPU. The replica composes a
// PodCliqueSet; Grove v0.1.0-alpha.6 (the release upstream's Dynamo stack
// pins) defaults and admits it through its webhooks, makes the gang's
// PodCliques, pods and headless Service, appends its GROVE_* env to each
// container and lifts its scheduling gates; kube-scheduler, under the name
// `kai-scheduler` the composed pods ask for (KAI stays a stand-in), and the
// kubelet do the rest. Asserted in the running containers: the leader address
// we compose expands to the leader pod's own DNS name while upstream's form,
// which reads Grove's variables, stays literal text on this release; both
// pods read the model offline through the mount contract; the PodCliqueSet's
// counters, written by Grove, make the replica Serving.
//
// Skipped, saying so, on a plane without nodes or where Grove isn't installed:
// the Go module proxy refuses Grove's operator module, so it builds only from
// a checkout of its source (GROVE_SOURCE).

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
import { apply, eventually, getObject, kubectl, list, nodesPlane, reasonOf } from './plane.js';

const NAMESPACE = 'e2e-node-grove';
const CACHE = 'gang';
const REPLICA = 'gang-grove';
const CLUSTER = 'cluster-a';
const INFERENCE_CLUSTER = 'grove-a';
const PART_OF = 'app.kubernetes.io/part-of';
/** Upstream's leader address, which reads Grove's scaling-group variables (upstream's grove.py). */
const UPSTREAM_FORM = '$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-leader-0.$(GROVE_HEADLESS_SERVICE)';

/** Whether Grove's operator serves the cluster (its defaulting webhook, registered by node.sh once built), saying so when not. */
function groveOn(file: string): boolean {
  const installed = kubectl(CLUSTER, ['get', 'mutatingwebhookconfiguration', 'podcliqueset-defaulting-webhook']).code === 0;
  if (!installed)
    console.log(
      `${file}: skipped: Grove's operator isn't installed on ${CLUSTER} (\`make grove GROVE_SOURCE=...\`, docs/nodes.md "Grove")`,
    );
  return installed;
}

/** The PodCliqueSet the replica composed (the only one of its story). */
const podCliqueSet = (): JsonObject | undefined =>
  list(CLUSTER, 'podcliquesets.grove.io', REMOTE_NAMESPACE).find((pcs) =>
    (getString(pcs, 'metadata', 'name') ?? '').startsWith(`${REPLICA}-`),
  );

/** The leader pod's DNS name: Grove's hostname for the gang's leader under the set's headless Service. */
const leaderAddress = (pcs: string): string => `${pcs}-0-gang-0-leader-0.${pcs}-0.${REMOTE_NAMESPACE}.svc.cluster.local`;

/** The gang's pods, leader first (Grove names each clique's pods after the clique: …-gang-0-leader-…, …-gang-0-worker-…). */
const gangPods = (pcs: string): JsonObject[] => gangPodsBy(CLUSTER, `${PART_OF}=${pcs}`);

describe.skipIf(!nodesPlane('nodes-grove.e2e.ts') || !groveOn('nodes-grove.e2e.ts'))(
  'real pods on real nodes: a gang replica run by the real Grove operator',
  () => {
    afterAll(() => closeStory(NAMESPACE, REPLICA, CLUSTER, INFERENCE_CLUSTER));

    it(
      'stages the cache on the cluster, then Grove makes the gang’s leader and worker pods',
      { timeout: ENGINE_TEST_TIMEOUT },
      async () => {
        openStory(NAMESPACE, CLUSTER, 'modelplane.ai/node-grove', INFERENCE_CLUSTER, { stack: 'Dynamo' });
        apply('control-plane', hubCache(NAMESPACE, CACHE, 'modelplane.ai/node-grove'));
        await cacheStaged(NAMESPACE, CACHE, INFERENCE_CLUSTER);
        apply(
          'control-plane',
          standinGangReplica(NAMESPACE, REPLICA, INFERENCE_CLUSTER, CACHE, [{ name: 'UPSTREAM_FORM', value: UPSTREAM_FORM }]),
        );

        const pcs = await eventually('the PodCliqueSet on cluster-a', podCliqueSet, WAIT);
        const name = getString(pcs, 'metadata', 'name') ?? '';
        const pods = await gangReady(() => gangPods(name));
        // Grove's names: a gang's PodClique is <pcs>-<index>-<scaling group>-<gang index>-<clique>.
        expect(pods.map((p) => getString(p, 'metadata', 'labels', 'grove.io/podclique'))).toEqual([
          `${name}-0-gang-0-leader`,
          `${name}-0-gang-0-worker`,
        ]);
        for (const pod of pods) {
          expect(getString(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));
          expect(getString(pod, 'spec', 'schedulerName')).toBe('kai-scheduler');
          expect(getIn(pod, 'spec', 'schedulingGates'), 'Grove lifted its gang gate').toBeUndefined();
        }
      },
    );

    it('appends Grove’s env after ours; the address we compose expands to the leader’s DNS name, upstream’s form does not', () => {
      const name = getString(podCliqueSet(), 'metadata', 'name') ?? '';
      const [leader, worker] = gangPods(name);
      const hostname = getString(leader, 'spec', 'hostname') ?? '';
      const subdomain = getString(leader, 'spec', 'subdomain') ?? '';
      expect([hostname, subdomain]).toEqual([`${name}-0-gang-0-leader-0`, `${name}-0`]);
      const address = leaderAddress(name);
      // The leader's DNS name needs the headless Service Grove made for the set's replica.
      expect(getObject(CLUSTER, 'service', subdomain, REMOTE_NAMESPACE)).toMatchObject({ spec: { clusterIP: 'None' } });
      for (const pod of [leader!, worker!]) {
        const env = envNames(pod);
        expect(env.indexOf('GROVE_PCSG_NAME'), 'alpha.6 appends its variables').toBeGreaterThan(env.indexOf('MODELPLANE_LEADER_ADDRESS'));
        expect(env.indexOf('GROVE_PCSG_NAME')).toBeGreaterThan(env.indexOf('UPSTREAM_FORM'));
        expect(runningEnv(CLUSTER, pod, 'GROVE_PCSG_NAME')).toBe(`${name}-0-gang`);
        expect(runningEnv(CLUSTER, pod, 'GROVE_PCSG_INDEX')).toBe('0');
        expect(runningEnv(CLUSTER, pod, 'MODELPLANE_GANG_INDEX')).toBe('0');
        expect(runningEnv(CLUSTER, pod, 'MODELPLANE_LEADER_ADDRESS'), 'what we compose, expanded by Kubernetes').toBe(address);
        expect(runningEnv(CLUSTER, pod, 'UPSTREAM_FORM'), 'upstream’s form, left as written').toBe(UPSTREAM_FORM);
      }
    });

    it('resolves our address in the worker to the leader pod, through the cluster’s DNS, and reaches its engine; upstream’s form resolves to nothing', () => {
      const name = getString(podCliqueSet(), 'metadata', 'name') ?? '';
      const [leader, worker] = gangPods(name);
      expect(reachLeader(CLUSTER, worker!)).toEqual({
        name: leaderAddress(name),
        ip: getString(leader, 'status', 'podIP'),
        health: 200,
      });
      const upstream = reachLeader(CLUSTER, worker!, 'UPSTREAM_FORM');
      expect(upstream.name).toBe(UPSTREAM_FORM);
      expect('error' in upstream && upstream.error, JSON.stringify(upstream)).toMatch(/^gaierror: /);
    });

    it('reads the model offline in both pods, and the PodCliqueSet’s counters make the replica Serving', async () => {
      const name = getString(podCliqueSet(), 'metadata', 'name') ?? '';
      for (const pod of gangPods(name)) expect(readShas(await engineFiles(pod))).toEqual(HUB_FILE_SHAS);
      await eventually('the replica Serving', () => reasonOf(replicaOf(NAMESPACE, REPLICA), 'ModelReady') === 'Serving', {
        ...WAIT,
        describe: () => JSON.stringify([getIn(podCliqueSet(), 'status'), getIn(replicaOf(NAMESPACE, REPLICA), 'status', 'conditions')]),
      });
      // What we compose already holds what Grove's defaulting webhook would add: provider-kubernetes' applies and the
      // webhook don't take turns rewriting the spec (each turn would be a generation, and a rollout of the gang).
      expect(getIn(podCliqueSet(), 'metadata', 'generation')).toBe(1);
    });
  },
);
