// A Leader + Worker engine: a multi-node gang, as a LeaderWorkerSet. Each
// copy is one gang of the leader and `worker.nodes` followers. Both members'
// commands and args are the user's; Modelplane injects only env aliases that
// tell a member where the leader is and which rank it has.

import type { V1EnvVar, V1PodSpec, V1PodTemplateSpec } from '@kubernetes/client-node';
import { READY_QUERY, celReadiness, remoteObject, toJson } from '#lib';
import { memberClaims } from './claims.js';
import type { Composed } from './composed.js';
import { LABEL_LWS_ROLE, LABEL_SERVING, leaderWorkerSetName, servingLabel, workloadKey } from './names.js';
import { gangContainer, memberPodSpec, podMetadata, type CacheShaping } from './pod.js';
import type { PhaseShaping } from './disaggregated.js';
import type { GangEngine, Member, Replica } from './spec.js';

export const LWS_KIND = 'LeaderWorkerSet';

/**
 * Backend-neutral names for the gang's coordination values, aliasing what
 * LeaderWorkerSet injects into every gang pod (`$(VAR)` expands in the pod).
 * The rank is 0 on the leader and 1..nodes on the followers.
 */
export const GANG_ENV: readonly V1EnvVar[] = [
  { name: 'MODELPLANE_LEADER_ADDRESS', value: '$(LWS_LEADER_ADDRESS)' },
  { name: 'MODELPLANE_RANK', value: '$(LWS_WORKER_INDEX)' },
];

/** A Worker member without `worker` has one follower (upstream's default; the XRD sets none). */
const DEFAULT_WORKER_NODES = 1;

/**
 * A LeaderWorkerSet never gets the ModelExpress bundle: it runs on the
 * Standard stack, which has no ModelExpress server. `phase` shapes the
 * leader (the serving pod) of a PrefillDecode engine; the workers never serve.
 */
export function leaderWorkerSet(
  providerConfig: string,
  replica: Replica,
  engine: GangEngine,
  cache: CacheShaping | undefined,
  phase?: PhaseShaping,
): Composed {
  const { leader, worker } = engine;
  // Only the leader serves the API: it alone carries the serving label, the port and the probe.
  const leaderTemplate: V1PodTemplateSpec = { spec: podSpec(replica, engine, leader, cache, phase ?? true) };
  const leaderMetadata = podMetadata(leader, { [LABEL_SERVING]: servingLabel(replica), [LABEL_LWS_ROLE]: 'leader', ...phase?.labels });
  if (leaderMetadata) leaderTemplate.metadata = leaderMetadata;
  // Followers carry only the worker member's own metadata (LWS labels its gang itself): none when it has none.
  const workerTemplate: V1PodTemplateSpec = { spec: podSpec(replica, engine, worker, cache, false) };
  const workerMetadata = podMetadata(worker);
  if (workerMetadata) workerTemplate.metadata = workerMetadata;

  const manifest = {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: LWS_KIND,
    metadata: { name: leaderWorkerSetName(replica, engine), namespace: replica.workloadNamespace },
    spec: {
      replicas: engine.copies,
      leaderWorkerTemplate: { size: 1 + (worker.workerNodes ?? DEFAULT_WORKER_NODES), leaderTemplate, workerTemplate },
    },
  };
  return [
    [
      workloadKey(engine),
      remoteObject({ providerConfig, readiness: celReadiness(READY_QUERY.workloadAvailable), manifest: toJson(manifest) }),
    ],
    ...memberClaims(providerConfig, replica, engine, [leader, worker]),
  ];
}

/** `serving`: false for a worker, true for a leader, its phase shaping for a PrefillDecode leader. */
function podSpec(
  replica: Replica,
  engine: GangEngine,
  member: Member,
  cache: CacheShaping | undefined,
  serving: boolean | PhaseShaping,
): V1PodSpec {
  const phase = typeof serving === 'object' ? serving : undefined;
  return memberPodSpec(replica, engine, member, cache, gangContainer(member, cache, serving, GANG_ENV), phase);
}
