// The two Jobs this function runs on a workload cluster (the HuggingFace
// download and the OCI resolver) share a name per cache, and a Job's pod
// template can't change. So each Job carries the artifact it works for, the
// attempt it is, and (in its pod template, where no update can rewrite it)
// the retry round it belongs to. An observed Job for another artifact or
// another round is never read as this one's result: it finishes, its TTL
// removes it, then ours is created.

import type { V1ObjectMeta } from '@kubernetes/client-node';
import { conditionOf, getIn, getString, remoteManifest, type JsonObject } from '#lib';

/** On each Job: the artifact it stages or resolves ("repo[@revision]" or the OCI reference). */
export const ARTIFACT_ANNOTATION = 'modelplane.ai/artifact';
/** On each Job: which attempt at this artifact it is (1, 2, ...); a Job without it (an earlier release) is attempt 1. */
export const ATTEMPT_ANNOTATION = 'modelplane.ai/attempt';
/**
 * On the pod template of a Job started by a retry request: the request's value. In the template
 * because a template can't be updated: provider-kubernetes can't relabel a failed Job of an
 * earlier round as this round's, so that Job reads as stale until Kubernetes removes it.
 */
export const ROUND_ANNOTATION = 'modelplane.ai/retry-round';

export type JobState =
  | { state: 'absent' }
  /** There, but for another artifact or round: it finishes and its TTL removes it, then ours is created. */
  | { state: 'stale'; left: string; removal: string }
  | { state: 'running'; attempt: number }
  | { state: 'complete'; attempt: number }
  | { state: 'failed'; attempt: number; why: string };

export function jobState(observed: JsonObject | undefined, artifact: string, round: string | undefined): JobState {
  const job = remoteManifest(observed);
  if (!job) return { state: 'absent' };
  const ttl = getIn(job, 'spec', 'ttlSecondsAfterFinished');
  const removal = typeof ttl === 'number' ? `its TTL is ${ttl}s` : 'by its TTL';
  const runsFor = getString(job, 'metadata', 'annotations', ARTIFACT_ANNOTATION);
  if (runsFor !== artifact) return { state: 'stale', left: `left from ${runsFor ?? 'an earlier release'}`, removal };
  if (getString(job, 'spec', 'template', 'metadata', 'annotations', ROUND_ANNOTATION) !== round) {
    return { state: 'stale', left: 'left from before the retry request', removal };
  }
  const attempt = attemptOf(getString(job, 'metadata', 'annotations', ATTEMPT_ANNOTATION));
  const failed = conditionOf(job, 'Failed');
  if (failed?.status === 'True') return { state: 'failed', attempt, why: describeCondition(failed.reason, failed.message) };
  if (conditionOf(job, 'Complete')?.status === 'True') return { state: 'complete', attempt };
  return { state: 'running', attempt };
}

/** A positive integer, else 1 (a Job from before attempts were counted, or an annotation someone edited). */
function attemptOf(value: string | undefined): number {
  const n = value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/** "BackoffLimitExceeded: Job has reached the specified backoff limit", or whichever half is there. */
function describeCondition(reason: string | undefined, message: string | undefined): string {
  if (reason && message) return `${reason}: ${message}`;
  return reason ?? message ?? 'no reason given';
}

/** A Job manifest's metadata: the cache labels, the artifact and the attempt. */
export function jobMetadata(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  artifact: string,
  attempt: number,
): V1ObjectMeta {
  return {
    name,
    namespace,
    labels: { ...labels },
    annotations: { [ARTIFACT_ANNOTATION]: artifact, [ATTEMPT_ANNOTATION]: String(attempt) },
  };
}

/** The pod template's metadata: its labels, and the retry round when there is one. */
export function podMetadata(labels: Record<string, string>, round: string | undefined): V1ObjectMeta {
  const metadata: V1ObjectMeta = { labels: { ...labels } };
  if (round !== undefined) metadata.annotations = { [ROUND_ANNOTATION]: round };
  return metadata;
}
