// Labels, desired-resource keys and the names of what a replica composes on
// its workload cluster. The names are the library's (replicaNames: unique per
// XR; upstreamReplicaNames: upstream v0.3.1's, for what already runs under
// them); which one each engine and the routing use is decided once per
// reconcile (naming.ts) and carried on the Replica.

import type { ReplicaNameSet } from '#lib';
import type { Engine, Member, Replica } from './spec.js';

/** On every serving pod (Standalone pods, gang leaders): the InferencePool selects on it. */
export const LABEL_SERVING = 'modelplane.ai/serving';
/** On a Deployment's pods, per engine, so two engines of one replica never share a selector. */
export const LABEL_WORKLOAD = 'modelplane.ai/workload';
/** The node label each pool's nodes carry; the scheduler's pool choice is pinned with it. */
export const LABEL_POOL = 'modelplane.ai/pool';
/** On a LeaderWorkerSet's leader pods only. */
export const LABEL_LWS_ROLE = 'modelplane.ai/lws-role';
/** On a Grove PodCliqueSet's leader clique only (informational, as LABEL_LWS_ROLE). */
export const LABEL_CLIQUE_ROLE = 'modelplane.ai/clique-role';
/** PrefillDecode: the phase of an engine's serving pods, which the picker's prefill and decode filters read. */
export const LABEL_LLMD_ROLE = 'llm-d.ai/role';
/** PrefillDecode: on both engines' serving pods. */
export const LABEL_LLMD_SERVING = 'llm-d.ai/inference-serving';

/** The pod-level DRA claim, and the last part of its template's name. */
export const POD_CLAIM = 'devices';

/** The label value the serving pods share, and the InferencePool's selector. */
export function servingLabel(replica: Replica): string {
  return replica.naming.routing.serving;
}

/** The names one engine's workload and claim templates go by. */
export function engineNames(replica: Replica, engine: Engine): ReplicaNameSet {
  return replica.naming.engines.get(engine.name) ?? replica.naming.fresh;
}

/**
 * The Deployment of a Standalone engine (and its pods' workload label). Always
 * engine-qualified, so it never equals the replica's own name: a
 * LeaderWorkerSet's controller creates a headless Service named after it, and
 * would not if a Service of that name already existed.
 */
export function engineName(replica: Replica, engine: Engine): string {
  return engineNames(replica, engine).deployment(engine.name);
}

/** A gang's LeaderWorkerSet: its controller creates a headless Service of the same name, so it is Service-safe. */
export function leaderWorkerSetName(replica: Replica, engine: Engine): string {
  return engineNames(replica, engine).leaderWorkerSet(engine.name);
}

/** A Leader/Worker engine's PodCliqueSet on the Dynamo stack (Grove's 24-character budget, Service-safe). */
export function groveName(replica: Replica, engine: Engine): string {
  return engineNames(replica, engine).podCliqueSet(engine.name);
}

/** `standalone`, `leader` or `worker`: one member per role in an engine, so it tells members apart. */
export function memberRole(member: Member): string {
  return member.role.toLowerCase();
}

/** Flat (not nested on engineName), as upstream: `<replica>-<engine>-<role>-devices-<hash>`. */
export function claimTemplateName(replica: Replica, engine: Engine, member: Member): string {
  return engineNames(replica, engine).claimTemplate(engine.name, memberRole(member));
}

// Desired-resource keys.
export function workloadKey(engine: Engine): string {
  return `model-serving-${engine.name}`;
}
export function claimKey(engine: Engine, member: Member): string {
  return `resource-claim-${engine.name}-${memberRole(member)}`;
}
export const ROUTE_KEY = 'model-route';
export const POOL_KEY = 'inference-pool';
export const EPP_KEYS = {
  serviceAccount: 'epp-serviceaccount',
  role: 'epp-role',
  roleBinding: 'epp-rolebinding',
  config: 'epp-config',
  deployment: 'epp',
  service: 'epp-service',
} as const;
/** The Usage that keeps the referenced ModelCache from being deleted while this replica exists. */
export const USAGE_KEY = 'model-cache-usage';

/** The HTTPRoute. */
export function routeName(replica: Replica): string {
  return replica.naming.routing.route;
}
export function poolName(replica: Replica): string {
  return replica.naming.routing.pool;
}
/** The endpoint picker's ServiceAccount, Role, RoleBinding, ConfigMap and Deployment. */
export function eppName(replica: Replica): string {
  return replica.naming.routing.epp;
}

/** The endpoint picker's Service, which the InferencePool names: Service-safe. */
export function eppServiceName(replica: Replica): string {
  return replica.naming.routing.eppService;
}

/** Every engine's workload key, in engine order: the replica serves only when all of them do. */
export function workloadKeys(replica: Replica): string[] {
  return replica.spec.engines.map(workloadKey);
}
