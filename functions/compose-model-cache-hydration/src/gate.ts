// The cluster gate: a cluster that can't be reached (or, for HuggingFace,
// can't stage) holds the hydration. A hold composes nothing new and keeps
// every Object it observes exactly as observed, so a cluster that is briefly
// unreadable never deletes a staged volume; and a cluster that was Ready for
// this very artifact stays Ready, with the mount it published, so a hold of
// one reconcile never withdraws a mount from the replicas.

import { readInferenceCluster, validateMount, type InferenceCluster, type JsonObject } from '#lib';
import type { Outcome, PreviousStatus, Reason, SourceFacts } from './outcome.js';

export type GateResult = { open: true; cluster: InferenceCluster & { providerConfigName: string } } | { open: false; outcome: Outcome };

export function clusterGate(clusterName: string, found: JsonObject | undefined, previous: PreviousStatus, artifact: string): GateResult {
  const cluster = found === undefined ? undefined : readInferenceCluster(found);
  if (!cluster) return { open: false, outcome: held(previous, 'ClusterNotFound', `InferenceCluster ${clusterName} not found`, artifact) };
  const providerConfigName = cluster.providerConfigName;
  if (providerConfigName === undefined) {
    return {
      open: false,
      outcome: held(previous, 'ClusterNotProvisioned', `waiting for cluster ${clusterName} to be provisioned`, artifact),
    };
  }
  return { open: true, cluster: { ...cluster, providerConfigName } };
}

/**
 * A hold, keeping what was observed. Ready for this very artifact (with a
 * mount that still passes the contract) stays Ready, reason Held, the message
 * saying why nothing can be checked now; a Job failure of this very artifact
 * stays Failed, as it was said; otherwise Pending with the gate's reason. Every fact of the last status stays latched through a hold: the OCI
 * result (a hold must not make the next pod serve whatever the tag points to
 * by then), what was staged, and the attempts.
 */
export function held(previous: PreviousStatus, reason: Reason, message: string, artifact: string): Outcome {
  const facts: SourceFacts = {};
  if (previous.resolvedRef !== undefined && previous.digest !== undefined && previous.artifactKind !== undefined) {
    facts.resolvedRef = previous.resolvedRef;
    facts.digest = previous.digest;
    facts.artifactKind = previous.artifactKind;
  }
  if (previous.attempts !== undefined) facts.attempts = previous.attempts;
  if (previous.accessModes !== undefined) facts.accessModes = previous.accessModes;
  // A resolved claim size is latched through a hold: the claim exists at that size.
  if (previous.sizeGiB !== undefined) facts.sizeGiB = previous.sizeGiB;
  if (previous.reverifiedFor !== undefined) facts.reverifiedFor = previous.reverifiedFor;
  const outcome: Outcome = { phase: 'Pending', reason, message, facts, resources: [], keepObserved: true, warnings: [], artifact };
  if (previous.phase === 'Failed' && previous.attempts?.artifact === artifact && previous.message !== undefined) {
    // The Failed latch holds through a hold too: a hold must not turn spent attempts into a fresh start.
    return { ...outcome, phase: 'Failed', reason: 'HydrationFailed', message: previous.message };
  }
  const mount = previous.phase === 'Ready' && previous.staged === artifact ? validateMount(previous.mount) : undefined;
  if (mount?.ok) {
    outcome.phase = 'Ready';
    outcome.reason = 'Held';
    outcome.message = `${artifact} stays Ready as last seen, its mount published: ${message}, so nothing on the cluster can be checked or changed now`;
    outcome.mount = mount.mount;
    facts.staged = artifact;
    // What was staged stays as it was said: its commit, its verification, its totals.
    if (previous.commit !== undefined) facts.commit = previous.commit;
    if (previous.verified !== undefined) facts.verified = previous.verified;
    if (previous.progress !== undefined) facts.progress = previous.progress;
  }
  return outcome;
}
