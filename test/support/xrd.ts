// What the API server does with an XR before any function sees it, for the
// XRDs in package/: apply schema defaults, check the structural schema
// (types, required, enums, bounds, patterns), then evaluate every
// x-kubernetes-validations rule with a real CEL evaluator. Tests use it to show
// that each rule admits what it must and refuses what it must, with its message.

import { readFileSync } from 'node:fs';
import { evaluate } from '@marcbachmann/cel-js';
import { parse as parseYaml } from 'yaml';
import { isObject, type JsonObject } from '#lib';
import { REPO_ROOT } from './server.js';

export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

export interface Xrd {
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope?: string;
    versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[];
  };
}

export function loadYamlDocuments(path: string): unknown[] {
  const text = readFileSync(path.startsWith('/') ? path : `${REPO_ROOT}${path}`, 'utf8');
  return text
    .split(/^---\s*$/m)
    .map((doc) => parseYaml(doc) as unknown)
    .filter((doc) => doc !== null && doc !== undefined);
}

/** The XRD at a path relative to the repository root, e.g. package/modelcaches/definition.yaml. */
export function loadXrd(path: string): Xrd {
  const [doc] = loadYamlDocuments(path);
  return doc as Xrd;
}

export function xrdSchema(xrd: Xrd, version = 'v1alpha1'): SchemaNode {
  const found = xrd.spec.versions.find((v) => v.name === version);
  if (!found) throw new Error(`${xrd.metadata.name} has no version ${version}`);
  return found.schema.openAPIV3Schema;
}

/** Every CEL rule in a schema with where it sits, so a test can assert each one is exercised. */
export function celRules(schema: SchemaNode, path = ''): { path: string; rule: string; message?: string }[] {
  const rules = (schema['x-kubernetes-validations'] ?? []).map((r) => ({ path: path || '(root)', ...r }));
  for (const [key, child] of Object.entries(schema.properties ?? {})) rules.push(...celRules(child, path ? `${path}.${key}` : key));
  if (schema.items) rules.push(...celRules(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') rules.push(...celRules(schema.additionalProperties, `${path}.*`));
  return rules;
}

/**
 * Validate an object (the XR body: spec and maybe status) against the XRD's
 * schema. Returns every problem as "<path>: <message>"; for a CEL rule the
 * message is the rule's own. `old` makes transition rules (oldSelf) apply.
 */
export function validateXr(xrd: Xrd, body: JsonObject, old?: JsonObject, version = 'v1alpha1'): string[] {
  const schema = xrdSchema(xrd, version);
  const problems: string[] = [];
  const value = withDefaults(schema, structuredClone(body));
  const oldValue = old === undefined ? undefined : withDefaults(schema, structuredClone(old));
  check(schema, value, oldValue, '', problems);
  return problems;
}

/** Apply schema defaults as the API server does, before validation. */
export function withDefaults(schema: SchemaNode, value: unknown): unknown {
  if (isObject(value)) {
    const object: Record<string, unknown> = value;
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (object[key] === undefined && child.default !== undefined) object[key] = structuredClone(child.default);
      if (object[key] !== undefined) object[key] = withDefaults(child, object[key]);
    }
  } else if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item: unknown, i) => {
      value[i] = withDefaults(items, item);
    });
  }
  return value;
}

function check(schema: SchemaNode, value: unknown, old: unknown, path: string, problems: string[]): void {
  const at = path || '(root)';
  if (!checkType(schema, value)) {
    problems.push(`${at}: must be of type ${schema.type}`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: must be one of ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: must be <= ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push(`${at}: must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push(`${at}: must be at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) problems.push(`${at}: must match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problems.push(`${at}: must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${at}: must have at most ${schema.maxItems} items`);
    const items = schema.items;
    if (items) {
      value.forEach((item: unknown, i) => {
        check(items, item, Array.isArray(old) ? (old[i] as unknown) : undefined, `${path}[${i}]`, problems);
      });
    }
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (schema.minProperties !== undefined && keys.length < schema.minProperties)
      problems.push(`${at}: must have at least ${schema.minProperties} properties`);
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
      problems.push(`${at}: must have at most ${schema.maxProperties} properties`);
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) problems.push(`${path ? `${path}.` : ''}${key}: Required value`);
    }
    for (const [key, child] of Object.entries(value)) {
      const childSchema =
        schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (childSchema) check(childSchema, child, isObject(old) ? old[key] : undefined, path ? `${path}.${key}` : key, problems);
    }
  }
  for (const { rule, message } of schema['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(rule);
    if (transition && old === undefined) continue; // the API server skips transition rules on create
    let result: unknown;
    try {
      result = evaluate(rule, { self: toCel(schema, value), ...(transition ? { oldSelf: toCel(schema, old) } : {}) });
    } catch (error) {
      problems.push(`${at}: rule ${JSON.stringify(rule)} did not evaluate: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (result !== true) problems.push(`${at}: ${message ?? `failed rule: ${rule}`}`);
  }
}

function checkType(schema: SchemaNode, value: unknown): boolean {
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return true;
  }
}

/** CEL sees schema integers as int (BigInt in cel-js), as the API server does. */
function toCel(schema: SchemaNode, value: unknown): unknown {
  if (schema.type === 'integer' && typeof value === 'number') return BigInt(value);
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((item) => toCel(items, item)) : value;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const childSchema =
        schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      out[key] = childSchema ? toCel(childSchema, child) : child;
    }
    return out;
  }
  return value;
}
