// Resolving a requirement against the objects given with -e, as render's
// FilteringFetcher does: same apiVersion and kind, then by name (the first
// match only) or by labels (every object whose labels include them; an empty
// map matches every object of the kind). The selector's namespace is ignored,
// as render ignores it. Objects are taken in name order, so the answer does not
// depend on the order of the files.

import { compareNames, getString, getStringMap, type JsonObject } from '#lib';
import type { Selector } from './load.js';

export function selectRequired(resources: readonly JsonObject[], selector: Selector): JsonObject[] {
  const byName = [...resources].sort((a, b) =>
    compareNames(getString(a, 'metadata', 'name') ?? '', getString(b, 'metadata', 'name') ?? ''),
  );
  const found: JsonObject[] = [];
  for (const resource of byName) {
    if (getString(resource, 'apiVersion') !== selector.apiVersion || getString(resource, 'kind') !== selector.kind) continue;
    if (selector.matchName !== undefined) {
      if ((getString(resource, 'metadata', 'name') ?? '') === selector.matchName) return [resource];
      continue;
    }
    // A selector with neither a name nor labels matches nothing here (see tooling-facts.md).
    if (selector.matchLabels === undefined) continue;
    const labels = getStringMap(resource, 'metadata', 'labels');
    if (Object.entries(selector.matchLabels).every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value))
      found.push(resource);
  }
  return found;
}
