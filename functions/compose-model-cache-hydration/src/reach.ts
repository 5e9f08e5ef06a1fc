// A cluster its Objects can't reach (lib reachability.ts): said in the
// status, the message and a condition, and nothing else changes. What the
// source decided from the Objects as last observed stands (the phase, the
// mount, what is composed): a Ready cluster stays Ready with its mount, as a
// hold keeps it (gate.ts), and nothing staged is dropped. A Failed cluster
// keeps its message: the Failed latch carries it (attempts.ts).

import { unreachableWords, type Unreachable } from '#lib';
import type { Outcome, Reason } from './outcome.js';

/** The condition that says whether the cluster's API server answers its Objects. */
export const CLUSTER_REACHABLE = 'ClusterReachable';
export const REACHABLE_REASON = { reachable: 'Reachable', unreachable: 'Unreachable' } as const;

/** Reasons whose words are the control plane's, not the cluster's: still true while it can't be reached, so kept. */
const CONTROL_PLANE_REASONS: ReadonlySet<Reason> = new Set(['AuthSecretMissing', 'ClusterNotFound', 'ClusterNotProvisioned']);

export function markUnreachable(outcome: Outcome, unreachable: Unreachable, cluster: string): void {
  outcome.facts.unreachable = unreachable;
  const words = unreachableWords(cluster, unreachable);
  switch (outcome.phase) {
    case 'Failed':
      return;
    case 'Ready':
      // Held by the gate already (its InferenceCluster can't be read): that stands, and this is said beside it.
      outcome.message =
        outcome.reason === 'Held' && outcome.message !== undefined
          ? `${outcome.message}; ${words}`
          : `${outcome.artifact} stays Ready as last seen, its mount published: ${words}, so nothing on the cluster can be checked or changed now`;
      outcome.reason = 'Held';
      return;
    default: {
      const own = CONTROL_PLANE_REASONS.has(outcome.reason) && outcome.message !== undefined ? `; ${outcome.message}` : '';
      outcome.message = `${words}; ${outcome.phase} as last seen, nothing on the cluster can be checked or changed until it answers${own}`;
    }
  }
}
