// The per-cluster cache status: what a ModelCacheHydration reports in its own
// status, and what ModelCache copies, one entry per cluster, into
// `status.clusters[]`. compose-model-replica reads that entry to decide whether
// (and how) to start an engine on its cluster.

import { asArray, asString, getIn, isObject, type JsonObject } from './json.js';
import {
  COMMIT_PATTERN,
  DIGEST_PATTERN,
  GIB,
  MAX_ATTEMPTS,
  MAX_PROGRESS_SUMMARY,
  MAX_REPORT_BYTES,
  MAX_REPORT_FILES,
  MAX_STATUS_MESSAGE,
  ReportChecks,
  kindOf,
  sizeProblem,
  type ReportProblem,
} from './reports.js';
import { TIMESTAMP_PATTERN, UNREACHABLE_ERROR_MAX, type Unreachable } from './reachability.js';

export const PHASES = ['Pending', 'Hydrating', 'Ready', 'Failed'] as const;
export type Phase = (typeof PHASES)[number];

export const ARTIFACT_KINDS = ['Image', 'ModelArtifact'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/**
 * HuggingFace: how far staging got, as the download reported it from the
 * workload cluster (observed, never guessed): bytes and files of the selected
 * files, and the percent of bytes. `summary` is what a printer column shows.
 */
export interface CacheProgress {
  percent: number;
  bytesDone: number;
  bytesTotal: number;
  filesDone: number;
  filesTotal: number;
  /** "37%", "37%, stalled 15m", "100%, verified". */
  summary: string;
}

/** One cluster's cache state, as the child reports it (and the parent copies it). */
export interface ClusterCacheState {
  phase: Phase;
  /** Why, when not Ready; what it resolved to, when it helps. */
  message?: string;
  /** The mount contract, only when Ready. Kept as received: consumers validate it. */
  mount?: JsonObject;
  /** PersistentVolumeClaim source: the claim's access modes. */
  accessModes?: string[];
  /** OCI source: the digest the reference resolved to, latched. */
  digest?: string;
  /** OCI source: what the reference names. */
  artifactKind?: ArtifactKind;
  /** HuggingFace and OCI: the Job attempts made for this artifact since it last changed or a retry was asked for. */
  attempts?: number;
  /** HuggingFace: the download's progress (while Hydrating, and latched at 100% once Ready). */
  progress?: CacheProgress;
  /** HuggingFace: every staged file was checked against the hub (sha256, or size and etag) before Ready. */
  verified?: boolean;
  /** HuggingFace: the commit the revision resolved to when staged (what the mount contract pins engines to). */
  commit?: string;
  /** HuggingFace: the claim size asked for, in GiB (spec.huggingFace.sizeGiB, or resolved on the cluster and latched). */
  sizeGiB?: number;
  /**
   * The cluster's API server can't be reached from the control plane (its Objects say so, reachability.ts):
   * since when, and the error. The phase and the mount stay what they were last seen.
   */
  unreachable?: Unreachable;
}

/** Whole percent of bytes, rounded down: 100 only when every byte is there (and 0 of 0 is 0). */
export function percentOf(done: number, total: number): number {
  if (total === 0) return done === 0 ? 0 : 100;
  return Math.min(100, Math.floor((done * 100) / total));
}

/** The access modes a claim may report. */
const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;

/**
 * A progress object as this project writes it, checked (reports.ts): counts
 * bounded, done never over total, the percent the one its bytes give, the
 * summary short. Undefined, with the problems in `checks`, when it is not.
 */
function checkedProgress(value: unknown, checks: ReportChecks, field = 'progress'): CacheProgress | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    checks.add(field, `is ${kindOf(value)}, not an object`);
    return undefined;
  }
  const own = new ReportChecks(checks.report);
  const percent = own.count(value, 'percent', 100, { required: true });
  const bytesDone = own.count(value, 'bytesDone', MAX_REPORT_BYTES, { required: true });
  const bytesTotal = own.count(value, 'bytesTotal', MAX_REPORT_BYTES, { required: true });
  const filesDone = own.count(value, 'filesDone', MAX_REPORT_FILES, { required: true });
  const filesTotal = own.count(value, 'filesTotal', MAX_REPORT_FILES, { required: true });
  const summary = own.string(value, 'summary', MAX_PROGRESS_SUMMARY, { required: true });
  own.notMore('bytesDone', bytesDone, 'bytesTotal', bytesTotal);
  own.notMore('filesDone', filesDone, 'filesTotal', filesTotal);
  if (bytesTotal !== undefined && bytesTotal > 0 && filesTotal === 0) own.add('bytesTotal', 'is more than 0 bytes in 0 files');
  if (percent !== undefined && bytesDone !== undefined && bytesTotal !== undefined && own.ok) {
    const expected = percentOf(bytesDone, bytesTotal);
    if (percent !== expected && !(percent === 100 && bytesDone === bytesTotal))
      own.add('percent', `is ${percent}, not the ${expected} its bytes give`);
  }
  for (const problem of own.problems) checks.add(`${field}.${problem.field}`, problem.problem);
  if (!own.ok) return undefined;
  return {
    percent: percent!,
    bytesDone: bytesDone!,
    bytesTotal: bytesTotal!,
    filesDone: filesDone!,
    filesTotal: filesTotal!,
    summary: summary!,
  };
}

/** An `unreachable` record as this project writes it, checked; undefined, with the problems in `checks`, when it is not. */
function checkedUnreachable(value: unknown, checks: ReportChecks): Unreachable | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    checks.add('unreachable', `is ${kindOf(value)}, not an object`);
    return undefined;
  }
  const own = new ReportChecks(checks.report);
  const error = own.string(value, 'error', UNREACHABLE_ERROR_MAX, { required: true });
  const since = own.string(value, 'since', 64, { pattern: TIMESTAMP_PATTERN });
  for (const problem of own.problems) checks.add(`unreachable.${problem.field}`, problem.problem);
  if (error === undefined) return undefined;
  return since === undefined ? { error } : { since, error };
}

/** A progress object as written by this project, or undefined: a status someone edited is not shown as progress. */
export function readProgress(value: unknown): CacheProgress | undefined {
  return checkedProgress(value, new ReportChecks('progress'));
}

export interface CacheEntry extends ClusterCacheState {
  name: string;
}

/**
 * Read a cluster cache state from a status object, every field checked
 * (reports.ts): a field that fails is left out, and said in `problems`
 * (`report` names whose status it is). An absent or unknown phase reads as
 * Pending: nothing is served from a state nobody reported.
 */
export function readCacheStateChecked(status: unknown, report = 'status'): { state: ClusterCacheState; problems: ReportProblem[] } {
  const checks = new ReportChecks(report);
  const record: Record<string, unknown> = isObject(status) ? status : {};
  const phase = checks.oneOf(record, 'phase', PHASES);
  const state: ClusterCacheState = { phase: phase ?? 'Pending' };
  const message = checks.string(record, 'message', MAX_STATUS_MESSAGE);
  if (message !== undefined) state.message = message;
  const mount = record['mount'];
  if (isObject(mount)) state.mount = mount;
  else if (mount !== undefined) checks.add('mount', `is ${kindOf(mount)}, not an object`);
  const accessModes = record['accessModes'];
  if (Array.isArray(accessModes)) {
    // The known modes stand (a gang's engines read them); the others are left out, and said.
    const isMode = (m: unknown): m is string => typeof m === 'string' && (ACCESS_MODES as readonly string[]).includes(m);
    const known = [...new Set(accessModes.filter(isMode))];
    const unknown = accessModes.filter((m) => !isMode(m)).length;
    if (known.length > 0 || unknown === 0) state.accessModes = known;
    if (unknown > 0) checks.add('accessModes', `holds ${unknown} entries that are not access modes (${ACCESS_MODES.join(', ')})`);
  } else if (accessModes !== undefined) checks.add('accessModes', `is ${kindOf(accessModes)}, not a list`);
  const digest = checks.string(record, 'digest', 71, { pattern: DIGEST_PATTERN });
  if (digest !== undefined) state.digest = digest;
  const kind = checks.oneOf(record, 'artifactKind', ARTIFACT_KINDS);
  if (kind !== undefined) state.artifactKind = kind;
  const attempts = checks.count(record, 'attempts', MAX_ATTEMPTS, { min: 1 });
  if (attempts !== undefined) state.attempts = attempts;
  const progress = checkedProgress(record['progress'], checks);
  if (progress !== undefined) state.progress = progress;
  const verified = record['verified'];
  if (typeof verified === 'boolean') state.verified = verified;
  else if (verified !== undefined) checks.add('verified', `is ${kindOf(verified)}, not true or false`);
  const commit = checks.string(record, 'commit', 40, { pattern: COMMIT_PATTERN });
  if (commit !== undefined) state.commit = commit;
  if (record['sizeGiB'] !== undefined) {
    const problem = sizeProblem(record['sizeGiB'], undefined);
    if (problem === undefined) state.sizeGiB = record['sizeGiB'] as number;
    else checks.add('sizeGiB', problem);
  }
  const unreachable = checkedUnreachable(record['unreachable'], checks);
  if (unreachable !== undefined) state.unreachable = unreachable;
  // The files staged fit the claim they are staged on: a progress larger than the claim is not this claim's.
  if (state.progress !== undefined && state.sizeGiB !== undefined && state.progress.bytesTotal > state.sizeGiB * GIB) {
    checks.add('progress.bytesTotal', `is more than sizeGiB ${state.sizeGiB} holds`);
    delete state.progress;
  }
  return { state, problems: checks.problems };
}

/** readCacheStateChecked's state alone: what every reader of a child's or an entry's status gets. */
export function readCacheState(status: unknown): ClusterCacheState {
  return readCacheStateChecked(status).state;
}

/** The entries of a ModelCache's `status.clusters[]`; entries without a name are skipped. */
export function cacheEntries(cacheStatus: unknown): CacheEntry[] {
  const entries: CacheEntry[] = [];
  for (const raw of asArray(getIn(cacheStatus, 'clusters'))) {
    const name = asString(getIn(raw, 'name'));
    if (name !== undefined) entries.push({ name, ...readCacheState(raw) });
  }
  return entries;
}

/**
 * The first entry for `cluster`, as cacheEntries would give it. Only that
 * entry's state is read: a replica needs one cluster's, and reading every
 * entry's (each mount contract decoded on its first read) made a replica's
 * call grow with the cache's footprint.
 */
export function findCacheEntry(cacheStatus: unknown, cluster: string): CacheEntry | undefined {
  for (const raw of asArray(getIn(cacheStatus, 'clusters'))) {
    if (asString(getIn(raw, 'name')) === cluster) return { name: cluster, ...readCacheState(raw) };
  }
  return undefined;
}

/** The fields of a state in the order a person reads them, without any unset field. */
export function cacheStateFields(state: ClusterCacheState): JsonObject {
  const out: JsonObject = { phase: state.phase };
  if (state.message !== undefined) out['message'] = state.message;
  if (state.mount !== undefined) out['mount'] = state.mount;
  if (state.accessModes !== undefined) out['accessModes'] = [...state.accessModes];
  if (state.digest !== undefined) out['digest'] = state.digest;
  if (state.artifactKind !== undefined) out['artifactKind'] = state.artifactKind;
  if (state.attempts !== undefined) out['attempts'] = state.attempts;
  if (state.progress !== undefined) out['progress'] = { ...state.progress };
  if (state.verified !== undefined) out['verified'] = state.verified;
  if (state.commit !== undefined) out['commit'] = state.commit;
  if (state.sizeGiB !== undefined) out['sizeGiB'] = state.sizeGiB;
  if (state.unreachable !== undefined) out['unreachable'] = { ...state.unreachable };
  return out;
}
