// Kubernetes label selectors, and the cache footprint they define.

import type { V1LabelSelector, V1LabelSelectorRequirement } from '@kubernetes/client-node';
import { InputError, array, describe, object, oneOf, optional, record, string, type ObjectRules, type Parser } from './input.js';
import { cacheEntries, type CacheEntry } from './cache-status.js';
import { readInferenceCluster, type InferenceCluster } from './cluster.js';

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

export interface SelectorRequirement extends V1LabelSelectorRequirement {
  operator: SelectorOperator;
}
export interface LabelSelector extends V1LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: SelectorRequirement[];
}

const requirement = (rules: ObjectRules): Parser<SelectorRequirement> => {
  const parse = object(
    {
      key: string({ maxLength: 317 }),
      operator: oneOf(SELECTOR_OPERATORS),
      values: optional(array(string({ minLength: 0, maxLength: 63 }))),
    },
    rules,
  );
  return (value, field) => {
    const parsed = parse(value, field);
    const needsValues = parsed.operator === 'In' || parsed.operator === 'NotIn';
    const values = parsed.values ?? [];
    if (needsValues && values.length === 0) {
      throw new InputError(`${field}.values`, `must not be empty when operator is ${parsed.operator}`);
    }
    if (!needsValues && values.length > 0) {
      throw new InputError(`${field}.values`, `must be empty when operator is ${parsed.operator}`);
    }
    return needsValues ? { key: parsed.key, operator: parsed.operator, values } : { key: parsed.key, operator: parsed.operator };
  };
};

/**
 * A selector that must select something: an empty selector would match every
 * cluster in Kubernetes, and a cache must name its footprint, so it is refused.
 * `rules.closed` (the function input's per-cluster overrides): an unknown
 * field in it or in an expression is refused too.
 */
export const labelSelector = (rules: ObjectRules = {}): Parser<LabelSelector> => {
  const parse = object(
    {
      matchLabels: optional(record(string({ minLength: 0, maxLength: 63 }))),
      matchExpressions: optional(array(requirement(rules))),
    },
    rules,
  );
  return (value, field) => {
    const parsed = parse(value, field);
    const selector: LabelSelector = {};
    if (parsed.matchLabels && Object.keys(parsed.matchLabels).length > 0) selector.matchLabels = parsed.matchLabels;
    if (parsed.matchExpressions && parsed.matchExpressions.length > 0) selector.matchExpressions = parsed.matchExpressions;
    if (!selector.matchLabels && !selector.matchExpressions) {
      throw new InputError(field, `must select on at least one label or expression (got ${describe(value)} with none)`);
    }
    return selector;
  };
};

/**
 * Kubernetes LabelSelector semantics: every matchLabels entry AND every
 * expression. NotIn and DoesNotExist match a missing label. An empty selector
 * matches nothing here (in Kubernetes it matches everything).
 */
export function matchesSelector(labels: Record<string, string>, selector: LabelSelector): boolean {
  // Loops rather than Object.entries/every: this runs once per cluster, a thousand times a reconcile.
  const expressions = selector.matchExpressions ?? [];
  let selects = expressions.length > 0;
  const matchLabels = selector.matchLabels;
  for (const key in matchLabels) {
    selects = true;
    if (!Object.hasOwn(labels, key) || labels[key] !== matchLabels[key]) return false;
  }
  if (!selects) return false;
  for (const expression of expressions) if (!matchesRequirement(labels, expression)) return false;
  return true;
}

function matchesRequirement(labels: Record<string, string>, requirement: SelectorRequirement): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return present && value !== undefined && values.includes(value);
    case 'NotIn':
      return !present || value === undefined || !values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
  }
}

/**
 * What to ask Crossplane for. A required-resource selector can carry only
 * matchName or matchLabels, so send the selector's labels (an empty map lists
 * every InferenceCluster) and apply the full selector, expressions included,
 * to what comes back.
 */
export function requirementLabels(selector: LabelSelector): Record<string, string> {
  return { ...(selector.matchLabels ?? {}) };
}

export interface Footprint {
  /** Clusters the cache pre-warms: selected and provisioned, sorted by name. */
  clusters: InferenceCluster[];
  /** Selected clusters that report no provider config yet (not stamped), sorted. */
  unprovisioned: string[];
}

/**
 * The clusters a cache pre-warms: those its selector matches that report
 * `status.providerConfigRef.name`. A cluster listed twice counts once.
 */
export function cacheFootprint(selector: LabelSelector, clusters: readonly unknown[]): Footprint {
  const byName = new Map<string, InferenceCluster>();
  const unprovisioned = new Set<string>();
  for (const raw of clusters) {
    const cluster = readInferenceCluster(raw);
    if (!cluster || !matchesSelector(cluster.labels, selector)) continue;
    if (cluster.providerConfigName) byName.set(cluster.name, cluster);
    else unprovisioned.add(cluster.name);
  }
  for (const name of byName.keys()) unprovisioned.delete(name);
  return {
    clusters: [...byName.values()].sort((a, b) => compareNames(a.name, b.name)),
    unprovisioned: [...unprovisioned].sort(compareNames),
  };
}

/**
 * Where a replica of a model can be placed: footprint clusters whose entry in
 * the cache's `status.clusters[]` is Ready with a mount.
 */
export function placeableClusters(selector: LabelSelector, cacheStatus: unknown, clusters: readonly unknown[]): InferenceCluster[] {
  const ready = new Map<string, CacheEntry>();
  for (const entry of cacheEntries(cacheStatus)) {
    if (entry.phase === 'Ready' && entry.mount !== undefined) ready.set(entry.name, entry);
  }
  return cacheFootprint(selector, clusters).clusters.filter((cluster) => ready.has(cluster.name));
}

/** Byte order, not locale order: the same everywhere, so responses are deterministic. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
