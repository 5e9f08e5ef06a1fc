// The reclaim guard's input: which clusters run a ModelReplica that reads this
// cache. A cluster that leaves the footprint keeps its child (and so its staged
// weights) while any of them exists there: nothing is pulled out from under a
// running pod (architecture decision 9).

import { compareNames, getString, type JsonObject } from '#lib';

/**
 * The ModelReplicas that reference `cache`, by the cluster they run on, names
 * sorted. Replicas are required from the cache's namespace; one from another
 * namespace (crossplane render ignores a selector's namespace) is not ours to
 * count, and one missing a name, cluster or reference counts for nothing.
 */
export function replicasByCluster(replicas: readonly JsonObject[], cache: { name: string; namespace: string }): Map<string, string[]> {
  const byCluster = new Map<string, Set<string>>();
  for (const replica of replicas) {
    const namespace = getString(replica, 'metadata', 'namespace');
    if (namespace !== undefined && namespace !== cache.namespace) continue;
    if (getString(replica, 'spec', 'modelCacheRef', 'name') !== cache.name) continue;
    const name = getString(replica, 'metadata', 'name');
    const cluster = getString(replica, 'spec', 'clusterName');
    if (name === undefined || cluster === undefined) continue;
    const names = byCluster.get(cluster) ?? new Set<string>();
    names.add(name);
    byCluster.set(cluster, names);
  }
  const out = new Map<string, string[]>();
  for (const [cluster, names] of byCluster) out.set(cluster, [...names].sort(compareNames));
  return out;
}
