// Bounded, visible retries of the Job a source runs on a workload cluster (the
// HuggingFace download, the OCI resolver).
//
// A function has no clock, so the failed Job's own TTL is the spacing: the Job
// of attempt k carries ttlSecondsAfterFinished = JOB_TTL_SECONDS * 2^(k-1).
// While attempts remain, its Object stays desired exactly as it was; when
// Kubernetes removes the failed Job, provider-kubernetes creates it again, and
// this function counts that new Job as attempt k+1 (and raises its attempt
// and TTL, both mutable). After JOB_ATTEMPTS failures the Object is no longer
// desired (the failed Job is orphaned and its TTL removes it) and the cluster
// stays Failed, latched in this XR's status like Ready is, until the artifact
// changes or a person sets a new retry request.

import {
  CACHE_RETRY_ANNOTATION,
  CACHE_REVERIFY_ANNOTATION,
  JOB_ATTEMPTS,
  JOB_TTL_SECONDS,
  RETRY_ANNOTATION,
  REVERIFY_ANNOTATION,
} from '#lib';
import { jobState, type JobState } from './jobs.js';
import type { AttemptRecord, Notice, PreviousStatus } from './outcome.js';
import type { JsonObject } from '#lib';

/** The Job of attempt k stays this long after it finishes: the wait before attempt k+1 (base: the settings' TTL). */
export function jobTtlSeconds(attempt: number, base: number = JOB_TTL_SECONDS): number {
  return base * 2 ** (Math.min(attempt, JOB_ATTEMPTS) - 1);
}

/**
 * A person's request on an XR, from the ModelCache's annotation (copied onto
 * the child) and the child's own, as one value, so a new value of either is a
 * new request.
 */
function requestOf(annotations: Readonly<Record<string, string>>, cacheKey: string, ownKey: string): string | undefined {
  const fromCache = annotations[cacheKey];
  const own = annotations[ownKey];
  if (fromCache === undefined && own === undefined) return undefined;
  if (own === undefined) return `cache:${fromCache}`;
  if (fromCache === undefined) return `own:${own}`;
  return `cache:${fromCache};own:${own}`;
}

/** The retry request: `modelplane.ai/retry` on the ModelCache or on this child. */
export function retryRequestOf(annotations: Readonly<Record<string, string>>): string | undefined {
  return requestOf(annotations, CACHE_RETRY_ANNOTATION, RETRY_ANNOTATION);
}

/** The re-verification request: `modelplane.ai/reverify` on the ModelCache or on this child. */
export function reverifyRequestOf(annotations: Readonly<Record<string, string>>): string | undefined {
  return requestOf(annotations, CACHE_REVERIFY_ANNOTATION, REVERIFY_ANNOTATION);
}

/** Which Job to compose: its attempt, and the retry round it belongs to (the Job template's marker). */
export interface JobRun {
  attempt: number;
  round?: string;
}

export interface JobPlan {
  /** The Job as observed, relative to this artifact and round. */
  job: JobState;
  /** The Job to desire; undefined once attempts are spent. */
  run?: JobRun;
  /** What status records. */
  record: AttemptRecord;
  /** The Job failed: now (`why` is the Job's reason), or latched (`why` is the last status message, already whole). */
  failure?: { attempt: number; why: string; final: boolean; latched: boolean };
  /** Normal events: a retry that starts now. */
  notices: Notice[];
}

export interface PlanInput {
  observed: JsonObject | undefined;
  artifact: string;
  previous: PreviousStatus;
  request: string | undefined;
}

export function planJob({ observed, artifact, previous, request }: PlanInput): JobPlan {
  const sameArtifact = previous.attempts?.artifact === artifact;
  // A new artifact starts a new round; its marker is whatever request stands now.
  let record: AttemptRecord = sameArtifact && previous.attempts ? { ...previous.attempts } : fresh(artifact, request);
  const notices: Notice[] = [];
  let failedBefore = previous.phase === 'Failed' && sameArtifact;
  if (failedBefore && request !== undefined && request !== record.retryRequest) {
    record = fresh(artifact, request);
    failedBefore = false;
    notices.push({ reason: 'RetryRequested', message: `retry requested: staging ${artifact} again, up to ${JOB_ATTEMPTS} attempts` });
  }
  const job = jobState(observed, artifact, record.retryRequest);
  const plan = (attempt: number | undefined, failure?: JobPlan['failure']): JobPlan => {
    const out: JobPlan = { job, record, notices };
    if (attempt !== undefined) out.run = record.retryRequest === undefined ? { attempt } : { attempt, round: record.retryRequest };
    if (failure) out.failure = failure;
    return out;
  };
  const retry = (): JobPlan => {
    // Kubernetes removed the failed Job (its TTL): the next attempt starts.
    record.count += 1;
    notices.push({ reason: 'Retrying', message: `attempt ${record.count} of ${JOB_ATTEMPTS} at ${artifact} started` });
    return plan(record.count);
  };
  // Attempts spent and the Job gone: the failure stands, in the words the last status said it.
  const spent = (): JobPlan => plan(undefined, { attempt: record.count, why: previous.message ?? '', final: true, latched: true });

  switch (job.state) {
    case 'failed': {
      record.count = Math.max(record.count, job.attempt);
      const final = record.count >= JOB_ATTEMPTS;
      return plan(final ? undefined : record.count, { attempt: record.count, why: job.why, final, latched: false });
    }
    case 'running':
      if (failedBefore && job.attempt <= record.count) return record.count >= JOB_ATTEMPTS ? spent() : retry();
      record.count = Math.max(record.count, job.attempt);
      return plan(record.count);
    case 'complete':
      record.count = Math.max(record.count, job.attempt);
      return plan(record.count);
    case 'absent':
      if (failedBefore) return record.count >= JOB_ATTEMPTS ? spent() : retry();
      record.count = Math.max(record.count, 1);
      return plan(record.count);
    case 'stale':
      // Ours waits for that one to go; it becomes attempt 1 when it runs.
      return plan(Math.max(record.count, 1));
  }
}

function fresh(artifact: string, request: string | undefined): AttemptRecord {
  return request === undefined ? { artifact, count: 0 } : { artifact, count: 0, retryRequest: request };
}

/** The message of a failed attempt: what failed and why, and what comes next. */
export function failureMessage(what: string, failure: NonNullable<JobPlan['failure']>, ttlBase: number = JOB_TTL_SECONDS): string {
  if (failure.latched && failure.why !== '') return failure.why;
  const head = `${what} failed (attempt ${failure.attempt} of ${JOB_ATTEMPTS}): ${failure.why || 'no reason recorded'}`;
  if (failure.final) {
    return `${head}; no attempts left: fix the cause, then set the annotation ${RETRY_ANNOTATION} to a new value on the ModelCache (every failed cluster) or on this ModelCacheHydration`;
  }
  return `${head}; attempt ${failure.attempt + 1} starts when Kubernetes removes the failed Job, ${jobTtlSeconds(failure.attempt, ttlBase)}s after it failed (delete it on the workload cluster to start now)`;
}

/** " (attempt k of N)" from the second attempt on: the first is the ordinary case. */
export function attemptNote(count: number): string {
  return count > 1 ? ` (attempt ${count} of ${JOB_ATTEMPTS})` : '';
}

/**
 * The record of a Ready cluster: the attempts that got it there, and the retry
 * request standing now, taken as seen. A request meets a Ready cluster only
 * when it was made of its ModelCache for another cluster: it retries nothing
 * here, now or after a later failure.
 */
export function settled(record: AttemptRecord | undefined, artifact: string, request: string | undefined): AttemptRecord {
  const count = record?.artifact === artifact ? record.count : 0;
  return request === undefined ? { artifact, count } : { artifact, count, retryRequest: request };
}
