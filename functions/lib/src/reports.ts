// Numbers and words a workload cluster writes back are input from a place a
// tenant may reach: a pod's progress and sizing reports (annotations on its
// Job), the OCI resolver's ConfigMap, and what a child XR's status carries up
// from them. Everything read from there passes these checks first: a count is
// a whole, non-negative number under a bound, a size is inside the XRD's own
// limits and consistent with the byte total it comes with, "done" is never
// more than "total", a string is bounded and a digest or commit well-formed.
// A value that fails is a ReportProblem: which report, which field, what is
// wrong, in words that never quote the raw value (only its type, its length,
// or a short number), so a hostile report can't grow a status or a message.

import { isObject } from './json.js';
import type { ConditionSpec } from './response.js';

/** A GiB, in bytes. */
export const GIB = 1024 ** 3;
/** spec.huggingFace.sizeGiB's bounds (the XRDs' minimum and maximum): no claim is composed outside them. */
export const MIN_SIZE_GIB = 1;
export const MAX_SIZE_GIB = 100_000;
/** No byte count in a report is more than the largest claim holds. */
export const MAX_REPORT_BYTES = MAX_SIZE_GIB * GIB;
/** Files in one selection: the hub's largest repos hold tens of thousands. */
export const MAX_REPORT_FILES = 1_000_000;
/** A stall longer than a year is not a measurement. */
export const MAX_STALLED_SECONDS = 366 * 24 * 3600;
/** Attempts are counted by this function, three a round; a bigger count was not written by it. */
export const MAX_ATTEMPTS = 10_000;
/** The script's own messages are bounded at 600 characters. */
export const MAX_REPORT_MESSAGE = 1000;
/** A status message read back: this function's own are a few kB at most (an artifact with 32 long patterns). */
export const MAX_STATUS_MESSAGE = 32_768;
/** What a printer column shows of the progress. */
export const MAX_PROGRESS_SUMMARY = 64;
/** The hydration script's margin (hydrate.py: MARGIN_FRACTION and MARGIN_GIB). */
export const SIZE_MARGIN_FRACTION = 0.1;
export const SIZE_MARGIN_GIB = 1;

export const COMMIT = /^[0-9a-f]{40}$/;
export const SHA256_DIGEST = /^sha256:[0-9a-f]{64}$/;

/** One check that failed: `<report>: <field> <problem>`. */
export interface ReportProblem {
  /** Which report, e.g. "the progress report on Job modelcache-ml-team-qwen-hydrate-256ec". */
  report: string;
  /** The field, as the report names it. */
  field: string;
  /** What is wrong, never quoting a long raw value. */
  problem: string;
}

export function describeProblem(problem: ReportProblem): string {
  return `${problem.report}: ${problem.field} ${problem.problem}`;
}

/** Several problems in one line, at most `shown` of them named. */
export function describeProblems(problems: readonly ReportProblem[], shown = 3): string {
  const named = problems.slice(0, shown).map(describeProblem).join('; ');
  return problems.length > shown ? `${named}; and ${problems.length - shown} more` : named;
}

const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A value as a problem may name it: a short number as it is, anything else by its type and size only. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (typeof value === 'number') return Number.isFinite(value) && String(value).length <= 24 ? String(value) : 'not a finite number';
  if (isObject(value)) return 'an object';
  return typeof value;
}

/**
 * Why `value` is not a count in [min, max], or undefined when it is. Only a
 * number short enough to read is quoted.
 */
export function countProblem(value: unknown, max: number, min = 0): string | undefined {
  if (value === undefined) return 'is missing';
  if (typeof value !== 'number') return `is ${kindOf(value)}, not a number`;
  if (!Number.isFinite(value)) return 'is not a finite number';
  if (!Number.isInteger(value)) return `is ${kindOf(value)}, not a whole number`;
  if (value < min) return min === 0 ? `is ${kindOf(value)}, negative` : `is ${kindOf(value)}, under ${grouped(min)}`;
  if (value > max) return `is ${kindOf(value)}, over the bound ${grouped(max)}`;
  return undefined;
}

/** Why `value` is not a string of at most `max` characters (optionally matching `pattern`, described as `what`). */
export function stringProblem(value: unknown, max: number, pattern?: { test: RegExp; what: string }): string | undefined {
  if (value === undefined) return 'is missing';
  if (typeof value !== 'string') return `is ${kindOf(value)}, not a string`;
  if (value.length > max) return `is ${grouped(value.length)} characters, over the bound ${grouped(max)}`;
  if (pattern !== undefined && !pattern.test.test(value)) return `is not ${pattern.what}`;
  return undefined;
}

export const COMMIT_PATTERN = { test: COMMIT, what: 'a commit (40 lower-case hex digits)' };
export const DIGEST_PATTERN = { test: SHA256_DIGEST, what: 'a sha256 digest (sha256: and 64 lower-case hex digits)' };

/** The claim the hydration script asks for `bytes` of selected files: plus its margin, in whole GiB (hydrate.py required_gib). */
export function requiredGiBFor(bytes: number): number {
  return Math.ceil((bytes * (1 + SIZE_MARGIN_FRACTION)) / GIB) + SIZE_MARGIN_GIB;
}

/**
 * Why a claim size reported with `bytesTotal` of files is not one to compose:
 * outside the XRD's bounds, smaller than the files, or larger than the files
 * and the script's margin (a size the byte total does not account for).
 */
export function sizeProblem(sizeGiB: unknown, bytesTotal: number | undefined): string | undefined {
  const bound = countProblem(sizeGiB, Number.MAX_SAFE_INTEGER, MIN_SIZE_GIB);
  if (bound !== undefined) return bound;
  const size = sizeGiB as number;
  if (size > MAX_SIZE_GIB) return `is ${grouped(size)}, over the largest claim spec.huggingFace.sizeGiB allows (${grouped(MAX_SIZE_GIB)})`;
  if (bytesTotal === undefined) return undefined;
  const least = Math.ceil(bytesTotal / GIB);
  const most = requiredGiBFor(bytesTotal);
  if (size < least) return `is ${grouped(size)}, less than the ${grouped(least)} GiB its byte total (${grouped(bytesTotal)}) needs`;
  if (size > most)
    return `is ${grouped(size)}, more than its byte total (${grouped(bytesTotal)}) and the margin account for (${grouped(most)})`;
  return undefined;
}

/** Collects the problems of one report, field by field, and keeps only the values that pass. */
export class ReportChecks {
  readonly problems: ReportProblem[] = [];
  constructor(readonly report: string) {}

  add(field: string, problem: string): void {
    this.problems.push({ report: this.report, field, problem });
  }

  /** A count in [min, max], or undefined (absent is not a problem unless `required`). */
  count(
    record: Record<string, unknown>,
    field: string,
    max: number,
    options: { min?: number; required?: boolean } = {},
  ): number | undefined {
    const value = record[field];
    if (value === undefined && options.required !== true) return undefined;
    const problem = countProblem(value, max, options.min ?? 0);
    if (problem !== undefined) {
      this.add(field, problem);
      return undefined;
    }
    return value as number;
  }

  /** A bounded string (matching `pattern` when given), or undefined. */
  string(
    record: Record<string, unknown>,
    field: string,
    max: number,
    options: { pattern?: { test: RegExp; what: string }; required?: boolean } = {},
  ): string | undefined {
    const value = record[field];
    if (value === undefined && options.required !== true) return undefined;
    const problem = stringProblem(value, max, options.pattern);
    if (problem !== undefined) {
      this.add(field, problem);
      return undefined;
    }
    return value as string;
  }

  /** One of `allowed`, or undefined. */
  oneOf<T extends string>(
    record: Record<string, unknown>,
    field: string,
    allowed: readonly T[],
    options: { required?: boolean } = {},
  ): T | undefined {
    const value = record[field];
    if (value === undefined && options.required !== true) return undefined;
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
    this.add(field, value === undefined ? 'is missing' : `is not one of ${allowed.join(', ')}`);
    return undefined;
  }

  /** `done` ≤ `total`, both already checked; says so when not. */
  notMore(doneField: string, done: number | undefined, totalField: string, total: number | undefined): boolean {
    if (done === undefined || total === undefined || done <= total) return true;
    this.add(doneField, `is ${grouped(done)}, more than ${totalField} ${grouped(total)}`);
    return false;
  }

  get ok(): boolean {
    return this.problems.length === 0;
  }
}

/** The condition that says whether everything read back from a cluster (or a child) passed these checks. */
export const REPORTS_ACCEPTED = 'ReportsAccepted';
export const REPORTS_REASON = { accepted: 'Accepted', refused: 'ReportRefused' } as const;

/**
 * The ReportsAccepted condition for `problems`: True when there are none;
 * else False naming which report, which field and what is wrong (at most
 * three, and how many more), and that nothing was changed by it.
 */
export function reportsCondition(problems: readonly ReportProblem[], accepted: string): ConditionSpec {
  if (problems.length === 0) return { type: REPORTS_ACCEPTED, status: true, reason: REPORTS_REASON.accepted, message: accepted };
  return {
    type: REPORTS_ACCEPTED,
    status: false,
    reason: REPORTS_REASON.refused,
    message: `${describeProblems(problems)}: refused, so it changed nothing (the last good values stand)`,
  };
}
