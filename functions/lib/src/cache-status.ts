// The per-cluster cache status: what a ModelCacheHydration reports in its own
// status, and what ModelCache copies, one entry per cluster, into
// `status.clusters[]`. compose-model-replica reads that entry to decide whether
// (and how) to start an engine on its cluster.

import { asArray, asString, getIn, isObject, type JsonObject } from './json.js';

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
}

const COMMIT = /^[0-9a-f]{40}$/;

/** Whole percent of bytes, rounded down: 100 only when every byte is there (and 0 of 0 is 0). */
export function percentOf(done: number, total: number): number {
  if (total === 0) return done === 0 ? 0 : 100;
  return Math.min(100, Math.floor((done * 100) / total));
}
const MAX_SUMMARY = 64;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** A progress object as written by this project, or undefined: a status someone edited is not shown as progress. */
export function readProgress(value: unknown): CacheProgress | undefined {
  if (!isObject(value)) return undefined;
  const percent = count(value['percent']);
  const bytesDone = count(value['bytesDone']);
  const bytesTotal = count(value['bytesTotal']);
  const filesDone = count(value['filesDone']);
  const filesTotal = count(value['filesTotal']);
  const summary = asString(value['summary']);
  if (percent === undefined || percent > 100 || bytesDone === undefined || bytesTotal === undefined) return undefined;
  if (filesDone === undefined || filesTotal === undefined || summary === undefined || summary.length > MAX_SUMMARY) return undefined;
  if (bytesDone > bytesTotal || filesDone > filesTotal) return undefined;
  return { percent, bytesDone, bytesTotal, filesDone, filesTotal, summary };
}

export interface CacheEntry extends ClusterCacheState {
  name: string;
}

function isPhase(value: unknown): value is Phase {
  return typeof value === 'string' && (PHASES as readonly string[]).includes(value);
}

function isArtifactKind(value: unknown): value is ArtifactKind {
  return typeof value === 'string' && (ARTIFACT_KINDS as readonly string[]).includes(value);
}

/**
 * Read a cluster cache state from a status object. An absent or unknown phase
 * reads as Pending: nothing is served from a state nobody reported.
 */
export function readCacheState(status: unknown): ClusterCacheState {
  const phase = getIn(status, 'phase');
  const state: ClusterCacheState = { phase: isPhase(phase) ? phase : 'Pending' };
  const message = asString(getIn(status, 'message'));
  if (message !== undefined) state.message = message;
  const mount = getIn(status, 'mount');
  if (isObject(mount)) state.mount = mount;
  const accessModes = getIn(status, 'accessModes');
  if (Array.isArray(accessModes)) state.accessModes = accessModes.filter((m): m is string => typeof m === 'string');
  const digest = asString(getIn(status, 'digest'));
  if (digest !== undefined) state.digest = digest;
  const kind = getIn(status, 'artifactKind');
  if (isArtifactKind(kind)) state.artifactKind = kind;
  const attempts = getIn(status, 'attempts');
  if (typeof attempts === 'number' && Number.isInteger(attempts) && attempts > 0) state.attempts = attempts;
  const progress = readProgress(getIn(status, 'progress'));
  if (progress !== undefined) state.progress = progress;
  const verified = getIn(status, 'verified');
  if (typeof verified === 'boolean') state.verified = verified;
  const commit = asString(getIn(status, 'commit'));
  if (commit !== undefined && COMMIT.test(commit)) state.commit = commit;
  const sizeGiB = count(getIn(status, 'sizeGiB'));
  if (sizeGiB !== undefined && sizeGiB > 0) state.sizeGiB = sizeGiB;
  return state;
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
  return out;
}
