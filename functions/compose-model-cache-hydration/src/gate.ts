// The cluster gate: a cluster that can't be reached (or, for HuggingFace,
// can't stage) holds the hydration at Pending. A hold composes nothing new and
// keeps every Object it observes exactly as observed, so a cluster that is
// briefly unreadable never deletes a staged volume.

import { readInferenceCluster, type InferenceCluster, type JsonObject } from '#lib';
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
 * Pending, keeping what was observed. The OCI result stays latched through a
 * hold: the reference was resolved once, and a hold must not make the next
 * pod serve whatever the tag points to by then.
 */
export function held(previous: PreviousStatus, reason: Reason, message: string, artifact: string): Outcome {
  const facts: SourceFacts = {};
  if (previous.resolvedRef !== undefined && previous.digest !== undefined && previous.artifactKind !== undefined) {
    facts.resolvedRef = previous.resolvedRef;
    facts.digest = previous.digest;
    facts.artifactKind = previous.artifactKind;
  }
  return { phase: 'Pending', reason, message, facts, resources: [], keepObserved: true, warnings: [], artifact };
}
