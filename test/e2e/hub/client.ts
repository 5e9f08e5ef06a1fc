// What the node e2e tests share: whether this plane has real nodes, the plane
// hub's controls (test/e2e/hub/main.ts) as the tests call them, where a claim's
// files are on its node's disk, and the end of a story.

import { join } from 'node:path';
import { REMOTE_NAMESPACE, getIn, getString, type JsonObject } from '#lib';
import type { Faults, Recorded } from '../../support/fake-hub.js';
import { WORKLOAD_CLUSTERS, eventually, getObject, kubectl, list, ofStory, reasonOf, type ApiServer } from '../plane.js';
import { HUB_PORT, HUB_WEIGHTS } from './repo.js';

/**
 * The controls of the hub at `base`: `hub` calls one (GET requests since the last reset, GET history since the start,
 * POST reset, PUT faults), `setFaults` replaces the faults (an empty object: none).
 */
export function hubControls(base: string): {
  hub: (path: 'requests' | 'history' | 'reset' | 'faults', init?: RequestInit) => Promise<unknown>;
  setFaults: (faults: Faults) => Promise<unknown>;
} {
  const hub = async (path: 'requests' | 'history' | 'reset' | 'faults', init?: RequestInit): Promise<unknown> => {
    const response = await fetch(`${base}/_hub/${path}`, init);
    if (!response.ok) throw new Error(`hub ${path}: ${response.status}`);
    return response.json();
  };
  return { hub, setFaults: (faults) => hub('faults', { method: 'PUT', body: JSON.stringify(faults) }) };
}

/** The plane's hub (main.ts). */
export const { hub, setFaults } = hubControls(`http://127.0.0.1:${HUB_PORT}`);

/**
 * The hub's GETs of `repo`'s weights at `commit`: since the last reset (`requests`), or since the hub started
 * (`history`, which a reset by a story of the other lane leaves).
 */
export async function weightGets(repo: string, commit: string, since: 'requests' | 'history' = 'requests'): Promise<Recorded[]> {
  const recorded = (await hub(since)) as Recorded[];
  return recorded.filter((r) => r.method === 'GET' && r.url === `/${repo}/resolve/${commit}/${HUB_WEIGHTS}`);
}

/**
 * The addresses a workload cluster's pods reach the hub from, as prefixes (faults.refuseFrom): their node's (the
 * CNI masquerades traffic leaving the node) and their own (docs/nodes.md, Network).
 */
export function clusterClients(cluster: (typeof WORKLOAD_CLUSTERS)[number]): string[] {
  const index = WORKLOAD_CLUSTERS.indexOf(cluster);
  return [`10.209.${index}.`, `10.244.${index}.`];
}

/** A claim on a workload cluster, its PersistentVolume, and the volume's directory on the host (local-path volumes are directories). */
export function volumeOnNode(cluster: ApiServer, claim: string): { pvc?: JsonObject; pv?: JsonObject; dir: string } {
  const pvc = getObject(cluster, 'pvc', claim, REMOTE_NAMESPACE);
  const pv = getObject(cluster, 'pv', getString(pvc, 'spec', 'volumeName') ?? '');
  const dir = getString(pv, 'spec', 'hostPath', 'path') ?? getString(pv, 'spec', 'local', 'path') ?? '';
  return { ...(pvc ? { pvc } : {}), ...(pv ? { pv } : {}), dir };
}

/** The hub layout's folder for a model repository (huggingface_hub's repo_folder_name). */
export const repoFolder = (repo: string): string => `models--${repo.replace('/', '--')}`;

/** Where the hub layout keeps a repository's snapshot of a commit, under a cache directory. */
export const snapshotDir = (cache: string, repo: string, commit: string): string => join(cache, repoFolder(repo), 'snapshots', commit);

/** Wait for a ModelCache to say its artifact is Staged (Ready on every cluster it selects); the ModelCache. */
export function cacheStaged(namespace: string, cache: string, options: { timeoutMs: number }): Promise<JsonObject> {
  return eventually(
    `the ModelCache ${cache} Ready`,
    () => {
      const found = getObject('control-plane', 'modelcache', cache, namespace);
      return reasonOf(found, 'ArtifactReady') === 'Staged' ? found : undefined;
    },
    options,
  );
}

/**
 * The end of a node story: its ModelCaches and their hydrations gone, then every Object they composed, then
 * its namespace and its InferenceClusters. The namespace goes last on purpose: a namespaced Object still
 * deleting in a terminating namespace never finishes (provider-kubernetes re-creates its
 * ProviderConfigUsage on every reconcile, which a terminating namespace refuses: crossplane-runtime#1150),
 * and the namespace then stays Terminating for good. A claim's Object outlives its XR while a finished
 * Job's pod still holds the claim (the PVC protection controller waits for it, and the Job's TTL is
 * minutes), so the story's finished Jobs are deleted here, as their TTL would later.
 */
export async function removeStory(namespace: string, inferenceClusters: readonly string[]): Promise<void> {
  kubectl('control-plane', ['delete', 'modelcaches', '--all', '-n', namespace, '--wait=false']);
  await eventually(
    'every XR gone',
    () => ['modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, namespace).length === 0),
    { timeoutMs: 180_000 },
  );
  for (const cluster of WORKLOAD_CLUSTERS) kubectl(cluster, ['delete', 'jobs', '-A', '-l', ofStory(namespace), '--wait=false']);
  await eventually(
    'every Object of the story gone',
    () => list('control-plane', 'objects.kubernetes.m.crossplane.io', namespace).length === 0,
    {
      timeoutMs: 180_000,
      describe: () =>
        list('control-plane', 'objects.kubernetes.m.crossplane.io', namespace)
          .map((o) => `${getString(o, 'metadata', 'name')}: ${JSON.stringify(getIn(o, 'status', 'conditions'))}`)
          .join('; '),
    },
  );
  kubectl('control-plane', ['delete', 'namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  // Its own InferenceClusters only: a story beside it may be using others.
  kubectl('control-plane', ['delete', 'inferenceclusters', ...inferenceClusters, '--ignore-not-found']);
}
