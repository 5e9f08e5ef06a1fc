// Names, labels and desired-resource keys. They are upstream Modelplane
// v0.3.1's, byte for byte: a replica composed by upstream is taken over by
// this function without renaming (and so without recreating) anything.

import { hash } from 'node:crypto';
import { childName } from '#lib';
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

/** The label value the serving pods share: the replica's own name. */
export function servingLabel(replica: Replica): string {
  return replica.name;
}

/**
 * The Deployment or LeaderWorkerSet of one engine. Always engine-qualified, so
 * it never equals the replica name: a LeaderWorkerSet's controller creates a
 * headless Service named after it, and would not if a Service of that name
 * already existed.
 */
export function engineName(replica: Replica, engine: Engine): string {
  return childName(replica.name, engine.name);
}

/**
 * A Service's name must be a DNS-1035 label, which starts with a letter; a
 * replica name may start with a digit (a DNS-1123 label). Upstream composes
 * such a Service name anyway, and Kubernetes refuses it, so no such Service
 * exists to take over: a name that doesn't start with a letter gets one in
 * front ("mr-", for ModelReplica), hashed to fit 63 characters. A name that
 * does is left exactly as upstream has it.
 */
export function serviceSafe(name: string): string {
  return /^[a-z]/.test(name) ? name : childName('mr', name);
}

/** A gang's LeaderWorkerSet: its controller creates a headless Service of the same name, so it must be Service-safe. */
export function leaderWorkerSetName(replica: Replica, engine: Engine): string {
  return serviceSafe(engineName(replica, engine));
}

/**
 * Grove refuses a PodCliqueSet whose own name plus its scaling group's and
 * clique's names (and the indices between them) run past 45 characters; its
 * pods are named `<pcs>-<i>-gang-<j>-worker-<k>`. Upstream's newer code budgets
 * 24 for the PodCliqueSet and hashes like childName within it.
 */
export const GROVE_NAME_MAX = 24;
const GROVE_HASH_LENGTH = 5;

/**
 * A Leader/Worker engine's PodCliqueSet on the Dynamo stack: upstream's
 * `grove_pcs_name`, byte for byte: `<replica>-<engine>` cut to 18 characters,
 * trailing dashes removed, then "-" and the first five hex digits of the
 * SHA-256 of the whole, uncut string (so two names cut to one prefix differ).
 * Grove creates a headless Service per PodCliqueSet replica named after it,
 * and a Service name must start with a letter: a replica name that starts
 * with a digit gets "mr-" in front before the cut (upstream composes a name
 * Grove's Service can't take, so no such object exists to take over).
 */
export function groveName(replica: Replica, engine: Engine): string {
  const plain = `${replica.name}-${engine.name}`;
  const full = /^[a-z]/.test(plain) ? plain : `mr-${plain}`;
  const digest = hash('sha256', full, 'hex').slice(0, GROVE_HASH_LENGTH);
  let prefix = full.slice(0, GROVE_NAME_MAX - GROVE_HASH_LENGTH - 1);
  while (prefix.endsWith('-')) prefix = prefix.slice(0, -1);
  return `${prefix}-${digest}`;
}

/** `standalone`, `leader` or `worker`: one member per role in an engine, so it tells members apart. */
export function memberRole(member: Member): string {
  return member.role.toLowerCase();
}

/** Flat (not nested on engineName), as upstream: `<replica>-<engine>-<role>-devices-<hash>`. */
export function claimTemplateName(replica: Replica, engine: Engine, member: Member): string {
  return childName(replica.name, engine.name, memberRole(member), POD_CLAIM);
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

const DNS_LABEL_MAX = 63;

/**
 * `<replica>-<suffix>`, upstream's plain name, whenever it fits a DNS label.
 * Upstream composes it even when it does not (a 63-character replica name
 * gives a 67-character Service that Kubernetes refuses), so no object with
 * such a name can exist: past 63 characters we hash instead, and the pool,
 * picker and route always agree because they all come from here.
 */
function routingName(replica: Replica, suffix: string): string {
  const plain = `${replica.name}-${suffix}`;
  return plain.length <= DNS_LABEL_MAX ? plain : childName(replica.name, suffix);
}

/** The HTTPRoute: the replica's own name (a DNS label, checked when the spec is read). */
export function routeName(replica: Replica): string {
  return replica.name;
}
export function poolName(replica: Replica): string {
  return routingName(replica, 'pool');
}
/** The endpoint picker's ServiceAccount, Role, RoleBinding, ConfigMap and Deployment. */
export function eppName(replica: Replica): string {
  return routingName(replica, 'epp');
}

/** The endpoint picker's Service, which the InferencePool names: eppName, Service-safe. */
export function eppServiceName(replica: Replica): string {
  return serviceSafe(eppName(replica));
}

/** Every engine's workload key, in engine order: the replica serves only when all of them do. */
export function workloadKeys(replica: Replica): string[] {
  return replica.spec.engines.map(workloadKey);
}
