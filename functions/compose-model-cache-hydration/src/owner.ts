// Whose each remote object of this cache is (docs/design/names.md). The
// cache's names carry its namespace, but join it to the cache's name with the
// "-" names themselves hold, so ("ml", "team-qwen") names what ("ml-team",
// "qwen") does. Everything a cache composes says which cache it belongs to;
// an object that another cache owns is never written again: observed only,
// and this cluster is Failed, naming the owner, until a person resolves it.

import { ownershipOf, remoteTitle, type JsonObject, type Owner } from '#lib';
import { CLAIM_KEY } from './claim.js';
import { NAMESPACE_KEY } from './namespace.js';
import type { Outcome } from './outcome.js';

/** The owner every object of one cache names, whichever ModelCacheHydration composes it (a hand-over keeps it). */
export function cacheOwner(namespace: string, cacheName: string): Owner {
  return { kind: 'ModelCache', namespace, name: cacheName };
}

/** Keys never checked: the user's own claim (claimOwner decides it) and the workload namespace, shared by design. */
export const SHARED_KEYS: ReadonlySet<string> = new Set([CLAIM_KEY, NAMESPACE_KEY]);

export interface Conflict {
  key: string;
  title: string;
  owner: string;
}

/** The observed Objects whose remote objects another XR owns. */
export function conflictsOf(keys: readonly string[], observed: (key: string) => JsonObject | undefined, owner: Owner): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const key of keys) {
    if (SHARED_KEYS.has(key)) continue;
    const object = observed(key);
    const ownership = ownershipOf(object, owner);
    if (!ownership.ours) conflicts.push({ key, title: remoteTitle(object), owner: ownership.owner });
  }
  return conflicts;
}

/**
 * The hold a conflict makes: every Object kept as observed, another's
 * observe-only (never written, never deleted), no mount, Failed until a
 * person acts: staging over another cache's claim would give this cache's
 * replicas that cache's weights.
 */
export function ownedElsewhere(conflicts: readonly Conflict[], cluster: string, artifact: string): Outcome {
  const [first] = conflicts;
  const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more of its objects)` : '';
  return {
    phase: 'Failed',
    reason: 'OwnedElsewhere',
    message: `${first!.title} on ${cluster} belongs to ${first!.owner}${more}: this cache leaves it as it is (observed only: never written, never deleted) and stages nothing there; rename this ModelCache or its namespace's other cache, or remove what the other owns`,
    facts: {},
    resources: [],
    keepObserved: true,
    othersOwn: conflicts.map((c) => c.key),
    warnings: [],
    artifact,
  };
}
