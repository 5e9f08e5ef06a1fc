// Which namespace on the workload cluster a replica's engines, claim
// templates and routing go into. The library decides (placement): beside its
// cache, because a pod can mount only a claim in its own namespace; else
// where its engines already run, so switching the setting never moves (and
// so never duplicates or orphans) a running engine; else what the
// ReplicaSettings say. A per-team namespace is created by a Namespace Object
// without Delete, as the cache creates it: one replica's removal never
// deletes a namespace others use.

import {
  composedManifest,
  namespaceOwner,
  NAMESPACE_POLICIES,
  REMOTE_NAMESPACE,
  getString,
  mountNamespace,
  namespaceManifest,
  placement,
  remoteObject,
  type CacheMount,
  type JsonObject,
  type ReplicaSettings,
} from '#lib';
import type { Observed } from './conditions.js';
import { workloadKeys } from './names.js';
import type { Replica } from './spec.js';

/** Desired key of the per-team Namespace Object. */
export const WORKLOAD_NAMESPACE_KEY = 'workload-namespace';
/** The Warning when the replica runs elsewhere than its settings say. */
export const NAMESPACE_MISMATCH = 'WorkloadNamespaceMismatch';

export interface ReplicaPlacement {
  /** The replica, with the namespace its objects go into. */
  replica: Replica;
  /** The Namespace Object to compose first, outside `default`. */
  namespaceObject?: JsonObject;
  /** Why it runs elsewhere than the settings say, for a Warning. */
  warning?: string;
}

export function placeReplica(options: {
  settings: ReplicaSettings;
  replica: Replica;
  observed: Observed;
  providerConfig: string;
  cluster: string;
  cache?: { name: string; mount: CacheMount };
}): ReplicaPlacement {
  const { settings, replica, observed, cache } = options;
  const staged = workloadKeys(replica)
    .map((key) => getString(composedManifest(observed.get(key)), 'metadata', 'namespace'))
    .find((ns) => ns !== undefined);
  const found: { cache?: string; staged?: string } = {};
  if (cache) found.cache = mountNamespace(cache.mount);
  if (staged !== undefined) found.staged = staged;
  const where = placement(settings.workloadNamespace, replica.namespace, options.cluster, found);
  const out: ReplicaPlacement = { replica: { ...replica, workloadNamespace: where.namespace } };
  if (where.namespace !== REMOTE_NAMESPACE) {
    out.namespaceObject = remoteObject({
      providerConfig: options.providerConfig,
      manifest: namespaceManifest(where.namespace, namespaceOwner(settings.workloadNamespace, replica.namespace, options.cluster)),
      managementPolicies: NAMESPACE_POLICIES,
    });
  }
  if (where.elsewhere) {
    const { configured } = where.elsewhere;
    out.warning =
      where.elsewhere.because === 'cache'
        ? `ModelCache ${cache?.name ?? ''} is staged in namespace ${where.namespace} on ${options.cluster}, and the ReplicaSettings name ${configured}: this replica runs in ${where.namespace}, beside its cache (a pod can mount only a claim in its own namespace). Set workloadNamespace alike in the ModelCacheHydration and ModelReplica Compositions`
        : `this replica already runs in namespace ${where.namespace} on ${options.cluster}, and the ReplicaSettings name ${configured}: it stays where it runs (nothing is moved); a replica created from now on goes to ${configured}`;
  }
  return out;
}
