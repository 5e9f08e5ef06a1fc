// Taking a cluster over from the ModelCacheHydration this one replaces
// (docs/design/fleet.md): its status is inherited, and the remote objects it
// staged are adopted by name. Until provider-kubernetes has reported what an
// Object found on the cluster, the inherited state is what is known.

import { remoteManifest } from '#lib';
import type { Stage } from './outcome.js';

/**
 * Whether the remote object behind `key` has not been reported yet: its
 * Object is being created by this adopting XR, or exists without what
 * provider-kubernetes observed. An Object that is missing from an XR that
 * is not adopting is not "not reported": it is gone, and so may be what it
 * held.
 */
export function remoteNotReported(stage: Pick<Stage, 'observed' | 'adopting'>, key: string): boolean {
  const observed = stage.observed(key);
  if (observed === undefined) return stage.adopting;
  return remoteManifest(observed) === undefined;
}
