// compose-model-replica: serve a model on one cluster, starting no engine
// before the model's cache is Ready there.
//
// Resolve the replica, its InferenceCluster and its ModelCache; decide
// whether it may serve; compose the engines (a Deployment per Standalone
// engine; a LeaderWorkerSet per Leader/Worker gang on the Standard stack, a
// Grove PodCliqueSet on Dynamo; their DRA claim templates) and the routing in
// front of them (Unified, or PrefillDecode's disaggregated picker); report.

import {
  InputError,
  KIND,
  MODELPLANE_API_VERSION,
  compareNames,
  composedManifest,
  desire,
  getString,
  hydrationName,
  isObject,
  leaveToOwner,
  newResponse,
  normalEvent,
  parseReplicaSettings,
  readComposite,
  readInferenceCluster,
  requireResources,
  requiredOne,
  selectByName,
  setCompositeReady,
  warningEvent,
  withOwner,
  type CacheMount,
  type InferenceCluster,
  type JsonObject,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { CACHE_REASON, decideCache } from './cache.js';
import type { Composed } from './composed.js';
import { REASON, composingEvent, markReady, notServing, warnOnce, workloadConditions, type Observed } from './conditions.js';
import { phaseShapings, type PhaseShaping } from './disaggregated.js';
import { NAMESPACE_MISMATCH, WORKLOAD_NAMESPACE_KEY, placeReplica } from './placement.js';
import { GROVE_KIND, podCliqueSet } from './grove.js';
import { LWS_KIND, leaderWorkerSet } from './leader-worker-set.js';
import { USAGE_KEY, workloadKey, workloadKeys } from './names.js';
import { nativeWorkload } from './native.js';
import { cacheShaping, type CacheShaping } from './pod.js';
import { disaggregatedRouting, gatewayOf, unifiedRouting } from './routing.js';
import { readReplica, type Replica } from './spec.js';
import { DEFAULT_STACK, stackOf, stackShaping, type Stack } from './stack.js';
import { cacheUsage, keepObserved } from './usage.js';
import { decideNaming, replicaOwner } from './naming.js';

/**
 * How big a nested part of the request its server decodes with what holds it
 * (the runtime's default is 1,024 bytes). The replica reads a few fields of
 * big objects (its cache's status entry for one cluster, a workload's
 * conditions) and passes the rest by, so leaving parts over 256 bytes for a
 * first read that never comes is cheaper. Measured in process on the realistic
 * steady request: 19% faster at N = 10, 37% at 100, 45% at 1,000; the cache
 * and hydration functions read most of what they are sent and got 15-45%
 * slower on their lean requests with 256, so they keep the default.
 */
export const DECODED_AT_ONCE = 256;

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  // The platform team's settings first: a bad one is Fatal before anything is asked for.
  const settings = parseReplicaSettings(req.input);
  const replica = readReplica(xr);
  // Checked before anything is asked for: a decode --port the pods can't serve on is the user's to fix.
  const phases = replica.spec.servingMode === 'PrefillDecode' ? phaseShapings(replica) : new Map<string, PhaseShaping>();

  // Resolve: the cluster, and the cache when the replica names one, asked for together so the second call is the last.
  const cacheName = replica.spec.modelCacheRef?.name;
  const selectors: Record<string, ResourceSelector> = {
    cluster: selectByName(MODELPLANE_API_VERSION, KIND.InferenceCluster, replica.spec.clusterName),
  };
  if (cacheName !== undefined) {
    selectors['cache'] = selectByName(MODELPLANE_API_VERSION, KIND.ModelCache, cacheName, replica.namespace);
    // Where the cluster's entry lives at any fleet size: its ModelCacheHydration, named as its cache names it.
    const hydration = hydrationName(replica.namespace, cacheName, replica.spec.clusterName);
    selectors['hydration'] = selectByName(MODELPLANE_API_VERSION, KIND.ModelCacheHydration, hydration, replica.namespace);
  }
  requireResources(rsp, selectors);
  const clusterFound = requiredOne(req, 'cluster');
  const cacheFound = cacheName === undefined ? undefined : requiredOne(req, 'cache');
  const hydrationFound = cacheName === undefined ? undefined : requiredOne(req, 'hydration');
  if (
    !clusterFound.fetched ||
    (cacheFound !== undefined && !cacheFound.fetched) ||
    (hydrationFound !== undefined && !hydrationFound.fetched)
  )
    return rsp;

  const observed = observedResources(req);
  const cluster = clusterFound.item === undefined ? undefined : readInferenceCluster(clusterFound.item);
  const stack = cluster === undefined ? DEFAULT_STACK : stackOf(cluster);
  if (cluster !== undefined) checkGangsStayOnTheirStack(replica, cluster.name, stack, observed);

  // Names: this release's for anything new, upstream's for what already runs under them (naming.ts).
  const decided = decideNaming(replica, observed);
  const conflicts = new Set(decided.conflicts.map((c) => c.key));
  const named: Replica = { ...replica, naming: decided.naming };
  if (decided.conflicts.length > 0) {
    const where = replica.spec.clusterName;
    const [first] = decided.conflicts;
    const message = `${first!.title} on ${where} belongs to ${first!.owner}${decided.conflicts.length > 1 ? ` (and ${decided.conflicts.length - 1} more of this replica's objects to other owners)` : ''}: this replica leaves it as it is (observed only: never written, never deleted) and starts nothing; rename this ModelReplica, or remove what the other owns`;
    notServing(rsp, { reason: REASON.ownedElsewhere, message }, { reason: REASON.ownedElsewhere, message });
    warnOnce(rsp, xr.resource, REASON.ownedElsewhere, message);
    hold(rsp, replica, observed, conflicts);
    return rsp;
  }
  for (const moved of decided.movedAway) {
    warningEvent(
      rsp,
      REASON.ownedElsewhere,
      `${moved.title} on ${replica.spec.clusterName} was also written by ${moved.owner}: it is left to it, and this replica composes its own, ${moved.now}`,
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
    hold(rsp, replica, observed, conflicts);
    return rsp;
  }

  let cache: CacheShaping | undefined;
  let cacheMount: CacheMount | undefined;
  if (cacheName !== undefined) {
    const decision = decideCache(replica, cacheName, {
      cache: cacheFound?.fetched ? cacheFound.item : undefined,
      hydration: hydrationFound?.fetched ? hydrationFound.item : undefined,
      clusterLabels: cluster.labels,
    });
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
      hold(rsp, replica, observed, conflicts);
      return rsp;
    }
    cache = cacheShaping(decision.mount);
    cacheMount = decision.mount;
  }

  // Place: beside the cache, else where the engines run, else where the settings say (placement.ts).
  const placed = placeReplica({
    settings,
    replica: named,
    observed,
    providerConfig: cluster.providerConfigName,
    cluster: cluster.name,
    ...(cacheName !== undefined && cacheMount !== undefined ? { cache: { name: cacheName, mount: cacheMount } } : {}),
  });
  if (placed.warning !== undefined) warningEvent(rsp, NAMESPACE_MISMATCH, placed.warning);
  if (placed.namespaceObject) desire(rsp, WORKLOAD_NAMESPACE_KEY, placed.namespaceObject);

  // Compose: each engine's workload and claims, the routing in front of them, and the cache's Usage.
  // Every object on the cluster says whose it is (the owner's labels and annotation), so another XR can tell;
  // a Deployment that runs without the annotation keeps going without it (withOwner: its generation counts it).
  const owner = replicaOwner(replica);
  const shapes = replica.spec.servingMode === 'PrefillDecode' ? phaseShapings(placed.replica) : phases;
  for (const [key, resource] of serving(placed.replica, cluster, cluster.providerConfigName, stack, shapes, cache))
    desire(rsp, key, withOwner(resource, owner, observed.get(key)));
  if (cacheName !== undefined) desire(rsp, USAGE_KEY, cacheUsage(replica, cacheName));

  // Report.
  const keys = workloadKeys(replica);
  composingEvent(rsp, observed, keys, replica.spec.engines[0]!.firstImage, replica.spec.clusterName);
  workloadConditions(rsp, observed, keys, replica.spec.clusterName);
  markReady(rsp, observed);
  return rsp;
}

/**
 * Each engine on its backend (a Standalone engine: a Deployment on any stack;
 * a gang: a LeaderWorkerSet on Standard, a Grove PodCliqueSet on Dynamo),
 * shaped for its phase under PrefillDecode, then the routing in front.
 */
function serving(
  replica: Replica,
  cluster: InferenceCluster,
  providerConfig: string,
  stack: Stack,
  phases: ReadonlyMap<string, PhaseShaping>,
  cache: CacheShaping | undefined,
): Composed {
  const onStack = stackShaping(stack, replica);
  const composed: Composed = [];
  for (const engine of replica.spec.engines) {
    const phase = phases.get(engine.name);
    if (engine.shape === 'Standalone') composed.push(...nativeWorkload(providerConfig, replica, engine, cache, onStack, phase));
    else if (stack === 'Dynamo') composed.push(...podCliqueSet(providerConfig, replica, engine, cache, onStack, phase));
    else composed.push(...leaderWorkerSet(providerConfig, replica, engine, cache, phase));
  }
  const gateway = gatewayOf(cluster);
  composed.push(
    ...(replica.spec.servingMode === 'PrefillDecode'
      ? disaggregatedRouting(providerConfig, replica, gateway)
      : unifiedRouting(providerConfig, replica, gateway)),
  );
  return composed;
}

/** What runs a gang on each stack. */
const GANG_KIND: Record<Stack, string> = { Standard: LWS_KIND, Dynamo: GROVE_KIND };

/**
 * A cluster's stack is fixed (upstream's InferenceCluster refuses a change:
 * the cluster is recreated to change it). A gang composed for one stack and
 * now asked for on the other would be deleted and replaced by a different
 * kind under another name, taking a serving model down: refused instead,
 * changing nothing, until the replica is recreated or the stack restored.
 */
function checkGangsStayOnTheirStack(replica: Replica, clusterName: string, stack: Stack, observed: Observed): void {
  for (const engine of replica.spec.engines) {
    if (engine.shape !== 'Gang') continue;
    const kind = getString(composedManifest(observed.get(workloadKey(engine))), 'kind');
    const other = (Object.keys(GANG_KIND) as Stack[]).find((s) => s !== stack && GANG_KIND[s] === kind);
    if (other === undefined) continue;
    throw new InputError(
      `InferenceCluster ${clusterName} spec.stack`,
      `is ${stack}, but engine ${engine.name} already runs as a ${kind}, composed for the ${other} stack; a cluster's stack is fixed, so the running gang is kept as it is: restore spec.stack to ${other}, or recreate this ModelReplica to serve it as a ${GANG_KIND[stack]}`,
    );
  }
}

/**
 * Not serving yet (or not any more): start nothing new, but keep everything
 * already composed and observed exactly as it is, so a cluster that is
 * briefly unreadable or a cache that flaps never tears down a serving model.
 * An object another XR owns (`othersOwn`) is kept observe-only: never written,
 * and never deleted when this replica goes.
 * The Usage is composed whenever a cache is referenced. The XR is not ready.
 */
function hold(rsp: RunFunctionResponse, replica: Replica, observed: Observed, othersOwn: ReadonlySet<string> = new Set()): void {
  for (const [key, resource] of observed) desire(rsp, key, othersOwn.has(key) ? leaveToOwner(resource) : keepObserved(resource));
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
