// JSON shapes as they cross the protocol. Every resource, spec and status in a
// RunFunctionRequest is a google.protobuf.Struct, which decodes to plain JSON.
// The functions never trust those shapes: they read them through these guards.

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
// Values may be `undefined` while an object is being built; `prune` drops them
// (and any null) before anything is written to a response.
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as an object, or undefined when it is anything else. */
export function asObject(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

/** The value as an array, or an empty array when it is anything else. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value as a non-empty string, or undefined. */
export function asString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * An empty record meant for many keys: a response's thousand composed
 * resources, a request's thousand observed ones. V8 keeps an object made as
 * `{}` in "fast mode", where each key added copies the list of the keys
 * before it (about 1.4 KB allocated per key at a thousand keys, quadratic
 * time); an object without a prototype is a hash table from the start. It
 * also has no `__proto__` setter, so every key is an ordinary one.
 */
export function keyedRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Walk a path of own keys. Anything that is not an object on the way yields
 * undefined, so a malformed resource reads as "field absent", never a throw.
 */
export function getIn(value: unknown, ...path: string[]): unknown {
  return walk(value, path);
}

// The typed readers pass their path array on as it is: spreading it again
// would make a second array per read.
function walk(value: unknown, path: readonly string[]): unknown {
  let current: unknown = value;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    if (!isObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

export function getObject(value: unknown, ...path: string[]): JsonObject | undefined {
  return asObject(walk(value, path));
}

export function getString(value: unknown, ...path: string[]): string | undefined {
  return asString(walk(value, path));
}

/** A map of string to string (labels, annotations); other entries are skipped. */
export function getStringMap(value: unknown, ...path: string[]): Record<string, string> {
  const source = asObject(walk(value, path));
  const out: Record<string, string> = {};
  if (!source) return out;
  for (const key in source) {
    const entry = source[key];
    if (typeof entry === 'string') out[key] = entry;
  }
  return out;
}

/**
 * The value without null, undefined or non-finite numbers. Crossplane reads a
 * null in desired state as "delete this field", so nothing we send may hold
 * one; empty arrays and objects are kept, because they can mean something.
 * A value that holds none of them is returned as it is (no copy: responses at
 * a thousand clusters are large); otherwise a cleaned copy is returned.
 */
export function prune<T>(value: T): T {
  return isClean(value) ? value : (pruneValue(value) as T);
}

function isClean(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object') return typeof value === 'string' || typeof value === 'boolean';
  if (Array.isArray(value)) {
    for (const item of value) if (!isClean(item)) return false;
    return true;
  }
  // for...in, not Object.keys: no array of keys per object checked (JSON objects inherit no keys).
  const object = value as Record<string, unknown>;
  for (const key in object) if (!isClean(object[key])) return false;
  return true;
}

function pruneValue(value: unknown): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const kept = pruneValue(item);
      if (kept !== undefined) out.push(kept);
    }
    return out;
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const kept = pruneValue((value as Record<string, unknown>)[key]);
      if (kept !== undefined) out[key] = kept;
    }
    return out;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  return undefined;
}

/** Cast a typed Kubernetes shape (built from @kubernetes/client-node types) to JSON. */
export function toJson(value: object): JsonObject {
  return value as unknown as JsonObject;
}
