// The Usage that keeps a ModelCache from being deleted while a replica that
// mounts it exists, and what a waiting replica keeps of what it composed.

import {
  KIND,
  MODELPLANE_API_VERSION,
  OBJECT_API_VERSION,
  OBJECT_KIND,
  getObject,
  getString,
  keepObservedObject,
  type JsonObject,
} from '#lib';
import type { Replica } from './spec.js';

const USAGE_API_VERSION = 'protection.crossplane.io/v1beta1';

/**
 * A namespaced Usage of the ModelCache, composed (and so owned) by this
 * replica: Crossplane refuses to delete the cache while it exists, and
 * deletes it with the replica. It names the replica in `reason`, not in `by`:
 * a composed Usage whose `by` is the XR composing it waits for that XR to be
 * gone before it lets go, while a foreground deletion of the XR waits for the
 * Usage first. replayDeletion: a cache deletion refused while the replica
 * lived is carried out as soon as the Usage goes.
 */
export function cacheUsage(replica: Replica, cacheName: string): JsonObject {
  return {
    apiVersion: USAGE_API_VERSION,
    kind: 'Usage',
    spec: {
      of: { apiVersion: MODELPLANE_API_VERSION, kind: KIND.ModelCache, resourceRef: { name: cacheName } },
      reason: `ModelReplica ${replica.name} in namespace ${replica.namespace} serves a model from this cache`,
      replayDeletion: true,
    },
  };
}

/**
 * An observed composed resource, desired again as it was: what we asked of a
 * provider-kubernetes Object (the lib's keepObservedObject), or the kind and
 * spec of anything else (the Usage). Re-desiring it keeps it exactly as it is
 * where dropping it would delete it.
 */
export function keepObserved(observed: JsonObject): JsonObject {
  if (getString(observed, 'apiVersion') === OBJECT_API_VERSION && getString(observed, 'kind') === OBJECT_KIND) {
    return keepObservedObject(observed);
  }
  const kept: JsonObject = { apiVersion: getString(observed, 'apiVersion') ?? '', kind: getString(observed, 'kind') ?? '' };
  const spec = getObject(observed, 'spec');
  if (spec !== undefined) kept['spec'] = spec;
  return kept;
}
