// A ModelCacheShard: up to 100 clusters of one ModelCache (docs/design/fleet.md).
// The cache decides which clusters are here; the shard stamps one
// ModelCacheHydration for each, keeps what it is told to keep, drops only what
// it is told to drop, and rolls its children's status up for the cache.
//
// Resolve (the spec, the children it composed, any child it is to take
// over), compose the children, then report.

import {
  KIND,
  MODELPLANE_API_VERSION,
  conditionOf,
  desire,
  getIn,
  getString,
  hydrationName,
  isReady,
  newResponse,
  readCacheState,
  readCacheStateChecked,
  readComposite,
  reportsCondition,
  requireResources,
  requiredOne,
  selectByName,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  type ClusterCacheState,
  type JsonObject,
  type ReportProblem,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { childStamper, keepChild } from '../child.js';
import { ARTIFACT_READY, REASON, unreachableNote } from '../conditions.js';
import { childKey, readObserved } from '../observed.js';
import { phaseCounts, statusEntry, summary, unreachableEntries, type ClusterEntry } from '../rollup.js';
import { parseShard, type ModelCacheShard, type ShardMember } from './spec.js';

/** The requirement key of the child a shard is to take over from the layout before shards. */
const handOverKey = (cluster: string): string => `hand-over-${cluster}`;

/** The child's condition whose reason says it has no token (the contract's signal). */
const AUTH_MISSING_REASON = 'AuthSecretMissing';

export function composeShard(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const shard = parseShard(xr);
  const { children } = readObserved(req);

  // A cluster being handed over is stamped only once the child it replaces is
  // gone: while the cache still controls it, a child of the same name here
  // would be refused (an object has one controller). Ask for each by name.
  const handingOver = shard.members.filter((member) => member.inheritedStatus !== undefined && !children.has(member.name));
  const selectors: Record<string, ResourceSelector> = {};
  for (const member of handingOver) {
    selectors[handOverKey(member.name)] = selectByName(
      MODELPLANE_API_VERSION,
      KIND.ModelCacheHydration,
      hydrationName(shard.cache.namespace, shard.cache.name, member.name),
      shard.cache.namespace,
    );
  }
  requireResources(rsp, selectors);
  const stillHeld = new Set<string>();
  for (const member of handingOver) {
    const found = requiredOne(req, handOverKey(member.name));
    if (!found.fetched) return rsp; // not fetched yet: change nothing else
    if (found.item !== undefined && controlledByAnother(found.item, getString(xr.resource, 'metadata', 'uid'))) stillHeld.add(member.name);
  }

  // Compose.
  const stamp = childStamper(shard.cache);
  const entries: ClusterEntry[] = [];
  const refused: ReportProblem[] = [];
  for (const member of shard.members) {
    const child = children.get(member.name);
    entries.push(entryOf(shard, member, child, stillHeld.has(member.name), refused));
    if (stillHeld.has(member.name)) continue;
    if (member.keep) {
      if (child) desire(rsp, childKey(member.name), keepChild(shard.cache, member.name, child), isReady(child));
      continue;
    }
    desire(
      rsp,
      childKey(member.name),
      stamp(member.name, member.inheritedStatus ? { inheritedStatus: member.inheritedStatus } : {}),
      child !== undefined && isReady(child),
    );
  }
  // A child neither listed nor dropped stays as it is: only the cache's word drops one.
  const listed = new Set(shard.members.map((member) => member.name));
  for (const [cluster, child] of [...children].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (listed.has(cluster) || shard.drop.has(cluster)) continue;
    desire(rsp, childKey(cluster), keepChild(shard.cache, cluster, child), isReady(child));
    entries.push({ name: cluster, state: stateOfChild(child, refused) ?? pending(shard, cluster), note: UNLISTED_NOTE(shard.cache.name) });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  // Report.
  const counts = phaseCounts(entries);
  const composed = entries.filter((entry) => stateOfChild(children.get(entry.name)) !== undefined).map((entry) => entry.name);
  const authMissing = entries.filter((entry) => entry.authMissing !== undefined).map((entry) => entry.name);
  const unreachable = unreachableEntries(entries);
  setCompositeStatus(rsp, {
    summary: {
      ...summary(entries),
      clusters: entries.length,
      pending: counts.Pending,
      hydrating: counts.Hydrating,
      failed: counts.Failed,
      // Only when some cluster can't be reached: absent means none (as authMissing).
      unreachable: unreachable.length > 0 ? unreachable.length : undefined,
    },
    clusters: entries.map(statusEntry),
    composed,
    authMissing: authMissing.length > 0 ? authMissing : undefined,
  });
  const allReady = entries.length > 0 && counts.Ready === entries.length;
  setCondition(rsp, {
    type: ARTIFACT_READY,
    status: allReady,
    reason: allReady ? REASON.Staged : counts.Failed > 0 ? REASON.HydrationFailed : counts.Ready > 0 ? REASON.Partial : REASON.Hydrating,
    message: `${counts.Ready}/${entries.length} clusters ready${counts.Failed > 0 ? `, ${counts.Failed} failed` : ''}${unreachableNote(unreachable)}`,
  });
  // What the children wrote, as checked: a field that failed is not rolled up, and is named here.
  setCondition(rsp, reportsCondition(refused, `every child's status passed its checks`));
  setCompositeReady(rsp, allReady);
  return rsp;
}

const UNLISTED_NOTE = (cache: string): string =>
  `kept as it was: not assigned to this shard; waiting for ModelCache ${cache} to assign or drop it`;

/** Whether `object` has a controller, and it is not the XR with that uid. */
function controlledByAnother(object: JsonObject, uid: string | undefined): boolean {
  const refs = getIn(object, 'metadata', 'ownerReferences');
  if (!Array.isArray(refs)) return false;
  return refs.some((ref) => getIn(ref, 'controller') === true && getIn(ref, 'uid') !== uid);
}

/** The child's own report, once it has one, checked; what fails goes to `refused`. */
function stateOfChild(child: JsonObject | undefined, refused?: ReportProblem[]): ClusterCacheState | undefined {
  if (child === undefined || getString(child, 'status', 'phase') === undefined) return undefined;
  const name = getString(child, 'metadata', 'name') ?? 'a ModelCacheHydration';
  const { state, problems } = readCacheStateChecked(getIn(child, 'status'), `the status of ${name}`);
  refused?.push(...problems);
  return state;
}

function pending(shard: ModelCacheShard, cluster: string): ClusterCacheState {
  return {
    phase: 'Pending',
    message: `waiting for ModelCacheHydration ${hydrationName(shard.cache.namespace, shard.cache.name, cluster)} to report its status`,
  };
}

/**
 * A cluster's entry: its child's report; while it is handed over and its
 * child has not reported yet, the status it inherits (so the cluster stays
 * what it was, Ready with its mount included); else Pending.
 */
function entryOf(
  shard: ModelCacheShard,
  member: ShardMember,
  child: JsonObject | undefined,
  heldElsewhere: boolean,
  refused: ReportProblem[],
): ClusterEntry {
  const own = stateOfChild(child, refused);
  const state = own ?? (member.inheritedStatus ? readCacheState(member.inheritedStatus) : pending(shard, member.name));
  const entry: ClusterEntry = { name: member.name, state };
  if (member.note !== undefined) entry.note = member.note;
  if (own === undefined && heldElsewhere && state.phase !== 'Ready') {
    entry.note = `handing over from the ModelCache to this shard${member.note === undefined ? '' : `; ${member.note}`}`;
  }
  const token = child ? conditionOf(child, ARTIFACT_READY) : undefined;
  if (token?.reason === AUTH_MISSING_REASON && token.status !== 'True') {
    entry.authMissing = token.message ?? state.message ?? 'the authSecret token is missing';
  }
  return entry;
}
