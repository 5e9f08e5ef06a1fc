// The YAML excerpts of a Markdown page that a test records: each is a fenced
// yaml block right after a marker `<!-- excerpt: <name> -->`. The test records
// the value of each name; the page must show exactly those values (compared
// as data, so Prettier's way of writing YAML doesn't matter), one block per
// name, no block without a value. With UPDATE_DOCS=1 the blocks are rewritten
// from the values instead, and the page is formatted.
//
// docs/walkthrough.md's values are objects read from a live control plane
// (test/e2e/walkthrough.e2e.ts); `asShown` is the one rule for what of them a
// page shows, so that the same story shows the same YAML on every run.

import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { parse, stringify } from 'yaml';
import { isObject, type JsonObject, type JsonValue } from '#lib';

/** Fields whose value is the API server's or a controller's bookkeeping, or a moment: different on every run. */
const VARYING_FIELDS = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'observedGeneration',
  'lastTransitionTime',
  'lastProbeTime',
  'lastUpdateTime',
  'startTime',
  'completionTime',
]);

/** Annotations that hold a moment, a generated name, or a copy of what was applied. */
const VARYING_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  'crossplane.io/external-create-pending',
  'crossplane.io/external-create-succeeded',
  'crossplane.io/external-name',
]);

/**
 * An object read from the plane as a page shows it: the same for the same
 * story on every run. It drops the VARYING_FIELDS wherever they are (ownerReferences
 * keep kind and name, conditions keep type, status, reason and message), the
 * VARYING_ANNOTATIONS, the `name` of an object Crossplane named from a
 * `generateName` (which stays), and Crossplane's `Responsive` condition, whose
 * state depends on how busy the watches were at that moment (a burst opens the
 * circuit for five minutes). Everything else is kept as the API server holds it.
 */
export function asShown(value: unknown): unknown {
  if (Array.isArray(value))
    return value.filter((item) => !(isObject(item) && item['type'] === 'Responsive' && 'reason' in item)).map(asShown);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || VARYING_FIELDS.has(key)) continue;
    if (key === 'name' && typeof value['generateName'] === 'string') continue;
    if (key === 'annotations' && isObject(item)) {
      const kept = Object.entries(item).filter(([annotation]) => !VARYING_ANNOTATIONS.has(annotation));
      if (kept.length > 0) out[key] = Object.fromEntries<JsonValue | undefined>(kept);
      continue;
    }
    out[key] = asShown(item) as JsonObject;
  }
  return out;
}

const BLOCK = /<!-- excerpt: ([a-z0-9-]+) -->(\s*)```yaml\n([\s\S]*?)```/g;

export interface ExcerptBlock {
  name: string;
  text: string;
}

export function excerptBlocks(markdown: string): ExcerptBlock[] {
  return [...markdown.matchAll(BLOCK)].map((match) => ({ name: match[1]!, text: match[3]! }));
}

/** What is wrong between a page's blocks and the recorded values, one line each (empty: the page is current). */
export function excerptProblems(markdown: string, values: ReadonlyMap<string, unknown>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const block of excerptBlocks(markdown)) {
    if (seen.has(block.name)) problems.push(`excerpt ${block.name} appears more than once`);
    seen.add(block.name);
    if (!values.has(block.name)) {
      problems.push(`excerpt ${block.name} is on the page, but the test records no value for it`);
      continue;
    }
    let shown: unknown;
    try {
      shown = parse(block.text) as unknown;
    } catch (error) {
      problems.push(`excerpt ${block.name} is not YAML: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (JSON.stringify(shown) !== JSON.stringify(values.get(block.name))) {
      problems.push(
        `excerpt ${block.name} differs from what the test produced now:\n${stringify(values.get(block.name), { lineWidth: 0 })}`,
      );
    }
  }
  for (const name of values.keys()) {
    if (!seen.has(name))
      problems.push(
        `excerpt ${name} is recorded by the test, but the page has no block for it (add <!-- excerpt: ${name} --> and a yaml block)`,
      );
  }
  return problems;
}

/** The page with every block rewritten from the values, formatted as Prettier would. */
export async function withExcerpts(markdown: string, values: ReadonlyMap<string, unknown>, file: string): Promise<string> {
  const replaced = markdown.replace(BLOCK, (whole, name: string, space: string) =>
    values.has(name) ? `<!-- excerpt: ${name} -->${space}\`\`\`yaml\n${stringify(values.get(name), { lineWidth: 0 })}\`\`\`` : whole,
  );
  const options = (await resolveConfig(file)) ?? {};
  return format(replaced, { ...options, filepath: file });
}

export const UPDATE_DOCS = process.env['UPDATE_DOCS'] === '1';

/** Check the page against the values, or (UPDATE_DOCS=1) rewrite its blocks; returns the problems left. */
export async function checkOrUpdate(file: string, values: ReadonlyMap<string, unknown>): Promise<string[]> {
  const markdown = readFileSync(file, 'utf8');
  if (UPDATE_DOCS) {
    const updated = await withExcerpts(markdown, values, file);
    if (updated !== markdown) writeFileSync(file, updated);
    return excerptProblems(updated, values);
  }
  return excerptProblems(markdown, values);
}
