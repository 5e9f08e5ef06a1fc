// What happens to each cluster this reconcile. A cluster is considered when it
// is in the footprint or when something was composed for it before (a shard
// lists or holds it, a child of the layout before shards, upstream's
// single-function Objects); the rule throughout is that nothing staged is lost
// to an input we didn't expect:
//
// - in the footprint: a member of a shard, stamped from the spec (unless its
//   single-function resources are still being handed over, or its child from
//   the layout before shards is still on the cache: then those first);
// - still selected but not reachable (no provider config now, or a name that
//   can't name a child), or no longer selected but a ModelReplica of this
//   cache runs there: kept as it was, with a note saying why;
// - otherwise: it leaves, and its child is dropped (Crossplane deletes it and
//   what it staged).

import { compareNames, getIn, quoteValue, type JsonObject } from '#lib';
import type { Footprint } from './footprint.js';
import type { LegacyObjects, ObservedComposed } from './observed.js';
import { readyToHandOver } from './upgrade.js';

export type ClusterPlan =
  /** In a shard: stamped from the spec, or (`keep`) kept as it was, the note saying why. */
  | { cluster: string; action: 'member'; keep?: string }
  /** A child of the layout before shards, still on the cache: handed over to a shard (handover.ts). */
  | { cluster: string; action: 'handover'; child: JsonObject }
  /** A child of the layout before shards kept on the cache as it is; `note` says why. */
  | { cluster: string; action: 'keep-flat'; child: JsonObject; note: string }
  /** Upstream's single-function Objects, re-desired without Delete; no child is stamped yet. */
  | { cluster: string; action: 'upgrade'; legacy: LegacyObjects; child?: JsonObject; note: string };

export const NOTES = {
  unprovisioned: (cluster: string) =>
    `kept as it was: InferenceCluster ${cluster} matches but reports no provider config (status.providerConfigRef.name)`,
  badName: (cluster: string) =>
    `kept as it was: cluster name ${quoteValue(cluster, 70)} is not a DNS label, so no child can be named for it`,
  retained: (replicas: readonly string[]) => `retained: no longer selected; in use by ModelReplica ${replicas.join(', ')}`,
  upgrading:
    'upgrading from the single-function ModelCache: its PVC, Job and token Secret are kept without the Delete policy until a ModelCacheHydration takes the cluster over',
  leaving:
    'leaving: no longer selected; its hand-over to a shard was under way, so its ModelCacheHydration first gets back the Delete policy it gave up, then goes with what it staged',
} as const;

export interface PlanInput {
  footprint: Footprint;
  observed: ObservedComposed;
  /** ModelReplicas of this cache, by cluster (reclaim.ts). */
  inUse: ReadonlyMap<string, readonly string[]>;
}

/** A child from the layout before shards that is turning its Objects' Delete policy on or off (report.ts of the hydration). */
function midHandOver(child: JsonObject): boolean {
  return typeof getIn(child, 'status', 'orphanOnDelete') === 'boolean';
}

export function planClusters({ footprint, observed, inUse }: PlanInput): ClusterPlan[] {
  const selected = new Set(footprint.stamped);
  const held = new Map<string, string>();
  for (const cluster of footprint.unprovisioned) held.set(cluster, NOTES.unprovisioned(cluster));
  for (const cluster of footprint.badNames) held.set(cluster, NOTES.badName(cluster));

  const inShards = new Set<string>();
  for (const shard of observed.shards.values()) {
    for (const cluster of shard.listed.keys()) inShards.add(cluster);
    for (const cluster of shard.composed) inShards.add(cluster);
  }
  const clusters = new Set<string>([...footprint.stamped, ...inShards, ...observed.children.keys(), ...observed.legacy.keys()]);
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
    if (child) {
      // A child of the layout before shards. A footprint cluster's moves to a shard; a kept one stays
      // on the cache as it is; one that leaves goes, once it can delete what it staged again.
      if (inFootprint) plans.push({ cluster, action: 'handover', child });
      else if (keepNote !== undefined) plans.push({ cluster, action: 'keep-flat', child, note: keepNote });
      else if (midHandOver(child)) plans.push({ cluster, action: 'keep-flat', child, note: NOTES.leaving });
      continue;
    }
    if (inFootprint) plans.push({ cluster, action: 'member' });
    else if (keepNote !== undefined && inShards.has(cluster)) plans.push({ cluster, action: 'member', keep: keepNote });
  }
  return plans;
}

function retainedNote(replicas: readonly string[] | undefined): string | undefined {
  return replicas && replicas.length > 0 ? NOTES.retained(replicas) : undefined;
}
