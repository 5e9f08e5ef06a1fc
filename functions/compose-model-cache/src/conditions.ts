// The two conditions a person reads on a ModelCache: which clusters it matched
// (and why any selected cluster got nothing), and whether the artifact is
// staged everywhere, with the first thing that stops it.

import type { ConditionSpec } from '#lib';
import type { Footprint } from './footprint.js';
import { commitsOf, readyCount, unreachableEntries, type ClusterEntry } from './rollup.js';

export const CLUSTERS_MATCHED = 'ClustersMatched';
export const ARTIFACT_READY = 'ArtifactReady';

export const REASON = {
  Matched: 'Matched',
  NoClusters: 'NoClusters',
  HydrationFailed: 'HydrationFailed',
  AuthSecretMissing: 'AuthSecretMissing',
  Staged: 'Staged',
  Partial: 'Partial',
  Hydrating: 'Hydrating',
} as const;

/**
 * How many names a message lists before it says "and N more". A message is
 * read by a person on the XR; a thousand names don't help one, and the count
 * and `status.clusters[]` hold the rest.
 */
export const LISTED_NAMES = 20;

export function nameList(names: readonly string[]): string {
  const shown = names.slice(0, LISTED_NAMES).join(', ');
  return names.length > LISTED_NAMES ? `${shown}, and ${names.length - LISTED_NAMES} more` : shown;
}

function clusters(count: number): string {
  return `${count} cluster${count === 1 ? '' : 's'}`;
}

/** The selected clusters that got no child, and why: said in both of ClustersMatched's forms. */
function unstaged(footprint: Footprint): string {
  let out = '';
  if (footprint.unprovisioned.length > 0) {
    out += `; selected but not provisioned yet (no status.providerConfigRef.name), so not staged: ${nameList(footprint.unprovisioned)}`;
  }
  if (footprint.badNames.length > 0) out += `; selected but not staged, their names are not DNS labels: ${nameList(footprint.badNames)}`;
  return out;
}

export function clustersMatched(footprint: Footprint): ConditionSpec {
  if (footprint.stamped.length === 0) {
    return {
      type: CLUSTERS_MATCHED,
      status: false,
      reason: REASON.NoClusters,
      message: `no provisioned InferenceCluster matches spec.clusterSelector${unstaged(footprint)}`,
    };
  }
  return {
    type: CLUSTERS_MATCHED,
    status: true,
    reason: REASON.Matched,
    message: `${clusters(footprint.stamped.length)} selected: ${nameList(footprint.stamped)}${unstaged(footprint)}`,
  };
}

/** One line per cluster, "<cluster>: <message>". */
function perCluster(entries: readonly ClusterEntry[], message: (entry: ClusterEntry) => string): string {
  const lines = entries.slice(0, LISTED_NAMES).map((entry) => `${entry.name}: ${message(entry)}`);
  if (entries.length > LISTED_NAMES) lines.push(`and ${entries.length - LISTED_NAMES} more`);
  return lines.join('; ');
}

/**
 * ArtifactReady, the first that applies: no footprint; a failed cluster; a
 * cluster without its token; all Ready; some Ready; none yet.
 */
export function artifactReady(footprint: Footprint, entries: readonly ClusterEntry[]): ConditionSpec {
  const condition = (status: boolean, reason: string, message: string): ConditionSpec => ({
    type: ARTIFACT_READY,
    status,
    reason,
    message,
  });
  if (footprint.stamped.length === 0) {
    return condition(false, REASON.NoClusters, 'nothing to stage: no provisioned InferenceCluster matches spec.clusterSelector');
  }
  const failed = entries.filter((entry) => entry.state.phase === 'Failed');
  if (failed.length > 0) {
    return condition(
      false,
      REASON.HydrationFailed,
      perCluster(failed, (entry) => entry.state.message ?? entry.note ?? 'failed') + unreachableNote(entries),
    );
  }
  const noToken = entries.filter((entry) => entry.authMissing !== undefined);
  if (noToken.length > 0) {
    return condition(false, REASON.AuthSecretMissing, perCluster(noToken, (entry) => entry.authMissing ?? '') + unreachableNote(entries));
  }
  const ready = readyCount(entries);
  if (entries.length > 0 && ready === entries.length) {
    return condition(true, REASON.Staged, `staged on all ${clusters(entries.length)}${commitSkew(entries)}${unreachableNote(entries)}`);
  }
  const waiting = entries.filter((entry) => entry.state.phase !== 'Ready').map((entry) => `${entry.name} (${entry.state.phase})`);
  const message = `${ready}/${entries.length} clusters ready; waiting for ${nameList(waiting)}`;
  const notes = commitSkew(entries) + unreachableNote(entries);
  return ready > 0 ? condition(false, REASON.Partial, message + notes) : condition(false, REASON.Hydrating, message + notes);
}

/**
 * The clusters that can't be reached, and since when: said beside whatever
 * else ArtifactReady says, since each keeps the phase it was last seen in.
 */
export function unreachableNote(entries: readonly ClusterEntry[]): string {
  const unreachable = unreachableEntries(entries);
  if (unreachable.length === 0) return '';
  const named = unreachable.map((entry) => {
    const since = entry.state.unreachable?.since;
    return since === undefined ? entry.name : `${entry.name} since ${since}`;
  });
  return `; unreachable (${unreachable.length}, each as last seen): ${nameList(named)}`;
}

/**
 * A moving branch or tag resolved to different commits on clusters staged at
 * different times: each serves its own snapshot, so say which has which.
 */
function commitSkew(entries: readonly ClusterEntry[]): string {
  const commits = commitsOf(entries);
  if (commits.size < 2) return '';
  const listed = [...commits.entries()].map(([commit, names]) => `${commit.slice(0, 12)} on ${nameList(names)}`);
  return `; the revision resolved to ${commits.size} different commits: ${listed.join('; ')}`;
}
