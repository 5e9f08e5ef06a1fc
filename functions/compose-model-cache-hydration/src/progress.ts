// The download's own report, read back: the hydration script (hydrate.py)
// writes it as an annotation on its Job, provider-kubernetes observes the Job
// into its Object, and this module reads it from there. Pure: what the
// function shows is only what was observed. The annotation is written by a pod
// on a workload cluster, so every field is checked and bounded (lib
// reports.ts) before any of it reaches a status: a report that fails is no
// report, and what failed is said (the ReportsAccepted condition).

import {
  COMMIT_PATTERN,
  GIB,
  MAX_REPORT_BYTES,
  MAX_REPORT_FILES,
  MAX_REPORT_MESSAGE,
  MAX_STALLED_SECONDS,
  ReportChecks,
  getString,
  isObject,
  kindOf,
  percentOf,
  remoteManifest,
  sizeProblem,
  type CacheProgress,
  type JsonObject,
  type ReportProblem,
} from '#lib';

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

/** What reading a report gave: the report when it passed every check, and what failed. */
export interface ReportRead {
  report?: ProgressReport;
  problems: ReportProblem[];
}

const NONE: ReportRead = { problems: [] };

/**
 * The report on an observed hydration or sizing Job (its Object), checked.
 * `label` names it in a problem ("the sizing report on Job <name>"). No
 * annotation is no report and no problem.
 */
export function readReport(observedJob: JsonObject | undefined, label = 'the progress report'): ReportRead {
  const raw = getString(remoteManifest(observedJob), 'metadata', 'annotations', PROGRESS_ANNOTATION);
  if (raw === undefined) return NONE;
  const checks = new ReportChecks(label);
  // The script writes a few hundred bytes; a huge annotation is not its report, and is not parsed.
  if (raw.length > MAX_REPORT_TEXT) {
    checks.add(PROGRESS_ANNOTATION, `is ${raw.length} characters, over the bound ${MAX_REPORT_TEXT}`);
    return { problems: checks.problems };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    checks.add(PROGRESS_ANNOTATION, 'is not JSON');
    return { problems: checks.problems };
  }
  return parseReport(value, label);
}

/** The annotation's text: the script's reports are well under a kilobyte, its Failed message bounded at 600 characters. */
const MAX_REPORT_TEXT = 4096;

/**
 * A report, every field checked (lib reports.ts): known state; counts whole,
 * non-negative and bounded; done ≤ total; bytes in files; a commit of 40 hex
 * digits; a claim size within the XRD's bounds and what the byte total and
 * the script's margin give. Any failure: no report, and the problems.
 */
export function parseReport(value: unknown, label = 'the progress report'): ReportRead {
  const checks = new ReportChecks(label);
  if (!isObject(value)) {
    checks.add(PROGRESS_ANNOTATION, `is ${kindOf(value)}, not an object`);
    return { problems: checks.problems };
  }
  // Written by an earlier release's marker ("already hydrated" with nothing checked): no numbers, nothing wrong.
  if (value['state'] === 'Unverified') return NONE;
  const state = checks.oneOf(value, 'state', REPORT_STATES, { required: true });
  if (state === undefined) return { problems: checks.problems };
  if (state === 'Failed') {
    const message = checks.string(value, 'message', MAX_REPORT_MESSAGE, { required: true });
    if (message === undefined) return { problems: checks.problems };
    return { report: { state, message, bytesDone: 0, bytesTotal: 0, filesDone: 0, filesTotal: 0 }, problems: [] };
  }
  const bytesDone = checks.count(value, 'bytesDone', MAX_REPORT_BYTES, { required: true });
  const bytesTotal = checks.count(value, 'bytesTotal', MAX_REPORT_BYTES, { required: true });
  const filesDone = checks.count(value, 'filesDone', MAX_REPORT_FILES, { required: true });
  const filesTotal = checks.count(value, 'filesTotal', MAX_REPORT_FILES, { required: true });
  const commit = checks.string(value, 'commit', 40, { pattern: COMMIT_PATTERN, required: true });
  checks.notMore('bytesDone', bytesDone, 'bytesTotal', bytesTotal);
  checks.notMore('filesDone', filesDone, 'filesTotal', filesTotal);
  if (bytesTotal !== undefined && bytesTotal > 0 && filesTotal === 0) checks.add('bytesTotal', 'is more than 0 bytes in 0 files');
  let requiredGiB: number | undefined;
  if (value['requiredGiB'] !== undefined || state === 'Sized') {
    const problem = sizeProblem(value['requiredGiB'], bytesTotal);
    if (problem === undefined) requiredGiB = value['requiredGiB'] as number;
    else checks.add('requiredGiB', problem);
  }
  const stalled = state === 'Downloading' ? checks.count(value, 'stalledSeconds', MAX_STALLED_SECONDS) : undefined;
  if (!checks.ok) return { problems: checks.problems };
  const report: ProgressReport = {
    state,
    commit: commit!,
    bytesDone: bytesDone!,
    bytesTotal: bytesTotal!,
    filesDone: filesDone!,
    filesTotal: filesTotal!,
  };
  if (requiredGiB !== undefined) report.requiredGiB = requiredGiB;
  if (stalled !== undefined) report.stalledSeconds = stalled;
  return { report, problems: [] };
}

/**
 * A download's report checked against the claim it stages to: the script
 * refuses files that do not fit `sizeGiB` before it downloads anything, so a
 * byte total over it is not this download's.
 */
export function againstClaim(read: ReportRead, sizeGiB: number, label: string): ReportRead {
  const report = read.report;
  if (report === undefined || report.state === 'Failed' || report.bytesTotal <= sizeGiB * GIB) return read;
  return { problems: [{ report: label, field: 'bytesTotal', problem: `is more than the claim of ${sizeGiB} GiB holds` }] };
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
