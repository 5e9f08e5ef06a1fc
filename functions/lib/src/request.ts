// Reading a RunFunctionRequest: the observed composite, observed composed
// resources, and required resources.

import { InputError, describe } from './input.js';
import { getObject, getString, getStringMap, isObject, type JsonObject } from './json.js';
import type { ResourceSelector, RunFunctionRequest } from './protocol.js';

export interface Composite {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Unparsed: each function parses what it reads, naming the field on error. */
  spec: unknown;
  status: JsonObject;
  resource: JsonObject;
}

/**
 * The observed XR. A request whose XR is not an object, or has no name or
 * namespace (every XR here is namespaced), is refused naming what is missing.
 */
export function readComposite(req: RunFunctionRequest): Composite {
  const resource: unknown = req.observed?.composite?.resource;
  if (!isObject(resource)) {
    throw new InputError(
      'observed composite resource',
      `must be an object (got ${resource === undefined ? 'nothing' : describe(resource)})`,
    );
  }
  const metadata = resource['metadata'];
  if (!isObject(metadata)) throw new InputError('metadata', `must be an object (got ${describe(metadata ?? 'nothing')})`);
  const name = getString(metadata, 'name');
  if (name === undefined) throw new InputError('metadata.name', 'is missing');
  const namespace = getString(metadata, 'namespace');
  if (namespace === undefined) throw new InputError('metadata.namespace', 'is missing: this XR is namespaced');
  return {
    apiVersion: getString(resource, 'apiVersion') ?? '',
    kind: getString(resource, 'kind') ?? '',
    name,
    namespace,
    labels: getStringMap(metadata, 'labels'),
    annotations: getStringMap(metadata, 'annotations'),
    spec: resource['spec'],
    status: getObject(resource, 'status') ?? {},
    resource,
  };
}

/** The observed composed resource under `key` (the Object or XR itself), if any. */
export function observedResource(req: RunFunctionRequest, key: string): JsonObject | undefined {
  const resources = req.observed?.resources;
  if (!resources || !Object.hasOwn(resources, key)) return undefined;
  const resource: unknown = resources[key]?.resource;
  return isObject(resource) ? resource : undefined;
}

/** The keys of every observed composed resource, in a stable order. */
export function observedKeys(req: RunFunctionRequest): string[] {
  return Object.keys(req.observed?.resources ?? {}).sort();
}

/**
 * A required resource set. Crossplane leaves a key out of the request until it
 * has fetched it, and sends an empty list when it fetched and found nothing:
 * the two mean different things, so they are different values here.
 */
export type Required = { fetched: false } | { fetched: true; items: JsonObject[] };

export function requiredResources(req: RunFunctionRequest, key: string): Required {
  // Crossplane v2 fills requiredResources; older releases filled extraResources.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- read on purpose, for Crossplane releases before v2
  const sets = [req.requiredResources, req.extraResources];
  for (const set of sets) {
    if (!set || !Object.hasOwn(set, key)) continue;
    const items: JsonObject[] = [];
    for (const item of set[key]?.items ?? []) {
      const resource: unknown = item.resource;
      if (isObject(resource)) items.push(resource);
    }
    return { fetched: true, items };
  }
  return { fetched: false };
}

/** The first item of a by-name requirement, once fetched (undefined: fetched, not found). */
export function requiredOne(req: RunFunctionRequest, key: string): { fetched: false } | { fetched: true; item?: JsonObject } {
  const found = requiredResources(req, key);
  if (!found.fetched) return found;
  const item = found.items[0];
  return item ? { fetched: true, item } : { fetched: true };
}

export function selectByName(apiVersion: string, kind: string, name: string, namespace?: string): ResourceSelector {
  const selector: ResourceSelector = { apiVersion, kind, matchName: name };
  if (namespace !== undefined) selector.namespace = namespace;
  return selector;
}

/** An empty label map lists every object of the kind (Crossplane refuses a selector with neither name nor labels). */
export function selectByLabels(apiVersion: string, kind: string, labels: Record<string, string>, namespace?: string): ResourceSelector {
  const selector: ResourceSelector = { apiVersion, kind, matchLabels: { labels: { ...labels } } };
  if (namespace !== undefined) selector.namespace = namespace;
  return selector;
}
