// compose-model-cache: fan a ModelCache out to one ModelCacheHydration per
// selected cluster, and roll their status up.
//
// Resolve (the spec, the clusters, the replicas, what was composed before),
// decide per cluster (plan.ts), compose the children, then report: status,
// conditions, readiness, events.

import {
  KIND,
  MODELPLANE_API_VERSION,
  artifactLabel,
  conditionIsTrue,
  desire,
  isReady,
  newResponse,
  readComposite,
  requireResources,
  requiredResources,
  requirementLabels,
  selectByLabels,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  type JsonObject,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { childStamper, keepChild } from './child.js';
import { REASON, artifactReady, clustersMatched } from './conditions.js';
import { emitEvents } from './events.js';
import { resolveFootprint } from './footprint.js';
import { childKey, readObserved } from './observed.js';
import { planClusters, type ClusterPlan } from './plan.js';
import { replicasByCluster } from './reclaim.js';
import { rollUp, statusEntry, summary } from './rollup.js';
import { parseModelCache, type ModelCache } from './spec.js';
import { keepLegacy } from './upgrade.js';

const CLUSTERS = 'clusters';
const REPLICAS = 'replicas';

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

export function compose(req: RunFunctionRequest): RunFunctionResponse {
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

  // Decide.
  const plans = planClusters({ footprint, observed, inUse: replicasByCluster(replicas.items, cache) });

  // Compose.
  const stamp = childStamper(cache);
  for (const plan of plans) composeCluster(rsp, cache, plan, stamp);

  // Report.
  const entries = rollUp(cache, plans);
  setCompositeStatus(rsp, { summary: summary(entries), clusters: entries.map(statusEntry) });
  setCondition(rsp, clustersMatched(footprint));
  const artifact = artifactReady(footprint, entries);
  setCondition(rsp, artifact);
  const staged = artifact.reason === REASON.Staged;
  // Explicitly false otherwise: with no composed resources Crossplane would call the XR ready.
  setCompositeReady(rsp, staged);
  emitEvents(rsp, {
    artifact: artifactLabel(cache.source),
    stamped: plans.filter((plan) => plan.action === 'stamp').map((plan) => plan.cluster),
    firstCompose: observed.children.size === 0 && observed.legacy.size === 0,
    entries,
    lastStatus: xr.status,
    staged,
    wasReady: conditionIsTrue(xr.resource, 'Ready'),
  });
  return rsp;
}

/** A child is marked ready only when the observed child says Ready=True; legacy Objects likewise. */
function composeCluster(rsp: RunFunctionResponse, cache: ModelCache, plan: ClusterPlan, stamp: (cluster: string) => JsonObject): void {
  const key = childKey(plan.cluster);
  if (plan.action === 'stamp') {
    desire(rsp, key, stamp(plan.cluster), plan.child !== undefined && isReady(plan.child));
    return;
  }
  if (plan.child) desire(rsp, key, keepChild(cache, plan.cluster, plan.child), isReady(plan.child));
  if (plan.action === 'upgrade') {
    for (const legacy of keepLegacy(plan.cluster, plan.legacy)) desire(rsp, legacy.key, legacy.resource, legacy.ready);
  }
}
