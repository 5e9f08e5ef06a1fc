// The footprint: the clusters this cache stages on. The selector decides
// (labels and expressions, applied here: the requirement could only carry the
// labels), and a cluster must report a provider config to be reachable.

import { DNS_LABEL, cacheFootprint, type JsonObject } from '#lib';
import type { ModelCache } from './spec.js';

export interface Footprint {
  /** Selected, provisioned clusters that get a child, sorted by name. */
  stamped: string[];
  /** Selected clusters without `status.providerConfigRef.name`: nothing is stamped for them yet. */
  unprovisioned: string[];
  /**
   * Selected, provisioned clusters whose name can't name a child: it reaches
   * childName and a label value, so it must be a DNS label. One odd cluster
   * is reported, never a reason to fail the whole cache.
   */
  badNames: string[];
}

export function resolveFootprint(cache: ModelCache, clusters: readonly JsonObject[]): Footprint {
  const selected = cacheFootprint(cache.clusterSelector, clusters);
  const stamped: string[] = [];
  const badNames: string[] = [];
  for (const cluster of selected.clusters) {
    if (cluster.name.length <= 63 && DNS_LABEL.test(cluster.name)) stamped.push(cluster.name);
    else badNames.push(cluster.name);
  }
  return { stamped, unprovisioned: selected.unprovisioned, badNames };
}
