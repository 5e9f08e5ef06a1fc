// A Leader + Worker engine on the Dynamo stack: a Grove PodCliqueSet. The
// leader and worker cliques sit in one scaling group, so each copy is one
// gang, scheduled as a unit by the KAI scheduler Grove hands its gangs to.
// Both members' commands and args are the user's; Modelplane injects only the
// leader's address and the gang index it is built from (Grove numbers pods per
// clique, not across the gang, so there is no rank alias as on a
// LeaderWorkerSet).

import type { V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import { celReadiness, remoteObject, toJson, type JsonObject } from '#lib';
import { memberClaims } from './claims.js';
import type { Composed } from './composed.js';
import type { PhaseShaping } from './disaggregated.js';
import { LABEL_CLIQUE_ROLE, LABEL_SERVING, groveName, servingLabel, workloadKey } from './names.js';
import { gangContainer, memberPodSpec, podMetadata, type CacheShaping } from './pod.js';
import type { GangEngine, Member, Replica } from './spec.js';
import type { StackShaping } from './stack.js';

export const GROVE_API_VERSION = 'grove.io/v1alpha1';
export const GROVE_KIND = 'PodCliqueSet';
export const LEADER_CLIQUE = 'leader';
export const WORKER_CLIQUE = 'worker';
export const SCALING_GROUP = 'gang';
/** Grove hands its gangs to KAI; neither sets the pods' scheduler, so the pod spec does. */
export const GROVE_SCHEDULER = 'kai-scheduler';
/** The KAI queue the Dynamo stack sets up for Modelplane's pods. */
export const QUEUE_LABEL = 'kai.scheduler/queue';
export const QUEUE = 'modelplane';

/**
 * Grove publishes no Available condition on a PodCliqueSet: readiness comes
 * from its counters, for the current generation only (upstream's query, byte
 * for byte). With the scaling group's minAvailable at 1 this holds once one
 * copy serves.
 */
export const GROVE_AVAILABLE_CEL =
  'has(object.status) && has(object.status.observedGeneration) && object.status.observedGeneration == object.metadata.generation && object.spec.replicas > 0 && has(object.status.availableReplicas) && object.status.availableReplicas >= object.spec.replicas';

/** The label Grove sets on every pod of a scaling group's cliques: which copy of the gang (PCSG replica) it is in. */
export const GANG_INDEX_LABEL = 'grove.io/podcliquescalinggroup-replica-index';
/** Our own copy of that index, read from the label so it is defined before the leader address refers to it. */
export const GANG_INDEX_ENV = 'MODELPLANE_GANG_INDEX';
export const LEADER_ADDRESS_ENV = 'MODELPLANE_LEADER_ADDRESS';
/** Grove writes its headless Service's address with this domain (GROVE_HEADLESS_SERVICE); we write the same. */
const GROVE_CLUSTER_DOMAIN = 'cluster.local';

/**
 * The leader of *this* gang: Grove's hostname for the gang's leader pod
 * (`<pcs>-<pcs index>-<scaling group>-<gang index>-leader-0`) under its
 * headless Service (`<pcs>-<pcs index>`). The gang index makes it per gang;
 * a PodCliqueSet-wide name would point every copy at gang 0's leader.
 *
 * Not `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-leader-0.$(GROVE_HEADLESS_SERVICE)`:
 * every Grove release up to v0.1.0-alpha.12-rc1 (alpha.6 is the one the
 * Dynamo stack pins) appends its variables after the template's env, and the
 * kubelet expands `$(VAR)` in an env value only from entries above it, so the
 * engine would see that text verbatim (docs/walkthrough-serving-shapes.md,
 * "The leader address on a real Grove"). What the address needs is known
 * here but the gang index, which differs between pods of one template: it
 * comes from the label Grove puts on the pod, through our own variable above
 * the address. On a Grove that prepends its variables the value is the same.
 */
export function groveLeaderEnv(podCliqueSet: string, namespace: string): V1EnvVar[] {
  // spec.replicas is 1, so the PodCliqueSet replica is always 0.
  const pcsReplica = `${podCliqueSet}-0`;
  const host = `${pcsReplica}-${SCALING_GROUP}-$(${GANG_INDEX_ENV})-${LEADER_CLIQUE}-0`;
  return [
    { name: GANG_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${GANG_INDEX_LABEL}']` } } },
    { name: LEADER_ADDRESS_ENV, value: `${host}.${pcsReplica}.${namespace}.svc.${GROVE_CLUSTER_DOMAIN}` },
  ];
}

/** A Worker member without `worker` has one follower (upstream's default; the XRD sets none). */
const DEFAULT_WORKER_NODES = 1;

/** `phase` shapes the leader clique (the serving pods) of a PrefillDecode engine; the worker clique never serves. */
export function podCliqueSet(
  providerConfig: string,
  replica: Replica,
  engine: GangEngine,
  cache: CacheShaping | undefined,
  stack: StackShaping,
  phase?: PhaseShaping,
): Composed {
  const { leader, worker } = engine;
  const workers = worker.workerNodes ?? DEFAULT_WORKER_NODES;
  // Grove copies a clique's labels and annotations onto its pods. Only the leader serves, so only it carries the serving label.
  const leaderClique: JsonObject = {
    name: LEADER_CLIQUE,
    ...toJson(
      podMetadata(leader, {
        [LABEL_SERVING]: servingLabel(replica),
        [QUEUE_LABEL]: QUEUE,
        [LABEL_CLIQUE_ROLE]: LEADER_CLIQUE,
        ...phase?.labels,
      }) ?? {},
    ),
    spec: {
      roleName: LEADER_CLIQUE,
      replicas: 1,
      minAvailable: 1,
      podSpec: toJson(podSpec(replica, engine, leader, cache, stack, phase ?? true)),
    },
  };
  // minAvailable: every worker, so a partly started gang doesn't count. No startsAfter: the leader is
  // Ready only once its workers joined, so gating the workers on it would deadlock.
  const workerClique: JsonObject = {
    name: WORKER_CLIQUE,
    ...toJson(podMetadata(worker, { [QUEUE_LABEL]: QUEUE }) ?? {}),
    spec: {
      roleName: WORKER_CLIQUE,
      replicas: workers,
      minAvailable: workers,
      podSpec: toJson(podSpec(replica, engine, worker, cache, stack, false)),
    },
  };
  const manifest: JsonObject = {
    apiVersion: GROVE_API_VERSION,
    kind: GROVE_KIND,
    metadata: { name: groveName(replica, engine), namespace: replica.workloadNamespace },
    spec: {
      replicas: 1,
      template: {
        // Fields Grove's defaulting webhook would fill are set, so provider-kubernetes doesn't fight it.
        cliqueStartupType: 'CliqueStartupTypeExplicit',
        terminationDelay: '4h',
        headlessServiceConfig: { publishNotReadyAddresses: true },
        cliques: [leaderClique, workerClique],
        // One gang per copy. minAvailable 1, not the copies: Grove would put every copy below it into one
        // gang and tear them all down together when one stalls. Upstream's first Dynamo revision (PR #406)
        // set the copies; its newer revision sets 1, and we follow the newer.
        podCliqueScalingGroups: [
          { name: SCALING_GROUP, cliqueNames: [LEADER_CLIQUE, WORKER_CLIQUE], replicas: engine.copies, minAvailable: 1 },
        ],
      },
    },
  };
  return [
    [workloadKey(engine), remoteObject({ providerConfig, readiness: celReadiness(GROVE_AVAILABLE_CEL), manifest })],
    ...memberClaims(providerConfig, replica, engine, [leader, worker]),
  ];
}

/** `serving`: false for a worker, true for a leader, its phase shaping for a PrefillDecode leader. */
function podSpec(
  replica: Replica,
  engine: GangEngine,
  member: Member,
  cache: CacheShaping | undefined,
  stack: StackShaping,
  serving: boolean | PhaseShaping,
): V1PodSpec {
  // ModelExpress reaches workers too: each pod publishes itself as a source.
  const leader = groveLeaderEnv(groveName(replica, engine), replica.workloadNamespace);
  const container = gangContainer(member, cache, serving, [...leader, ...stack.env], stack.securityContext);
  const phase = typeof serving === 'object' ? serving : undefined;
  return memberPodSpec(replica, engine, member, cache, container, phase, GROVE_SCHEDULER);
}
