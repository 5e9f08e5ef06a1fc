// The two Jobs this function runs on a workload cluster (the HuggingFace
// download and the OCI resolver) share a name per cache, and a Job's pod
// template can't change. So each Job carries the artifact it works for, and an
// observed Job for another artifact (the repo or reference changed while an
// old Job was still there) is never read as this artifact's result.

import type { V1ObjectMeta } from '@kubernetes/client-node';
import { conditionOf, getString, remoteManifest, type JsonObject } from '#lib';

/** On each Job: the artifact it stages or resolves ("repo[@revision]" or the OCI reference). */
export const ARTIFACT_ANNOTATION = 'modelplane.ai/artifact';

export type JobState =
  | { state: 'absent' }
  /** There, but for another artifact: it finishes and its TTL removes it, then ours is created. */
  | { state: 'stale'; artifact: string }
  | { state: 'running' }
  | { state: 'complete' }
  | { state: 'failed'; why: string };

export function jobState(observed: JsonObject | undefined, artifact: string): JobState {
  const job = remoteManifest(observed);
  if (!job) return { state: 'absent' };
  const runsFor = getString(job, 'metadata', 'annotations', ARTIFACT_ANNOTATION);
  if (runsFor !== artifact) return { state: 'stale', artifact: runsFor ?? 'an earlier release' };
  const failed = conditionOf(job, 'Failed');
  if (failed?.status === 'True') return { state: 'failed', why: describeCondition(failed.reason, failed.message) };
  if (conditionOf(job, 'Complete')?.status === 'True') return { state: 'complete' };
  return { state: 'running' };
}

/** "BackoffLimitExceeded: Job has reached the specified backoff limit", or whichever half is there. */
function describeCondition(reason: string | undefined, message: string | undefined): string {
  if (reason && message) return `${reason}: ${message}`;
  return reason ?? message ?? 'no reason given';
}

/** A Job manifest's metadata: the cache label, and the artifact annotation. */
export function jobMetadata(name: string, namespace: string, labels: Record<string, string>, artifact: string): V1ObjectMeta {
  return { name, namespace, labels: { ...labels }, annotations: { [ARTIFACT_ANNOTATION]: artifact } };
}
