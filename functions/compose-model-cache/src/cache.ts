// A ModelCache: fan out to ModelCacheShards of up to 100 clusters each, and
// roll the fleet up (docs/design/fleet.md).
//
// Resolve (the spec, the clusters, the replicas, what was composed before),
// decide per cluster (plan.ts) and per shard (assign.ts), compose the shards
// (and, while upgrading, what is being handed over), then report: status,
// conditions, readiness, events.

import {
  CLUSTER_LIST_LIMIT,
  KIND,
  MODELPLANE_API_VERSION,
  NOT_READY_LISTED,
  artifactLabel,
  compareNames,
  conditionIsTrue,
  conditionOf,
  desire,
  getIn,
  getObject,
  hydrationName,
  isReady,
  newResponse,
  readCacheStateChecked,
  readComposite,
  reportsCondition,
  requireResources,
  requiredResources,
  requirementLabels,
  selectByLabels,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  shardName,
  type ClusterCacheState,
  type JsonObject,
  type ReportProblem,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { assignShards } from './assign.js';
import { childStamper, keepChild } from './child.js';
import { REASON, artifactReady, clustersMatched } from './conditions.js';
import { emitEvents } from './events.js';
import { resolveFootprint } from './footprint.js';
import { ORPHAN_ANNOTATIONS, handOverSteps, inheritableStatus, type HandOverStep } from './handover.js';
import { childKey, readObserved, shardKey, type ObservedComposed, type ObservedShard } from './observed.js';
import { planClusters, type ClusterPlan } from './plan.js';
import { replicasByCluster } from './reclaim.js';
import { phaseCounts, statusEntry, summary, unreachableEntries, type ClusterEntry } from './rollup.js';
import { stampShard, type ShardMemberSpec } from './shards.js';
import { parseModelCache, type ModelCache } from './spec.js';
import { keepLegacy } from './upgrade.js';

const CLUSTERS = 'clusters';
const REPLICAS = 'replicas';

/** The child's condition whose reason says it has no token (the contract's signal). */
const CHILD_CONDITION = 'ArtifactReady';
const AUTH_MISSING_REASON = 'AuthSecretMissing';

/**
 * Both requirements at once, so Crossplane's second call is the last. A
 * requirement can carry only labels, so the selector's matchLabels go out (an
 * empty map lists every cluster) and the expressions are applied here.
 * Replicas: every ModelReplica of the namespace; which use this cache is in
 * their spec, not their labels.
 */
function requirements(cache: ModelCache): Record<string, ResourceSelector> {
  return {
    [CLUSTERS]: selectByLabels(MODELPLANE_API_VERSION, KIND.InferenceCluster, requirementLabels(cache.clusterSelector)),
    [REPLICAS]: selectByLabels(MODELPLANE_API_VERSION, KIND.ModelReplica, {}, cache.namespace),
  };
}

export function composeCache(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const cache = parseModelCache(xr);

  requireResources(rsp, requirements(cache));
  const clusters = requiredResources(req, CLUSTERS);
  const replicas = requiredResources(req, REPLICAS);
  if (!clusters.fetched || !replicas.fetched) return rsp; // not fetched yet: change nothing else

  // Resolve.
  const footprint = resolveFootprint(cache, clusters.items);
  const observed = readObserved(req);

  // Decide: per cluster, then which shard holds each.
  const plans = planClusters({ footprint, observed, inUse: replicasByCluster(replicas.items, cache) });
  const handOvers = plans.flatMap((plan) => (plan.action === 'handover' ? [{ cluster: plan.cluster, child: plan.child }] : []));
  const steps = handOverSteps(handOvers);
  const members = new Map<string, ShardMemberSpec>();
  for (const plan of plans) {
    if (plan.action === 'member')
      members.set(plan.cluster, plan.keep === undefined ? { name: plan.cluster } : { name: plan.cluster, keep: plan.keep });
    // Listed once its Objects cannot delete; a cluster a shard lists already stays listed while its child
    // catches up (a child that turned Delete back on is orphaned again, never told to go).
    const step = steps.get(plan.cluster);
    if (plan.action === 'handover' && (step === 'list' || (step === 'orphan' && listedByAShard(observed, plan.cluster)))) {
      members.set(plan.cluster, { name: plan.cluster, inheritedStatus: inheritableStatus(plan.child) });
    }
  }
  const shardPlans = assignShards(observed.shards, [...members.keys()]);
  const holder = new Map<string, number>();
  for (const shard of shardPlans) for (const cluster of shard.members) holder.set(cluster, shard.index);
  // A listed cluster whose shard is observed listing it, with what it inherits, is released by the cache.
  for (const { cluster } of handOvers) {
    if (steps.get(cluster) !== 'list') continue;
    const listed = observed.shards.get(holder.get(cluster) ?? -1)?.listed.get(cluster);
    if (listed !== undefined && getIn(listed, 'inheritedStatus') !== undefined) steps.set(cluster, 'release');
  }
  // Until its shard reports the child it stamped, a handed-over cluster keeps telling the shard what it inherits.
  for (const [cluster, member] of members) {
    if (member.inheritedStatus !== undefined || member.keep !== undefined) continue;
    const shard = observed.shards.get(holder.get(cluster) ?? -1);
    const inherited = getObject(shard?.listed.get(cluster), 'inheritedStatus');
    if (shard && !shard.composed.has(cluster) && inherited !== undefined) member.inheritedStatus = inherited;
  }

  // Compose.
  for (const shard of shardPlans) {
    const specs = shard.members.map((cluster) => members.get(cluster) ?? { name: cluster });
    const key = shardKey(shard.index);
    const seen = observed.shards.get(shard.index);
    desire(rsp, key, stampShard(cache, shard.index, specs, shard.drop), seen !== undefined && isReady(seen.resource));
  }
  const stamp = childStamper(cache);
  for (const plan of plans) composeOnCache(rsp, cache, plan, stamp, steps.get(plan.cluster));

  // Report.
  const refused: ReportProblem[] = [];
  const entries = rollUp(cache, plans, observed, holder, refused);
  const counts = phaseCounts(entries);
  const listAll = entries.length <= CLUSTER_LIST_LIMIT;
  setCompositeStatus(rsp, {
    summary: {
      ...summary(entries),
      clusters: entries.length,
      pending: counts.Pending,
      hydrating: counts.Hydrating,
      failed: counts.Failed,
      // Only when some cluster can't be reached: absent means none.
      unreachable: unreachableEntries(entries).length || undefined,
      shards: shardPlans.length,
      listed: listAll ? 'All' : 'NotReady',
    },
    clusters: (listAll ? entries : listedEntries(entries, steps)).map(statusEntry),
  });
  setCondition(rsp, clustersMatched(footprint));
  const artifact = artifactReady(footprint, entries);
  setCondition(rsp, artifact);
  // What the shards and children wrote, as checked: a field that failed is not rolled up, and is named here.
  setCondition(rsp, reportsCondition(refused, `every shard's and child's status passed its checks`));
  const staged = artifact.reason === REASON.Staged;
  // Explicitly false otherwise: with no composed resources Crossplane would call the XR ready.
  setCompositeReady(rsp, staged);
  emitEvents(rsp, {
    artifact: artifactLabel(cache.source),
    stamped: footprint.stamped,
    firstCompose: observed.shards.size === 0 && observed.children.size === 0 && observed.legacy.size === 0,
    entries,
    lastStatus: xr.status,
    staged,
    wasReady: conditionIsTrue(xr.resource, 'Ready'),
  });
  return rsp;
}

function listedByAShard(observed: ObservedComposed, cluster: string): boolean {
  for (const shard of observed.shards.values()) if (shard.listed.has(cluster)) return true;
  return false;
}

/** What stays on the cache itself: children of the layout before shards, and upstream's single-function Objects. */
function composeOnCache(
  rsp: RunFunctionResponse,
  cache: ModelCache,
  plan: ClusterPlan,
  stamp: ReturnType<typeof childStamper>,
  step: HandOverStep | undefined,
): void {
  const key = childKey(plan.cluster);
  switch (plan.action) {
    case 'member':
      return;
    case 'handover':
      // Released: dropped, and Crossplane deletes it; its Objects can no longer delete what they staged.
      if (step === 'release') return;
      desire(
        rsp,
        key,
        step === 'wait' ? stamp(plan.cluster) : stamp(plan.cluster, { annotations: { ...ORPHAN_ANNOTATIONS } }),
        isReady(plan.child),
      );
      return;
    case 'keep-flat':
      desire(rsp, key, keepChild(cache, plan.cluster, plan.child), isReady(plan.child));
      return;
    case 'upgrade':
      if (plan.child) desire(rsp, key, keepChild(cache, plan.cluster, plan.child), isReady(plan.child));
      for (const legacy of keepLegacy(plan.cluster, plan.legacy)) desire(rsp, legacy.key, legacy.resource, legacy.ready);
      return;
  }
}

/**
 * One entry per cluster, sorted by name: a cluster on the cache reads its own
 * child (or, while upstream's Objects are handed over, Pending); a shard's
 * cluster reads the shard's entry, which is its child's report (or what it
 * inherits while handed over).
 */
function rollUp(
  cache: ModelCache,
  plans: readonly ClusterPlan[],
  observed: ObservedComposed,
  holder: ReadonlyMap<string, number>,
  refused: ReportProblem[],
): ClusterEntry[] {
  const entries: ClusterEntry[] = [];
  for (const plan of plans) {
    switch (plan.action) {
      case 'member': {
        const index = holder.get(plan.cluster);
        const shard = index === undefined ? undefined : observed.shards.get(index);
        const entry = shardEntry(cache, plan.cluster, shard, index ?? 0, refused);
        // Said here at once, not a round later when the shard has seen it; never twice.
        if (plan.keep !== undefined && !(entry.state.message ?? '').startsWith(plan.keep)) entry.note = plan.keep;
        entries.push(entry);
        break;
      }
      case 'handover':
        entries.push(childEntry(cache, plan.cluster, plan.child, refused));
        break;
      case 'keep-flat':
        entries.push({ ...childEntry(cache, plan.cluster, plan.child, refused), note: plan.note });
        break;
      case 'upgrade': {
        // Not what the old layout last said (it may have said Ready): the child re-stages in the hub layout,
        // and a cluster is never reported Ready before its child is.
        const entry = plan.child
          ? childEntry(cache, plan.cluster, plan.child, refused)
          : { name: plan.cluster, state: { phase: 'Pending' as const } };
        entries.push({ ...entry, note: plan.note });
        break;
      }
    }
  }
  return entries.sort((a, b) => compareNames(a.name, b.name));
}

function childEntry(cache: ModelCache, cluster: string, child: JsonObject, refused: ReportProblem[]): ClusterEntry {
  const status = getIn(child, 'status');
  const state: ClusterCacheState =
    typeof getIn(status, 'phase') === 'string'
      ? checked(status, `the status of ModelCacheHydration ${hydrationName(cache.namespace, cache.name, cluster)}`, refused)
      : {
          phase: 'Pending',
          message: `waiting for ModelCacheHydration ${hydrationName(cache.namespace, cache.name, cluster)} to report its status`,
        };
  const entry: ClusterEntry = { name: cluster, state };
  const token = conditionOf(child, CHILD_CONDITION);
  if (token?.reason === AUTH_MISSING_REASON && token.status !== 'True') {
    entry.authMissing = token.message ?? state.message ?? 'the authSecret token is missing';
  }
  return entry;
}

/** A status read as checked; what fails goes to `refused`. */
function checked(status: unknown, label: string, refused: ReportProblem[]): ClusterCacheState {
  const { state, problems } = readCacheStateChecked(status, label);
  refused.push(...problems);
  return state;
}

function shardEntry(
  cache: ModelCache,
  cluster: string,
  shard: ObservedShard | undefined,
  index: number,
  refused: ReportProblem[],
): ClusterEntry {
  const raw = shard?.entries.get(cluster);
  if (raw === undefined) {
    return {
      name: cluster,
      state: { phase: 'Pending', message: `waiting for ModelCacheShard ${shardName(cache.namespace, cache.name, index)} to stamp it` },
    };
  }
  // The shard's entry already carries its note in the message: copied as it is.
  const label = `ModelCacheShard ${shardName(cache.namespace, cache.name, index)}'s entry for ${cluster}`;
  const entry: ClusterEntry = { name: cluster, state: checked(raw, label, refused) };
  if (shard?.authMissing.has(cluster)) entry.authMissing = entry.state.message ?? 'the authSecret token is missing';
  return entry;
}

/**
 * Above CLUSTER_LIST_LIMIT: the clusters not Ready or unreachable (Failed
 * first, then unreachable, then by name; at most NOT_READY_LISTED) and those
 * being handed over, by name.
 */
function listedEntries(entries: readonly ClusterEntry[], steps: ReadonlyMap<string, HandOverStep>): ClusterEntry[] {
  const rank = (entry: ClusterEntry): number => (entry.state.phase === 'Failed' ? 0 : entry.state.unreachable !== undefined ? 1 : 2);
  const notReady = entries
    .filter((entry) => entry.state.phase !== 'Ready' || entry.state.unreachable !== undefined)
    .sort((a, b) => rank(a) - rank(b) || compareNames(a.name, b.name))
    .slice(0, NOT_READY_LISTED);
  const chosen = new Set(notReady.map((entry) => entry.name));
  for (const [cluster, step] of steps) if (step !== 'wait') chosen.add(cluster);
  return entries.filter((entry) => chosen.has(entry.name));
}
