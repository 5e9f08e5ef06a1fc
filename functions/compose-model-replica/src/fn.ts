// compose-model-replica: serve a model on one cluster, starting no engine
// before the model's cache is Ready there.
//
// Resolve the replica, its InferenceCluster and its ModelCache; decide
// whether it may serve; compose the engines (a Deployment per Standalone
// engine, a LeaderWorkerSet per Leader/Worker gang, their DRA claim
// templates) and the unified routing in front of them; report.

import {
  InputError,
  KIND,
  MODELPLANE_API_VERSION,
  compareNames,
  desire,
  isObject,
  newResponse,
  normalEvent,
  readComposite,
  readInferenceCluster,
  requireResources,
  requiredOne,
  selectByName,
  setCompositeReady,
  type InferenceCluster,
  type JsonObject,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { CACHE_REASON, decideCache } from './cache.js';
import type { Composed } from './composed.js';
import { REASON, composingEvent, markReady, notServing, warnOnce, workloadConditions, type Observed } from './conditions.js';
import { leaderWorkerSet } from './leader-worker-set.js';
import { USAGE_KEY, workloadKeys } from './names.js';
import { nativeWorkload } from './native.js';
import { cacheShaping, type CacheShaping } from './pod.js';
import { gatewayOf, unifiedRouting } from './routing.js';
import { readReplica, type Replica } from './spec.js';
import { cacheUsage, keepObserved } from './usage.js';

/** The stack every cluster runs unless it says otherwise (upstream's default). */
const STANDARD_STACK = 'Standard';

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const replica = readReplica(xr);
  if (replica.spec.servingMode === 'PrefillDecode') {
    throw new InputError(
      'spec.serving.mode',
      'PrefillDecode is not supported by compose-model-replica yet (disaggregated serving: the prefill/decode sidecar, NIXL and the disaggregated endpoint picker come later); use Unified',
    );
  }

  // Resolve: the cluster, and the cache when the replica names one, asked for together so the second call is the last.
  const cacheName = replica.spec.modelCacheRef?.name;
  const selectors: Record<string, ResourceSelector> = {
    cluster: selectByName(MODELPLANE_API_VERSION, KIND.InferenceCluster, replica.spec.clusterName),
  };
  if (cacheName !== undefined) selectors['cache'] = selectByName(MODELPLANE_API_VERSION, KIND.ModelCache, cacheName, replica.namespace);
  requireResources(rsp, selectors);
  const clusterFound = requiredOne(req, 'cluster');
  const cacheFound = cacheName === undefined ? undefined : requiredOne(req, 'cache');
  if (!clusterFound.fetched || (cacheFound !== undefined && !cacheFound.fetched)) return rsp;

  const observed = observedResources(req);
  const cluster = clusterFound.item === undefined ? undefined : readInferenceCluster(clusterFound.item);
  if (cluster?.stack !== undefined && cluster.stack !== STANDARD_STACK) {
    throw new InputError(
      `InferenceCluster ${cluster.name} spec.stack`,
      `is ${cluster.stack}: compose-model-replica serves only on the ${STANDARD_STACK} stack yet (the Dynamo stack's Grove PodCliqueSet and ModelExpress come later); place this replica on a ${STANDARD_STACK} cluster`,
    );
  }

  // Decide: a cluster we can reach, then (with a cache) an entry Ready with a mount we accept.
  if (cluster?.providerConfigName === undefined) {
    const why =
      cluster === undefined
        ? `InferenceCluster ${replica.spec.clusterName} not found: create it, or correct spec.clusterName`
        : `InferenceCluster ${cluster.name} reports no status.providerConfigRef.name yet: it is still being provisioned`;
    notServing(
      rsp,
      { reason: REASON.waitingForCluster, message: why },
      { reason: REASON.waitingForModel, message: `no engine is composed until the cluster can be reached: ${why}` },
    );
    normalEvent(
      rsp,
      REASON.waitingForCluster,
      cluster === undefined ? 'Waiting for cluster to be resolved' : 'Waiting for cluster providerConfigRef',
    );
    hold(rsp, replica, observed);
    return rsp;
  }

  let cache: CacheShaping | undefined;
  if (cacheName !== undefined) {
    const decision = decideCache(replica, cacheName, cacheFound?.fetched ? cacheFound.item : undefined);
    if (!decision.serve) {
      // A Failed entry fails the model too, with the entry's own message; every other case is a wait for the cache.
      const failed = decision.reason === CACHE_REASON.failed;
      notServing(
        rsp,
        { reason: decision.reason, message: decision.message },
        failed
          ? { reason: decision.reason, message: decision.message }
          : {
              reason: REASON.waitingForModel,
              message: `no engine is started until ModelCache ${cacheName} can be mounted on ${cluster.name}: ${decision.message}`,
            },
      );
      if (decision.warn) warnOnce(rsp, xr.resource, decision.reason, decision.message);
      hold(rsp, replica, observed);
      return rsp;
    }
    cache = cacheShaping(decision.mount);
  }

  // Compose: each engine's workload and claims, the routing in front of them, and the cache's Usage.
  for (const [key, resource] of serving(replica, cluster, cluster.providerConfigName, cache)) desire(rsp, key, resource);
  if (cacheName !== undefined) desire(rsp, USAGE_KEY, cacheUsage(replica, cacheName));

  // Report.
  const keys = workloadKeys(replica);
  composingEvent(rsp, observed, keys, replica.spec.engines[0]!.firstImage, replica.spec.clusterName);
  workloadConditions(rsp, observed, keys, replica.spec.clusterName);
  markReady(rsp, observed);
  return rsp;
}

function serving(replica: Replica, cluster: InferenceCluster, providerConfig: string, cache: CacheShaping | undefined): Composed {
  const composed: Composed = [];
  for (const engine of replica.spec.engines) {
    composed.push(
      ...(engine.shape === 'Standalone'
        ? nativeWorkload(providerConfig, replica, engine, cache)
        : leaderWorkerSet(providerConfig, replica, engine, cache)),
    );
  }
  composed.push(...unifiedRouting(providerConfig, replica, gatewayOf(cluster)));
  return composed;
}

/**
 * Not serving yet (or not any more): start nothing new, but keep everything
 * already composed and observed exactly as it is, so a cluster that is
 * briefly unreadable or a cache that flaps never tears down a serving model.
 * The Usage is composed whenever a cache is referenced. The XR is not ready.
 */
function hold(rsp: RunFunctionResponse, replica: Replica, observed: Observed): void {
  for (const [key, resource] of observed) desire(rsp, key, keepObserved(resource));
  const cacheName = replica.spec.modelCacheRef?.name;
  if (cacheName !== undefined) desire(rsp, USAGE_KEY, cacheUsage(replica, cacheName));
  markReady(rsp, observed);
  setCompositeReady(rsp, false);
}

/**
 * By key, in byte order: a hold desires them again in this order, and
 * Crossplane sends its map in any order, so the same request must not get
 * its keys back in another.
 */
function observedResources(req: RunFunctionRequest): Observed {
  const observed = new Map<string, JsonObject>();
  const resources = req.observed?.resources ?? {};
  for (const key of Object.keys(resources).sort(compareNames)) {
    const resource: unknown = resources[key]?.resource;
    if (isObject(resource)) observed.set(key, resource);
  }
  return observed;
}
