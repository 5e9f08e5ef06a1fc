// The cache: a replica that references a ModelCache starts no engine until
// the cache's entry for its cluster is Ready with a mount, and then mounts
// exactly what that entry publishes (checked first: whoever writes a cache's
// status puts volumes into engine pods).

import { findCacheEntry, getObject, validateMount, type CacheEntry, type CacheMount, type JsonObject } from '#lib';
import type { Replica } from './spec.js';

export const CACHE_REASON = {
  waitingForCache: 'WaitingForCache',
  notOnCluster: 'CacheNotOnCluster',
  hydrating: 'Hydrating',
  failed: 'HydrationFailed',
  invalidMount: 'InvalidCacheMount',
  notShareable: 'CacheNotShareable',
} as const;
export type CacheReason = (typeof CACHE_REASON)[keyof typeof CACHE_REASON];

/** Access modes under which pods on several nodes can mount one claim. */
const SHAREABLE_ACCESS_MODES: readonly string[] = ['ReadWriteMany', 'ReadOnlyMany'];

export type CacheDecision =
  | { serve: true; mount: CacheMount }
  | {
      serve: false;
      reason: CacheReason;
      message: string;
      /** Failed, or refused: a person must act, so it is a Warning, not a wait. */
      warn: boolean;
    };

/**
 * Decide from the referenced ModelCache (undefined: fetched, not found) what
 * the replica may do on its cluster, in the order the spec lists the cases.
 */
export function decideCache(replica: Replica, cacheName: string, cache: JsonObject | undefined): CacheDecision {
  const cluster = replica.spec.clusterName;
  if (cache === undefined) {
    return wait(
      CACHE_REASON.waitingForCache,
      `ModelCache ${cacheName} not found in namespace ${replica.namespace}: create it, or correct spec.modelCacheRef.name`,
    );
  }
  const entry = findCacheEntry(getObject(cache, 'status') ?? {}, cluster);
  if (entry === undefined) {
    return wait(
      CACHE_REASON.notOnCluster,
      `cluster ${cluster} is not in ModelCache ${cacheName}'s footprint: widen the cache's clusterSelector to select it, or place the replica on a cluster the cache selects`,
    );
  }
  if (entry.phase === 'Failed') {
    // The entry's own words: it names what failed on the cluster (a Job's reason, a manifest the cache can't mount).
    return {
      serve: false,
      reason: CACHE_REASON.failed,
      message: entry.message ?? `ModelCache ${cacheName} failed on ${cluster}`,
      warn: true,
    };
  }
  if (entry.phase !== 'Ready' || entry.mount === undefined)
    return wait(CACHE_REASON.hydrating, hydratingMessage(cacheName, cluster, entry));

  const checked = validateMount(entry.mount);
  if (!checked.ok) {
    return {
      serve: false,
      reason: CACHE_REASON.invalidMount,
      message: `ModelCache ${cacheName} publishes a mount for ${cluster} that engine pods may not use: ${checked.problems.join('; ')}`,
      warn: true,
    };
  }
  const gangs = replica.spec.engines.filter((e) => e.shape === 'Gang').map((e) => e.name);
  if (gangs.length > 0 && entry.accessModes !== undefined && !entry.accessModes.some((m) => SHAREABLE_ACCESS_MODES.includes(m))) {
    const modes = entry.accessModes.length > 0 ? entry.accessModes.join(', ') : 'none';
    return {
      serve: false,
      reason: CACHE_REASON.notShareable,
      message:
        `engine ${gangs.join(', ')} runs pods on several nodes, but ModelCache ${cacheName}'s claim on ${cluster} allows ${modes}: ` +
        `it must allow ReadWriteMany or ReadOnlyMany (use such a claim, or a single-node engine)`,
      warn: true,
    };
  }
  return { serve: true, mount: checked.mount };
}

function wait(reason: CacheReason, message: string): CacheDecision {
  return { serve: false, reason, message, warn: false };
}

function hydratingMessage(cacheName: string, cluster: string, entry: CacheEntry): string {
  const base = `waiting for ModelCache ${cacheName} on ${cluster}: ${entry.phase}`;
  if (entry.phase === 'Ready') return `${base}, but no mount is published yet`;
  return entry.message ? `${base} (${entry.message})` : base;
}
