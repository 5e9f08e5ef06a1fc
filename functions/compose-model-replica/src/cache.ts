// The cache: a replica that references a ModelCache starts no engine until
// its cluster's entry is Ready with a mount, and then mounts exactly what that
// entry publishes (checked first: whoever writes a cache's status puts volumes
// into engine pods). The entry is its cluster's ModelCacheHydration, read by
// name, which is where it lives at any fleet size (docs/design/fleet.md); the
// cache's own status.clusters[] when that child is not there (not stamped
// yet, or mid hand-over).

import {
  findCacheEntry,
  getIn,
  getObject,
  getString,
  labelSelector,
  matchesSelector,
  readCacheState,
  tryParse,
  validateMount,
  type CacheEntry,
  type CacheMount,
  type JsonObject,
} from '#lib';
import type { Replica, ReplicaSpec } from './spec.js';

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

/** What the replica found of its cache: the ModelCache, its cluster's ModelCacheHydration, and the cluster's labels. */
export interface CacheFound {
  /** Fetched and not found: undefined. */
  cache: JsonObject | undefined;
  hydration?: JsonObject | undefined;
  clusterLabels?: Record<string, string>;
}

/**
 * The cluster's entry: its own ModelCacheHydration's report, else the cache's
 * status.clusters[] entry. The hydration is found by name, and names join
 * their parts with "-" (cache "q" on cluster "a-b" and cache "q-a" on cluster
 * "b" share one, docs/design/names.md): one staging another cache, or another
 * cluster, is not this cluster's.
 */
function entryOf(found: CacheFound, cacheName: string, cluster: string): CacheEntry | undefined {
  const spec = getIn(found.hydration, 'spec');
  const status = getIn(found.hydration, 'status');
  const own = getString(spec, 'cacheName') === cacheName && getString(spec, 'clusterName') === cluster;
  if (own && getString(status, 'phase') !== undefined) return { name: cluster, ...readCacheState(status) };
  return findCacheEntry(getObject(found.cache, 'status') ?? {}, cluster);
}

/** Whether the cache's selector selects the cluster (a selector that does not parse selects nothing). */
function selects(cache: JsonObject, labels: Record<string, string> | undefined): boolean {
  const parsed = tryParse(labelSelector(), getIn(cache, 'spec', 'clusterSelector'), 'spec.clusterSelector');
  return labels !== undefined && 'value' in parsed && matchesSelector(labels, parsed.value);
}

/**
 * Decide from what was found of the referenced ModelCache what the replica
 * may do on its cluster, in the order the spec lists the cases.
 */
export function decideCache(replica: Replica, cacheName: string, found: CacheFound): CacheDecision {
  const cluster = replica.spec.clusterName;
  const { cache } = found;
  if (cache === undefined) {
    return wait(
      CACHE_REASON.waitingForCache,
      `ModelCache ${cacheName} not found in namespace ${replica.namespace}: create it, or correct spec.modelCacheRef.name`,
    );
  }
  const entry = entryOf(found, cacheName, cluster);
  if (entry === undefined) {
    if (selects(cache, found.clusterLabels)) {
      return wait(CACHE_REASON.hydrating, `waiting for ModelCache ${cacheName} on ${cluster}: its ModelCacheHydration is not there yet`);
    }
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
  const modes = entry.accessModes;
  const several = modes !== undefined && !modes.some((m) => SHAREABLE_ACCESS_MODES.includes(m)) ? severalPods(replica.spec) : undefined;
  if (modes !== undefined && several !== undefined) {
    return {
      serve: false,
      reason: CACHE_REASON.notShareable,
      message:
        `${several.what}, but ModelCache ${cacheName}'s claim on ${cluster} allows ${modes.length > 0 ? modes.join(', ') : 'none'}: ` +
        `it must allow ReadWriteMany or ReadOnlyMany (use such a claim, or ${several.instead})`,
      warn: true,
    };
  }
  return { serve: true, mount: checked.mount };
}

/**
 * What makes a replica's pods land on several nodes at once, if anything: a
 * gang (leader and workers), or more than one pod in all (a Standalone engine
 * with several copies, or several engines). A claim only one node can attach
 * (ReadWriteOnce) would leave the pods on every other node stuck on a
 * multi-attach error, so such a replica is refused rather than composed.
 * Composing it to work instead (pinning every pod to the node that holds the
 * claim) would put every copy's GPUs on one node, which rarely fits and
 * leaves the rest Pending with no reason a person can see; and a
 * ReadWriteOncePod claim refuses even that.
 */
function severalPods(spec: ReplicaSpec): { what: string; instead: string } | undefined {
  const engines = spec.engines;
  // Every gang runs pods on several nodes, whatever runs it (a LeaderWorkerSet or a Grove PodCliqueSet).
  const gangs = engines.filter((e) => e.shape === 'Gang').map((e) => e.name);
  if (gangs.length > 0) return { what: `engine ${gangs.join(', ')} runs pods on several nodes`, instead: 'a single-node engine' };
  const pods = engines.reduce((sum, e) => sum + e.copies, 0);
  if (pods <= 1) return undefined;
  // Disaggregated serving is never one pod: its prefill and decode engines are separate pods, usually on separate GPUs.
  if (spec.servingMode === 'PrefillDecode') {
    const each = engines.map((e) => `${e.name} (${e.phase ?? 'no phase'}, ${e.copies} ${e.copies === 1 ? 'copy' : 'copies'})`).join(', ');
    return {
      what: `serving.mode PrefillDecode runs engines ${each} as ${pods} pods, which may land on several nodes`,
      instead: 'Unified serving with one engine with copies: 1',
    };
  }
  const each = engines.map((e) => `${e.name} (${e.copies} ${e.copies === 1 ? 'copy' : 'copies'})`).join(', ');
  const subject = engines.length === 1 ? `engine ${each} runs` : `engines ${each} run`;
  return { what: `${subject} ${pods} pods, which may land on several nodes`, instead: 'one engine with copies: 1' };
}

function wait(reason: CacheReason, message: string): CacheDecision {
  return { serve: false, reason, message, warn: false };
}

function hydratingMessage(cacheName: string, cluster: string, entry: CacheEntry): string {
  const base = `waiting for ModelCache ${cacheName} on ${cluster}: ${entry.phase}`;
  if (entry.phase === 'Ready') return `${base}, but no mount is published yet`;
  return entry.message ? `${base} (${entry.message})` : base;
}
