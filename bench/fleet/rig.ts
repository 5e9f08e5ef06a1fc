// The fleet benchmark's rig (pure): N simulated clusters on the `make up`
// plane's three workload API servers. Each simulated cluster is one
// InferenceCluster and one ClusterProviderConfig; the provider configs take
// turns over the three servers (reusing the kubeconfig Secrets up.sh stored),
// and each simulated cluster's remote objects go to its own namespace there
// (HydrationSettings.workloadNamespace: PerCluster), so no two Objects ever
// manage one remote object.

import { LABEL_MODELCACHE, hydrationName, workloadNamespace, type WorkloadNamespaceMode } from '#lib';

export const WORKLOAD_SERVERS = ['cluster-a', 'cluster-b', 'cluster-c'] as const;
export type WorkloadServer = (typeof WORKLOAD_SERVERS)[number];

/** Every object the rig writes carries it (the value: the cache's name), so cleanup finds exactly them. */
export const FLEET_LABEL = 'bench.modelplane.ai/fleet';

export interface SimulatedCluster {
  /** The InferenceCluster's and its ClusterProviderConfig's name. */
  name: string;
  /** The workload API server it lives on. */
  server: WorkloadServer;
  /** Its namespace there: where its hydration's remote objects go. */
  remoteNamespace: string;
  /** The ModelCacheHydration that stages the cache on it. */
  hydration: string;
}

export interface Rig {
  namespace: string;
  cache: string;
  mode: WorkloadNamespaceMode;
  clusters: SimulatedCluster[];
}

export const clusterName = (index: number): string => `fleet-${String(index).padStart(4, '0')}`;

/**
 * N simulated clusters, round-robin over the servers. Refuses a layout where
 * two clusters would share a namespace on one server (Shared or PerTeam with
 * more clusters than servers): their Objects would manage the same PVC and
 * Job, and the figures would be the rig's.
 */
export function planRig(n: number, namespace: string, cache: string, mode: WorkloadNamespaceMode): Rig {
  if (!Number.isInteger(n) || n < 1) throw new Error(`the fleet size must be a positive integer (got ${n})`);
  const clusters: SimulatedCluster[] = [];
  const taken = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const name = clusterName(i);
    const server = WORKLOAD_SERVERS[i % WORKLOAD_SERVERS.length]!;
    const remoteNamespace = workloadNamespace(mode, namespace, name);
    const where = `${server}/${remoteNamespace}`;
    const other = taken.get(where);
    if (other !== undefined) {
      throw new Error(
        `clusters ${other} and ${name} would share namespace ${remoteNamespace} on ${server} (workloadNamespace ${mode}); ` +
          'start the plane with MODELPLANE_UP_WORKLOAD_NAMESPACE=PerCluster',
      );
    }
    taken.set(where, name);
    clusters.push({ name, server, remoteNamespace, hydration: hydrationName(namespace, cache, name) });
  }
  return { namespace, cache, mode, clusters };
}

/** The HuggingFace source every run stages (the e2e lifecycle's): a token, so a cluster composes its full set. */
export const SOURCE = {
  source: 'HuggingFace',
  huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main', sizeGiB: 20, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } },
} as const;

/**
 * The Objects one hydration composes for that source, before Ready: the PVC,
 * the Job, the token Secret, the Job's ServiceAccount, Role and RoleBinding,
 * and outside `default` the namespace (examples/model-cache-hydration).
 */
export const objectsPerCluster = (mode: WorkloadNamespaceMode): number => (mode === 'Shared' ? 6 : 7);

type Manifest = Record<string, unknown>;

export function inferenceCluster(rig: Rig, cluster: SimulatedCluster): Manifest {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'InferenceCluster',
    metadata: { name: cluster.name, labels: { [FLEET_LABEL]: rig.cache } },
    spec: {},
  };
}

/** What upstream's InferenceCluster composition reports once the cluster is provisioned (as the e2e lifecycle writes it). */
export function provisionedStatus(cluster: SimulatedCluster): Manifest {
  return { providerConfigRef: { name: cluster.name }, cache: { storageClassName: 'modelplane-rwx', imageVolumes: true } };
}

export function clusterProviderConfig(rig: Rig, cluster: SimulatedCluster): Manifest {
  return {
    apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
    kind: 'ClusterProviderConfig',
    metadata: { name: cluster.name, labels: { [FLEET_LABEL]: rig.cache } },
    spec: {
      credentials: {
        source: 'Secret',
        secretRef: { namespace: 'crossplane-system', name: `kubeconfig-${cluster.server}`, key: 'kubeconfig' },
      },
    },
  };
}

export function teamObjects(rig: Rig): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: rig.namespace, labels: { [FLEET_LABEL]: rig.cache } } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hf-token', namespace: rig.namespace },
      stringData: { HF_TOKEN: 'hf_bench_not_a_real_token' },
    },
  ];
}

/** The run's ModelCache: SOURCE, or SOURCE of another repository (`repo`: the e2e rig downloads a copy of its own). */
export function modelCache(rig: Rig, repo?: string): Manifest {
  const source = repo === undefined ? SOURCE : { ...SOURCE, huggingFace: { ...SOURCE.huggingFace, repo } };
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: { name: rig.cache, namespace: rig.namespace },
    spec: { ...source, clusterSelector: { matchLabels: { [FLEET_LABEL]: rig.cache } } },
  };
}

/** The label selector of this cache's hydrations. */
export const hydrationSelector = (rig: Rig): string => `${LABEL_MODELCACHE}=${rig.cache}`;

/** The simulated clusters of each server, by remote namespace (what the stand-in walks). */
export function namespacesByServer(rig: Rig): Map<WorkloadServer, Set<string>> {
  const out = new Map<WorkloadServer, Set<string>>(WORKLOAD_SERVERS.map((server) => [server, new Set<string>()]));
  for (const cluster of rig.clusters) out.get(cluster.server)!.add(cluster.remoteNamespace);
  return out;
}
