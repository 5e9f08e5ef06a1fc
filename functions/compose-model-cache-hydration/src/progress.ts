// The download's own report, read back: the hydration script (hydrate.py)
// writes it as an annotation on its Job, provider-kubernetes observes the Job
// into its Object, and this module reads it from there. Pure: what the
// function shows is only what was observed. The annotation is written by a pod
// on a workload cluster, so every field is checked and bounded before any of
// it reaches a status: a report that isn't well-formed is no report.

import { asString, getIn, getString, isObject, percentOf, remoteManifest, type CacheProgress, type JsonObject } from '#lib';

export { percentOf };

/** On the hydration Job: the script's report, JSON (see hydrate.py). */
export const PROGRESS_ANNOTATION = 'modelplane.ai/progress';

/** The script's states: sized (--size-only), downloading, checking against the hub, done and checked, failed (saying why). */
export const REPORT_STATES = ['Sized', 'Downloading', 'Verifying', 'Verified', 'Failed'] as const;
export type ReportState = (typeof REPORT_STATES)[number];

export interface ProgressReport {
  state: ReportState;
  commit?: string;
  bytesDone: number;
  bytesTotal: number;
  filesDone: number;
  filesTotal: number;
  /** The claim the selected files need (the files plus the documented margin), in GiB. */
  requiredGiB?: number;
  /** No new byte for this long (the script's stall threshold passed). */
  stalledSeconds?: number;
  /** Failed: why, in the script's words (never the token: the script scrubs it). */
  message?: string;
}

const COMMIT = /^[0-9a-f]{40}$/;
/** Longer than any message the script writes (it bounds them at 600). */
const MAX_MESSAGE = 1000;
/** More than a pod could report in earnest; a bigger number is not a count. */
const MAX_COUNT = Number.MAX_SAFE_INTEGER;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_COUNT ? value : undefined;
}

/** The report on an observed hydration Job (its Object), or undefined when there is none or it is malformed. */
export function readReport(observedJob: JsonObject | undefined): ProgressReport | undefined {
  const raw = getString(remoteManifest(observedJob), 'metadata', 'annotations', PROGRESS_ANNOTATION);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  return parseReport(value);
}

export function parseReport(value: unknown): ProgressReport | undefined {
  if (!isObject(value)) return undefined;
  const state = asString(value['state']);
  if (state === undefined || !(REPORT_STATES as readonly string[]).includes(state)) return undefined;
  const message = asString(value['message']);
  if (state === 'Failed') {
    if (message === undefined || message.length > MAX_MESSAGE) return undefined;
    return { state, message, bytesDone: 0, bytesTotal: 0, filesDone: 0, filesTotal: 0 };
  }
  const bytesDone = count(value['bytesDone']);
  const bytesTotal = count(value['bytesTotal']);
  const filesDone = count(value['filesDone']);
  const filesTotal = count(value['filesTotal']);
  const commit = asString(value['commit']);
  if (bytesDone === undefined || bytesTotal === undefined || filesDone === undefined || filesTotal === undefined) return undefined;
  if (bytesDone > bytesTotal || filesDone > filesTotal || commit === undefined || !COMMIT.test(commit)) return undefined;
  const report: ProgressReport = { state: state as ReportState, commit, bytesDone, bytesTotal, filesDone, filesTotal };
  const required = count(value['requiredGiB']);
  if (required !== undefined) report.requiredGiB = required;
  const stalled = count(getIn(value, 'stalledSeconds'));
  if (stalled !== undefined && state === 'Downloading') report.stalledSeconds = stalled;
  return report;
}

/** The status progress of a report (Verified reads as 100%). */
export function progressOf(report: ProgressReport): CacheProgress {
  const verified = report.state === 'Verified';
  const bytesDone = verified ? report.bytesTotal : report.bytesDone;
  const filesDone = verified ? report.filesTotal : report.filesDone;
  const percent = verified ? 100 : percentOf(bytesDone, report.bytesTotal);
  let summary = `${percent}%`;
  if (verified) summary += ', verified';
  else if (report.state === 'Verifying') summary += ', verifying';
  else if (report.stalledSeconds !== undefined) summary += `, stalled ${duration(report.stalledSeconds)}`;
  return { percent, bytesDone, bytesTotal: report.bytesTotal, filesDone, filesTotal: report.filesTotal, summary };
}

/** "37% (52.1 GiB of 140.8 GiB, 12 of 40 files)" */
export function describeProgress(progress: CacheProgress): string {
  return `${progress.percent}% (${bytes(progress.bytesDone)} of ${bytes(progress.bytesTotal)}, ${progress.filesDone} of ${progress.filesTotal} files)`;
}

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** Bytes as a person reads them: 1 decimal above a KiB. */
export function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} bytes` : `${(Math.floor(value * 10) / 10).toFixed(1)} ${UNITS[unit]}`;
}

/** "45s", "15m", "2h5m": how long a download has been stalled. */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const rest = minutes % 60;
  return rest === 0 ? `${Math.floor(minutes / 60)}h` : `${Math.floor(minutes / 60)}h${rest}m`;
}
