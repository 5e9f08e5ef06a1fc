// The roll-up: one `status.clusters[]` entry per child, copied from what the
// child reports (the contract: unchanged, through the library's
// readCacheState/cacheStateFields), and the `summary` a person reads first.

import {
  type ClusterCacheState,
  type JsonObject,
  cacheStateFields,
  conditionOf,
  getObject,
  getString,
  hydrationName,
  percentOf,
  readCacheState,
} from '#lib';
import type { ClusterPlan } from './plan.js';
import type { ModelCache } from './spec.js';

/** The child's condition whose reason says it has no token (the contract's signal). */
const CHILD_CONDITION = 'ArtifactReady';
const AUTH_MISSING_REASON = 'AuthSecretMissing';

export interface ClusterEntry {
  name: string;
  /** What the child reports (Pending while there is no child to report, e.g. during the hand-over from the old layout). */
  state: ClusterCacheState;
  /** Why this cluster's child is kept although it would not be stamped now; shown as its message. */
  note?: string;
  /** The child reports its token missing: its own words. */
  authMissing?: string;
}

/** The entries, in the plans' order (sorted by cluster name). */
export function rollUp(cache: ModelCache, plans: readonly ClusterPlan[]): ClusterEntry[] {
  return plans.map((plan) => {
    const entry: ClusterEntry = { name: plan.cluster, state: stateOf(cache, plan) };
    if (plan.action !== 'stamp') entry.note = plan.note;
    const tokenCondition = plan.child ? conditionOf(plan.child, CHILD_CONDITION) : undefined;
    if (tokenCondition?.reason === AUTH_MISSING_REASON && tokenCondition.status !== 'True') {
      entry.authMissing = tokenCondition.message ?? entry.state.message ?? 'the authSecret token is missing';
    }
    return entry;
  });
}

function stateOf(cache: ModelCache, plan: ClusterPlan): ClusterCacheState {
  if (plan.child) {
    const status = getObject(plan.child, 'status');
    if (getString(status, 'phase') !== undefined) return readCacheState(status);
  }
  if (plan.action === 'upgrade' && !plan.child) {
    // Not what the old layout last said (it may have said Ready): the child re-stages in the hub layout,
    // and a cluster is never reported Ready before its child is.
    return { phase: 'Pending' };
  }
  const child = getString(plan.child, 'metadata', 'name') ?? hydrationName(cache.namespace, cache.name, plan.cluster);
  return { phase: 'Pending', message: `waiting for ModelCacheHydration ${child} to report its status` };
}

/**
 * The status entry: name first, then the child's fields. A keep note comes
 * first in the message, then the child's own words, so a retained cluster that
 * failed still says why (a replica there reports this message).
 */
export function statusEntry(entry: ClusterEntry): JsonObject {
  return { name: entry.name, ...cacheStateFields({ ...entry.state, ...messageOf(entry) }) };
}

function messageOf(entry: ClusterEntry): { message?: string } {
  if (entry.note === undefined) return {};
  const own = entry.state.message;
  return { message: own === undefined ? entry.note : `${entry.note}; ${own}` };
}

export function readyCount(entries: readonly ClusterEntry[]): number {
  return entries.filter((entry) => entry.state.phase === 'Ready').length;
}

/**
 * `<#Ready>/<#children>`; with HuggingFace progress, the bytes over every
 * cluster that reports them (a cluster that hasn't reported yet isn't in
 * them) and their percent, `progress`, what `kubectl get` shows; and the
 * commit every cluster staged, when they agree.
 */
export function summary(entries: readonly ClusterEntry[]): JsonObject {
  const out: JsonObject = { ready: `${readyCount(entries)}/${entries.length}` };
  const reporting = entries.flatMap((entry) => (entry.state.progress ? [entry.state.progress] : []));
  if (reporting.length > 0) {
    const bytesDone = reporting.reduce((sum, p) => sum + p.bytesDone, 0);
    const bytesTotal = reporting.reduce((sum, p) => sum + p.bytesTotal, 0);
    const percent = percentOf(bytesDone, bytesTotal);
    const verified = entries.length > 0 && entries.every((entry) => entry.state.verified === true);
    out['progress'] = verified ? `${percent}%, verified` : `${percent}%`;
    out['bytesDone'] = bytesDone;
    out['bytesTotal'] = bytesTotal;
  }
  const commits = commitsOf(entries);
  if (commits.size === 1) out['commit'] = [...commits.keys()][0]!;
  return out;
}

/** Each commit a cluster staged (or is staging), and the clusters at it. */
export function commitsOf(entries: readonly ClusterEntry[]): Map<string, string[]> {
  const commits = new Map<string, string[]>();
  for (const entry of entries) {
    if (entry.state.commit === undefined) continue;
    commits.set(entry.state.commit, [...(commits.get(entry.state.commit) ?? []), entry.name]);
  }
  return commits;
}
