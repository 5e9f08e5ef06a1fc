// The labels on what a cache stages on a workload cluster, and what they tell
// about a claim found there. Every team's objects share the workload
// namespace, so the control-plane namespace a cache was staged for is written
// on what it stages, and a claim staged for one namespace is never mounted as
// a PersistentVolumeClaim source from another.

import { LABEL_MODELCACHE, LABEL_NAMESPACE, childName } from '#lib';
import type { Stage } from './outcome.js';

/** On every remote object's metadata: the cache, and the namespace it belongs to. */
export function remoteLabels(stage: Pick<Stage, 'cacheName' | 'namespace'>): Record<string, string> {
  return { [LABEL_MODELCACHE]: stage.cacheName, [LABEL_NAMESPACE]: stage.namespace };
}

/**
 * On a Job's pod template: the cache only, as before the namespace label
 * existed. A template can't be updated, so adding to it would make every Job
 * running across an upgrade fail to sync.
 */
export function podLabels(stage: Pick<Stage, 'cacheName'>): Record<string, string> {
  return { [LABEL_MODELCACHE]: stage.cacheName };
}

export type ClaimOwner =
  /** Not staged by Modelplane (a platform's own claim), or staged for this namespace. */
  { usable: true } | { usable: false; owner: string };

/**
 * Whether a claim observed on a workload cluster may be mounted by a cache in
 * `namespace`. A claim with the namespace label belongs to that namespace. A
 * claim with only the cache label was staged before the namespace label
 * existed (or by upstream Modelplane, which never wrote it): its name is
 * childName("modelcache", <namespace>, <cache>), so it belongs to `namespace`
 * exactly when that name, computed for `namespace`, is its name; any other is
 * refused (its owner can't be told, and it is not ours). Its own hydration
 * adds the label on its next reconcile.
 */
export function claimOwner(claimName: string, labels: Readonly<Record<string, string>>, namespace: string): ClaimOwner {
  const owner = labels[LABEL_NAMESPACE];
  if (owner !== undefined) return owner === namespace ? { usable: true } : { usable: false, owner: `namespace ${owner}` };
  const cache = labels[LABEL_MODELCACHE];
  if (cache === undefined) return { usable: true };
  if (childName('modelcache', namespace, cache) === claimName) return { usable: true };
  return { usable: false, owner: `ModelCache ${cache} of another namespace` };
}
