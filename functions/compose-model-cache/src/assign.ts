// Which shard holds each cluster (docs/design/fleet.md, "Which shard holds a
// cluster"). Clusters never move between shards: a cluster stays where its
// child is, new clusters fill the lowest shard with room, and a cluster leaves
// a shard only by leaving the cache. The rules hold when a shard is observed
// a reconcile late (Crossplane reads from its cache): a late view can assign a
// new cluster twice, which the next reconcile undoes without deleting
// anything; it can never drop a child.

import { SHARD_CAPACITY, compareNames } from '#lib';
import type { ObservedShard } from './observed.js';

export interface ShardPlan {
  index: number;
  /** Its clusters, by name. */
  members: string[];
  /** Clusters it lists or holds that left the cache: their children go. */
  drop: string[];
}

/**
 * Shards for `members` (every cluster the cache keeps in a shard), given the
 * shards observed. A shard with neither members nor anything to drop is not
 * in the result: it is no longer desired.
 */
export function assignShards(observed: ReadonlyMap<number, ObservedShard>, members: readonly string[]): ShardPlan[] {
  const wanted = new Set(members);
  const byIndex = [...observed.values()].sort((a, b) => a.index - b.index);
  // Where each cluster is: the shard that holds its child, else the one that lists it (the lowest index of either).
  const holder = new Map<string, number>();
  for (const shard of byIndex) for (const cluster of shard.composed) if (!holder.has(cluster)) holder.set(cluster, shard.index);
  for (const shard of byIndex) for (const cluster of shard.listed.keys()) if (!holder.has(cluster)) holder.set(cluster, shard.index);

  const assigned = new Map<number, string[]>();
  const add = (index: number, cluster: string): void => {
    const list = assigned.get(index) ?? [];
    list.push(cluster);
    assigned.set(index, list);
  };
  const unplaced: string[] = [];
  for (const cluster of [...wanted].sort(compareNames)) {
    const index = holder.get(cluster);
    if (index === undefined) unplaced.push(cluster);
    else add(index, cluster);
  }
  // New clusters, in name order, to the lowest index with room; an index opens when all before it are full.
  let index = 0;
  for (const cluster of unplaced) {
    while ((assigned.get(index)?.length ?? 0) >= SHARD_CAPACITY) index += 1;
    add(index, cluster);
  }

  const plans = new Map<number, ShardPlan>();
  const planOf = (i: number): ShardPlan => {
    let plan = plans.get(i);
    if (!plan) plans.set(i, (plan = { index: i, members: [], drop: [] }));
    return plan;
  };
  for (const [i, clusters] of assigned) planOf(i).members.push(...clusters.sort(compareNames));
  for (const shard of byIndex) {
    const gone = new Set<string>();
    for (const cluster of [...shard.listed.keys(), ...shard.composed]) if (!wanted.has(cluster)) gone.add(cluster);
    if (gone.size > 0) planOf(shard.index).drop.push(...[...gone].sort(compareNames));
  }
  return [...plans.values()].sort((a, b) => a.index - b.index);
}
