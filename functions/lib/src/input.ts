// Reading user input. Every spec field a function uses is parsed here into a
// typed value, and anything unexpected becomes an InputError that names the
// field and what is wrong with it. The runtime turns an InputError into a Fatal
// result, so Crossplane keeps every composed resource as it is and shows the
// message on the XR: bad input never crashes a server or drops a resource.

import { isObject } from './json.js';
import { pathKey, quoteValue } from './redact.js';

export class InputError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
    this.name = 'InputError';
  }
}

export type Parser<T> = (value: unknown, field: string) => T;

interface OptionalField<T> {
  readonly optional: true;
  readonly parse: Parser<T>;
}

type Field<T> = Parser<T> | OptionalField<T>;
type Shape = Record<string, Field<unknown>>;

type RequiredKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends OptionalField<unknown> ? never : K;
}[keyof S];
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends OptionalField<unknown> ? K : never;
}[keyof S];
type FieldType<F> = F extends OptionalField<infer T> ? T : F extends Parser<infer T> ? T : never;

export type Parsed<S extends Shape> = { [K in RequiredKeys<S>]: FieldType<S[K]> } & {
  [K in OptionalKeys<S>]?: FieldType<S[K]>;
};

/** A field that may be absent (or null, which Kubernetes treats the same). */
export function optional<T>(parse: Parser<T>): OptionalField<T> {
  return { optional: true, parse };
}

/**
 * Short, printable form of a bad value for an error message. A string is
 * quoted without anything that may be a credential (user info, a query, a
 * token: redactCredentials), whichever check refused it, then cut to 40
 * characters.
 */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return quoteValue(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

export interface StringRules {
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
  /** What the pattern means, for the error message. */
  patternHint?: string;
}

export function string(rules: StringRules = {}): Parser<string> {
  const minLength = rules.minLength ?? 1;
  return (value, field) => {
    if (typeof value !== 'string') throw new InputError(field, `must be a string (got ${describe(value)})`);
    if (value.length < minLength) {
      throw new InputError(field, minLength === 1 ? 'must not be empty' : `must be at least ${minLength} characters`);
    }
    if (rules.maxLength !== undefined && value.length > rules.maxLength) {
      throw new InputError(field, `must be at most ${rules.maxLength} characters (got ${value.length})`);
    }
    if (rules.pattern && !rules.pattern.test(value)) {
      throw new InputError(field, `must be ${rules.patternHint ?? `match ${rules.pattern.source}`} (got ${describe(value)})`);
    }
    return value;
  };
}

export function integer(rules: { min: number; max: number }): Parser<number> {
  return (value, field) => {
    // Struct numbers are doubles: 20 arrives as 20.0, which is fine; 20.5 is not.
    if (typeof value !== 'number' || !Number.isInteger(value) || value < rules.min || value > rules.max) {
      throw new InputError(field, `must be an integer from ${rules.min} to ${rules.max} (got ${describe(value)})`);
    }
    return value;
  };
}

export function boolean(): Parser<boolean> {
  return (value, field) => {
    if (typeof value !== 'boolean') throw new InputError(field, `must be true or false (got ${describe(value)})`);
    return value;
  };
}

export function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return (value, field) => {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      throw new InputError(field, `must be one of ${values.join(', ')} (got ${describe(value)})`);
    }
    return value as T;
  };
}

export function array<T>(item: Parser<T>, rules: { minItems?: number; maxItems?: number } = {}): Parser<T[]> {
  return (value, field) => {
    if (!Array.isArray(value)) throw new InputError(field, `must be a list (got ${describe(value)})`);
    if (rules.minItems !== undefined && value.length < rules.minItems) {
      throw new InputError(field, `must have at least ${rules.minItems} item${rules.minItems === 1 ? '' : 's'}`);
    }
    if (rules.maxItems !== undefined && value.length > rules.maxItems) {
      throw new InputError(field, `must have at most ${rules.maxItems} items (got ${value.length})`);
    }
    return value.map((entry, index) => item(entry, `${field}[${index}]`));
  };
}

/** A map of string keys to parsed values (labels, volume attributes). */
export function record<T>(entry: Parser<T>, rules: { maxProperties?: number } = {}): Parser<Record<string, T>> {
  return (value, field) => {
    if (!isObject(value)) throw new InputError(field, `must be a map (got ${describe(value)})`);
    const keys = Object.keys(value);
    if (rules.maxProperties !== undefined && keys.length > rules.maxProperties) {
      throw new InputError(field, `must have at most ${rules.maxProperties} entries (got ${keys.length})`);
    }
    const out: Record<string, T> = {};
    for (const key of keys) out[key] = entry(value[key], `${field}.${pathKey(key)}`);
    return out;
  };
}

export interface ObjectRules {
  /**
   * Refuse a field the shape does not list, naming it and the nearest known
   * one. For the function input, which no API server prunes (a Composition's
   * step input is kept as written), so a typo would otherwise be a setting
   * silently ignored. Off for an XR's spec: its XRD's schema prunes unknown
   * fields, and a function must not fail on a field it does not read.
   */
  closed?: boolean;
  /** With closed: fields that may be present and are not read (the input's metadata). */
  ignored?: readonly string[];
}

/** An object with the given fields; unknown fields are dropped, or (closed) refused. */
export function object<S extends Shape>(shape: S, rules: ObjectRules = {}): Parser<Parsed<S>> {
  // Listed once: parsers run on every call of every function.
  const fields = Object.entries(shape);
  const known = rules.closed ? new Set([...Object.keys(shape), ...(rules.ignored ?? [])]) : undefined;
  return (value, field) => {
    if (!isObject(value)) throw new InputError(field, `must be an object (got ${describe(value)})`);
    if (known) {
      for (const key of Object.keys(value)) {
        if (!known.has(key)) throw unknownField(field, key, [...known]);
      }
    }
    const out: Record<string, unknown> = {};
    for (const [key, spec] of fields) {
      const raw = Object.hasOwn(value, key) ? value[key] : undefined;
      const path = field === '' ? key : `${field}.${key}`;
      if (typeof spec === 'function') {
        if (raw === undefined || raw === null) throw new InputError(path, 'is required');
        out[key] = spec(raw, path);
      } else if (raw !== undefined && raw !== null) {
        out[key] = spec.parse(raw, path);
      }
    }
    return out as Parsed<S>;
  };
}

/** The refusal of an unknown field: its path, and the known field it most likely meant (or the known ones). */
export function unknownField(field: string, key: string, known: readonly string[]): InputError {
  const path = field === '' ? pathKey(key) : `${field}.${pathKey(key)}`;
  const near = nearestName(key, known);
  if (near !== undefined) return new InputError(path, `is not a known field: did you mean ${near}?`);
  const where = field === '' ? 'the object' : (field.split('.').at(-1) ?? field);
  return new InputError(path, `is not a known field (${where} has ${[...known].sort().join(', ')})`);
}

/**
 * The known name closest to `name`, when it is close enough to be a typo:
 * at most a third of its length (and at least 2) edits away, counting a swap
 * of two neighbours as one edit and ignoring case.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  if (name.length === 0 || name.length > 128) return undefined;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  return bestDistance <= Math.max(2, Math.floor(Math.max(name.length, best.length) / 3)) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** A parser that also checks a rule across fields; the rule returns a problem or undefined. */
export function refine<T>(parse: Parser<T>, rule: (value: T, field: string) => InputError | undefined): Parser<T> {
  return (value, field) => {
    const parsed = parse(value, field);
    const problem = rule(parsed, field);
    if (problem) throw problem;
    return parsed;
  };
}

/** Parse and return either the value or the error, for callers that report per item. */
export function tryParse<T>(parse: Parser<T>, value: unknown, field: string): { value: T } | { error: InputError } {
  try {
    return { value: parse(value, field) };
  } catch (error) {
    if (error instanceof InputError) return { error };
    throw error;
  }
}

// Kubernetes name rules, shared by every parser that reads a name.
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A Kubernetes object name that must be a DNS label (namespaces, cluster names, XR names). */
export const dnsLabel = (): Parser<string> =>
  string({
    maxLength: 63,
    pattern: DNS_LABEL,
    patternHint: 'a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit',
  });

/** A Kubernetes object name that may contain dots (Secrets, claims, ConfigMaps). */
export const dnsSubdomain = (): Parser<string> =>
  string({
    maxLength: 253,
    pattern: DNS_SUBDOMAIN,
    patternHint: 'a DNS subdomain: lower-case letters, digits, "-" and "."',
  });
