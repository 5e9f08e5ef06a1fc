// The roll-up's shared pieces: one `status.clusters[]` entry per cluster,
// copied from what its child reports (the contract: unchanged, through the
// library's readCacheState/cacheStateFields), and the `summary` a person
// reads first. A shard builds its entries from its children (shard/fn.ts),
// a cache from its shards' entries (cache.ts).

import { ENTRY_MESSAGE_MAX, cacheStateFields, percentOf, type ClusterCacheState, type JsonObject, type Phase } from '#lib';

export interface ClusterEntry {
  name: string;
  /** What the child reports (Pending while there is no child to report, e.g. during the hand-over from the old layout). */
  state: ClusterCacheState;
  /** Why this cluster's child is kept although it would not be stamped now; shown first in its message. */
  note?: string;
  /** The child reports its token missing: its own words. */
  authMissing?: string;
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
  const own = entry.state.message;
  const message = entry.note === undefined ? own : own === undefined ? entry.note : `${entry.note}; ${own}`;
  return message === undefined ? {} : { message: boundedMessage(message) };
}

/** A child's words, cut to ENTRY_MESSAGE_MAX characters: a parent's status never grows past its bound. */
export function boundedMessage(message: string): string {
  return message.length <= ENTRY_MESSAGE_MAX ? message : `${message.slice(0, ENTRY_MESSAGE_MAX - 1)}…`;
}

/** How many clusters are in each phase. */
export function phaseCounts(entries: readonly { state: { phase: Phase } }[]): Record<Phase, number> {
  const counts: Record<Phase, number> = { Pending: 0, Hydrating: 0, Ready: 0, Failed: 0 };
  for (const entry of entries) counts[entry.state.phase] += 1;
  return counts;
}

/** The clusters whose Objects can't reach them (their phase as last seen stands). */
export function unreachableEntries<T extends { state: ClusterCacheState }>(entries: readonly T[]): T[] {
  return entries.filter((entry) => entry.state.unreachable !== undefined);
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
