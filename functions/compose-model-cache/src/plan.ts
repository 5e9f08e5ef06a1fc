// What happens to each cluster this reconcile. A cluster is considered when it
// is in the footprint or when something was composed for it before; the rule
// throughout is that nothing staged is lost to an input we didn't expect:
//
// - in the footprint: stamp its child (unless its single-function resources
//   are still being handed over: then keep those, without Delete);
// - still selected but not reachable (no provider config now, or a name that
//   can't name a child): keep what was observed, as it was;
// - no longer selected, or its InferenceCluster gone, but a ModelReplica of
//   this cache runs there: retain what was observed (the reclaim guard);
// - otherwise: drop it, and Crossplane deletes the child and its resources.

import { compareNames, type JsonObject } from '#lib';
import type { Footprint } from './footprint.js';
import type { LegacyObjects, ObservedComposed } from './observed.js';
import { readyToHandOver } from './upgrade.js';

export type ClusterPlan =
  /** A footprint cluster: its child is stamped from the current spec. */
  | { cluster: string; action: 'stamp'; child?: JsonObject }
  /** A cluster whose observed child is re-desired exactly as observed; `note` says why. */
  | { cluster: string; action: 'keep'; child: JsonObject; note: string }
  /** A cluster whose single-function Objects are re-desired without Delete; no child is stamped. */
  | { cluster: string; action: 'upgrade'; legacy: LegacyObjects; child?: JsonObject; note: string };

export const NOTES = {
  unprovisioned: (cluster: string) =>
    `kept as it was: InferenceCluster ${cluster} matches but reports no provider config (status.providerConfigRef.name)`,
  badName: (cluster: string) =>
    `kept as it was: cluster name ${JSON.stringify(cluster)} is not a DNS label, so no child can be named for it`,
  retained: (replicas: readonly string[]) => `retained: no longer selected; in use by ModelReplica ${replicas.join(', ')}`,
  upgrading:
    'upgrading from the single-function ModelCache: its PVC, Job and token Secret are kept without the Delete policy until a ModelCacheHydration takes the cluster over',
} as const;

export interface PlanInput {
  footprint: Footprint;
  observed: ObservedComposed;
  /** ModelReplicas of this cache, by cluster (reclaim.ts). */
  inUse: ReadonlyMap<string, readonly string[]>;
}

export function planClusters({ footprint, observed, inUse }: PlanInput): ClusterPlan[] {
  const selected = new Set(footprint.stamped);
  const held = new Map<string, string>();
  for (const cluster of footprint.unprovisioned) held.set(cluster, NOTES.unprovisioned(cluster));
  for (const cluster of footprint.badNames) held.set(cluster, NOTES.badName(cluster));

  const clusters = new Set<string>([...footprint.stamped, ...observed.children.keys(), ...observed.legacy.keys()]);
  const plans: ClusterPlan[] = [];
  for (const cluster of [...clusters].sort(compareNames)) {
    const child = observed.children.get(cluster);
    const legacy = observed.legacy.get(cluster);
    const inFootprint = selected.has(cluster);
    const keepNote = inFootprint ? undefined : (held.get(cluster) ?? retainedNote(inUse.get(cluster)));

    if (legacy && !(inFootprint && readyToHandOver(legacy))) {
      // Still being handed over (or held before it could be): keep the old Objects, unable to delete.
      // A cluster that simply left, with nothing using it, loses them as the single-function cache did.
      if (inFootprint || keepNote !== undefined) {
        plans.push({ cluster, action: 'upgrade', legacy, ...(child ? { child } : {}), note: keepNote ?? NOTES.upgrading });
      }
      continue;
    }
    if (inFootprint) plans.push({ cluster, action: 'stamp', ...(child ? { child } : {}) });
    else if (child && keepNote !== undefined) plans.push({ cluster, action: 'keep', child, note: keepNote });
  }
  return plans;
}

function retainedNote(replicas: readonly string[] | undefined): string | undefined {
  return replicas && replicas.length > 0 ? NOTES.retained(replicas) : undefined;
}
