// The protocol as the tests see it: plain JSON in the shape of the proto
// messages (camelCase fields, enums by name), with every Struct as plain JSON.

import type { JsonObject, JsonValue } from '#lib';

export type ReadyName = 'READY_UNSPECIFIED' | 'READY_TRUE' | 'READY_FALSE';
export type SeverityName = 'SEVERITY_FATAL' | 'SEVERITY_WARNING' | 'SEVERITY_NORMAL';
export type StatusName = 'STATUS_CONDITION_UNKNOWN' | 'STATUS_CONDITION_TRUE' | 'STATUS_CONDITION_FALSE';

export interface TestResource {
  resource: JsonObject;
  ready?: ReadyName;
  connectionDetails?: Record<string, Buffer>;
}

export interface TestState {
  composite?: TestResource;
  resources?: Record<string, TestResource>;
}

export interface TestRequest {
  meta?: { tag: string };
  observed?: TestState;
  desired?: TestState;
  context?: JsonObject;
  /** The Composition step's `input` (a function's settings). */
  input?: JsonObject;
  requiredResources?: Record<string, { items: TestResource[] }>;
  extraResources?: Record<string, { items: TestResource[] }>;
  credentials?: Record<string, { credentialData: { data: Record<string, Buffer> } }>;
}

export interface TestSelector {
  apiVersion: string;
  kind: string;
  matchName?: string;
  matchLabels?: { labels: Record<string, string> };
  namespace?: string;
}

export interface TestResult {
  severity: SeverityName;
  message: string;
  reason?: string;
}

export interface TestCondition {
  type: string;
  status: StatusName;
  reason: string;
  message?: string;
}

export interface TestResponse {
  meta: { tag: string; ttl?: { seconds: number; nanos?: number } };
  desired?: { composite?: TestResource; resources: Record<string, TestResource> };
  results: TestResult[];
  requirements?: { resources: Record<string, TestSelector> };
  conditions: TestCondition[];
  context?: JsonObject;
}

// --- google.protobuf.Struct <-> JSON, as protobufjs represents it -------------

export interface ProtoValue {
  nullValue?: string | number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct;
  listValue?: { values?: ProtoValue[] };
}
export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

export function toStruct(value: JsonObject): ProtoStruct {
  const fields: Record<string, ProtoValue> = {};
  for (const [key, entry] of Object.entries(value)) {
    // An own key even when it is "__proto__", so a test can send one.
    if (entry !== undefined)
      Object.defineProperty(fields, key, { value: toValue(entry), enumerable: true, writable: true, configurable: true });
  }
  return { fields };
}

function toValue(value: JsonValue): ProtoValue {
  if (value === null) return { nullValue: 0 };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  return { structValue: toStruct(value) };
}

/** Decode a Struct; a null_value comes back as null, so tests can see one if a server ever sends it. */
export function fromStruct(struct: ProtoStruct | undefined): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(struct?.fields ?? {})) out[key] = fromValue(value);
  return out;
}

function fromValue(value: ProtoValue): JsonValue {
  // Exactly one field of the Value is set on the wire; protobufjs leaves the others out.
  if (value.nullValue !== undefined) return null;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.structValue !== undefined) return fromStruct(value.structValue);
  if (value.listValue !== undefined) return (value.listValue.values ?? []).map(fromValue);
  throw new Error(`protobuf Value with no kind set: ${JSON.stringify(value)}`);
}
