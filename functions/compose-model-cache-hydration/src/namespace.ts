// Which namespace on the workload cluster a cache lives in, and the Namespace
// Object a per-team namespace needs. The rule is the library's
// (workloadNamespace); this adds the one thing only the hydration knows: where
// this cache was already staged. A cache staged before the setting changed
// stays where it is, so switching to per-team namespaces never drops a staged
// volume or re-downloads it behind anyone's back; a new cache (or a recreated
// one) goes to the team's namespace.

import {
  NAMESPACE_POLICIES,
  REMOTE_NAMESPACE,
  WORKLOAD_NAMESPACE_ENV,
  composedManifest,
  getString,
  namespaceManifest,
  placement,
  remoteObject,
  type CacheMount,
  type JsonObject,
  type Placement,
  type WorkloadNamespaceMode,
} from '#lib';
import { CLAIM_KEY } from './claim.js';
import { HF_KEYS } from './huggingface.js';
import { OCI_KEYS } from './oci.js';
import type { Outcome } from './outcome.js';

/** Desired key of the per-team Namespace Object. */
export const NAMESPACE_KEY = 'namespace';

/** The Objects whose namespace says where a cache is staged: what holds the weights or the result. */
const ANCHORS: readonly string[] = [HF_KEYS.pvc, CLAIM_KEY, OCI_KEYS.result];

/** The namespace this cache uses on its cluster: where it was staged, else what the setting says. */
export function placeCache(
  mode: WorkloadNamespaceMode,
  teamNamespace: string,
  cluster: string,
  observed: (key: string) => JsonObject | undefined,
): Placement {
  for (const key of ANCHORS) {
    const staged = getString(composedManifest(observed(key)), 'metadata', 'namespace');
    if (staged !== undefined) return placement(mode, teamNamespace, cluster, { staged });
  }
  return placement(mode, teamNamespace, cluster);
}

/**
 * A per-team namespace: the Namespace Object goes first, without Delete (one
 * cache's removal must not delete a namespace another uses), and a published
 * mount says where it lives, so the replica puts engine pods there.
 */
export function placeIn(outcome: Outcome, where: Placement, owner: { label: string; value: string }, providerConfig: string): void {
  if (where.namespace === REMOTE_NAMESPACE) return;
  if (!outcome.keepObserved) {
    outcome.resources.unshift([
      NAMESPACE_KEY,
      remoteObject({
        providerConfig,
        manifest: namespaceManifest(where.namespace, owner),
        managementPolicies: NAMESPACE_POLICIES,
      }),
    ]);
  }
  if (outcome.mount) outcome.mount = withNamespace(outcome.mount, where.namespace);
}

function withNamespace(mount: CacheMount, namespace: string): CacheMount {
  if (mount.env.some((e) => e.name === WORKLOAD_NAMESPACE_ENV)) return mount;
  return { ...mount, env: [...mount.env, { name: WORKLOAD_NAMESPACE_ENV, value: namespace }] };
}

/** The warning of a latched cache: it stays, nothing moves, and how to move it. */
export function latchWarning(where: Placement, artifact: string): { reason: 'StagedInOtherNamespace'; message: string } | undefined {
  if (!where.elsewhere) return undefined;
  return {
    reason: 'StagedInOtherNamespace',
    message: `${artifact} was staged in namespace ${where.namespace} before the workload namespace setting changed to ${where.elsewhere.configured}; it stays in ${where.namespace} (nothing is moved or deleted), and replicas follow it there. To move it, delete and recreate the ModelCache`,
  };
}
