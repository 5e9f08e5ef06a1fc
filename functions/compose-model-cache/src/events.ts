// Events, one-time transitions only: Crossplane calls every minute, and an event
// repeated each time would bury the ones that matter. A transition is told
// from what was observed: the children, and this XR's own last status and
// Ready condition.

import { cacheEntries, normalEvent, warningEvent, type RunFunctionResponse } from '#lib';
import { LISTED_NAMES, REASON, nameList } from './conditions.js';
import type { ClusterEntry } from './rollup.js';

export interface EventInput {
  /** What is staged, as a person names it: the repo, the reference or the claim. */
  artifact: string;
  /** Clusters whose child is stamped now. */
  stamped: readonly string[];
  /** Nothing was composed for this cache before (no child, no single-function Object observed). */
  firstCompose: boolean;
  entries: readonly ClusterEntry[];
  /** This XR's observed status: its `clusters[]` tells which clusters had failed before. */
  lastStatus: unknown;
  /** ArtifactReady is True/Staged now. */
  staged: boolean;
  /** This XR's observed Ready condition was True. */
  wasReady: boolean;
}

export function emitEvents(rsp: RunFunctionResponse, input: EventInput): void {
  if (input.firstCompose && input.stamped.length > 0) {
    // "1 clusters" as upstream writes it: the number is always digits and the noun never changes.
    normalEvent(rsp, 'Staging', `Staging ${input.artifact} to ${input.stamped.length} clusters: ${nameList(input.stamped)}`);
  }
  // One Warning per cluster that turned Failed since the last status, up to a
  // bound: a registry outage failing a thousand clusters at once is one story.
  // The last status is read only when something failed: in a healthy fleet, never.
  const failed = input.entries.filter((entry) => entry.state.phase === 'Failed');
  const failedBefore = new Set(
    failed.length === 0 ? [] : cacheEntries(input.lastStatus).flatMap((entry) => (entry.phase === 'Failed' ? [entry.name] : [])),
  );
  const newlyFailed = failed.filter((entry) => !failedBefore.has(entry.name));
  for (const entry of newlyFailed.slice(0, LISTED_NAMES)) {
    warningEvent(rsp, REASON.HydrationFailed, `Staging failed on ${entry.name}: ${entry.state.message ?? 'no reason reported'}`);
  }
  if (newlyFailed.length > LISTED_NAMES) {
    const rest = newlyFailed.slice(LISTED_NAMES).map((entry) => entry.name);
    warningEvent(rsp, REASON.HydrationFailed, `Staging also failed on ${rest.length} more clusters: ${nameList(rest)}`);
  }
  if (input.staged && !input.wasReady) {
    normalEvent(rsp, REASON.Staged, `Artifact staged on all ${input.entries.length} clusters`);
  }
}
