// What the node stories with an engine pod share (nodes-serving, nodes-claim,
// nodes-oci): the cluster set up as a platform team would (its node in the
// replica's pool, its InferenceCluster labelled for the story), a replica of
// the vLLM stand-in asking for one fake GPU of the nodes' DRA driver, the wait
// for its pod to be Ready and the replica Serving, what the engine says it
// read, and the end of the story.

import { REMOTE_NAMESPACE, asArray, getIn, getString, hydrationName, isObject, type JsonObject } from '#lib';
import { sha256 } from '../../support/fake-hub.js';
import {
  ENGINE_STANDIN_IMAGE,
  apply,
  engineTemplate,
  conditionTrue,
  eventually,
  getObject,
  inferenceCluster,
  kubectl,
  kubectlOk,
  list,
  modelCache,
  reasonOf,
  replicaManifest,
  setInferenceClusterStatus,
  standaloneReplica,
  type ApiServer,
} from '../plane.js';
import { removeStory } from './client.js';
import { HUB_FILES, HUB_REPO } from './repo.js';

type Cluster = Exclude<ApiServer, 'control-plane'>;

/** The node pool the stories' replicas name; the composed pods select it by modelplane.ai/pool. */
export const ENGINE_POOL = 'e2e-standin';
/** The DeviceClass dra-example-driver publishes its fake GPUs under (node.sh). */
export const FAKE_GPU_CLASS = 'gpu.example.com';
/**
 * What real pods take on the nodes: a Job's pod run to its end (or through the kubelet's restarts to a failed Job), an
 * image pull, an engine's start and its readiness probe (30 s before its first try), a claim held by a finished Job's
 * pod until the Job's TTL (180 s) removes it.
 */
export const ENGINE_WAIT = { timeoutMs: 300_000 };
/** A test that holds two such waits (the engine pod, then Serving), so a stall ends in their sentence, not vitest's. */
export const ENGINE_TEST_TIMEOUT = 2 * ENGINE_WAIT.timeoutMs + 60_000;
/** What the stand-in must have read: the hub repository's files by sha256. */
export const HUB_FILE_SHAS: Record<string, string> = Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(f.content)]));

export const nodeOf = (cluster: Cluster): string => `${cluster}-node`;

/** The cluster's node in a node pool (the label a replica's nodePoolName selects), as the pool's nodes are. */
export const joinPool = (cluster: Cluster, pool: string): void => {
  kubectlOk(cluster, ['label', 'node', nodeOf(cluster), `modelplane.ai/pool=${pool}`, '--overwrite']);
};
/** The cluster's node out of every pool. */
export const leavePool = (cluster: Cluster): void => {
  kubectl(cluster, ['label', 'node', nodeOf(cluster), 'modelplane.ai/pool-']);
};

/**
 * The story's namespace, its cluster's node in the pool, and its InferenceCluster (named `name`, the workload
 * cluster's own name unless the story plays beside others: docs/nodes.md, "Two lanes") labelled `label: yes`,
 * with `spec` (nodes-grove: the Dynamo stack).
 */
export function openStory(namespace: string, cluster: Cluster, label: string, name: string = cluster, spec: JsonObject = {}): void {
  joinPool(cluster, ENGINE_POOL);
  apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  apply('control-plane', inferenceCluster(name, { [label]: 'yes' }, spec));
  setInferenceClusterStatus(name, {
    providerConfigRef: { name: cluster },
    cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
  });
}

/** The replica gone, then the story's caches, namespace and InferenceCluster (`name`), then the node out of the pool. */
export async function closeStory(namespace: string, replica: string, cluster: Cluster, name: string = cluster): Promise<void> {
  kubectl('control-plane', ['delete', 'modelreplica', replica, '-n', namespace, '--wait=false']);
  await eventually('the replica gone', () => list('control-plane', 'modelreplicas', namespace).length === 0, { timeoutMs: 180_000 });
  await removeStory(namespace, [name]);
  leavePool(cluster);
}

/** A replica whose one engine is the vLLM stand-in with one fake GPU, in the stories' pool. */
export const standinReplica = (namespace: string, name: string, cluster: string, cache: string, args: string[]): JsonObject =>
  standaloneReplica(namespace, name, cluster, cache, {
    image: ENGINE_STANDIN_IMAGE,
    args,
    nodePoolName: ENGINE_POOL,
    deviceClassName: FAKE_GPU_CLASS,
  });

/** vLLM's own args for the model the cache's contract names, as docs/engine-contract.md writes them. */
export const VLLM_ARGS = ['--model=$(MODELPLANE_MODEL)', '--revision=$(MODELPLANE_MODEL_REVISION)'];

/**
 * A gang replica: a Leader and one Worker, each the vLLM stand-in with one fake GPU, in the stories' pool (a
 * LeaderWorkerSet, or a Grove PodCliqueSet on the Dynamo stack); `env`, more of the engine container's own.
 */
export function standinGangReplica(namespace: string, name: string, cluster: string, cache: string, env: JsonObject[] = []): JsonObject {
  const member = (role: 'Leader' | 'Worker'): JsonObject => ({
    role,
    nodePoolName: ENGINE_POOL,
    ...(role === 'Worker' ? { worker: { nodes: 1 } } : {}),
    deviceRequests: [{ name: 'gpu', deviceClassName: FAKE_GPU_CLASS, count: 1 }],
    template: engineTemplate(ENGINE_STANDIN_IMAGE, VLLM_ARGS, env),
  });
  return replicaManifest(namespace, name, cluster, cache, [member('Leader'), member('Worker')]);
}

/** Wait for a cache's hydration on one InferenceCluster to say Staged; that hydration. */
export async function cacheStaged(namespace: string, cache: string, inferenceCluster: string): Promise<JsonObject> {
  const hydration = (): JsonObject | undefined =>
    getObject('control-plane', 'modelcachehydration', hydrationName(namespace, cache, inferenceCluster), namespace);
  return eventually(
    `${cache} Ready on ${inferenceCluster}`,
    () => {
      const found = hydration();
      return reasonOf(found, 'ArtifactReady') === 'Staged' ? found : undefined;
    },
    { ...ENGINE_WAIT, describe: () => JSON.stringify(getIn(hydration(), 'status')) },
  );
}

/** A gang's pods on a cluster by a label selector, in name order (the leader's name sorts first under LWS and Grove). */
export const gangPodsBy = (cluster: Cluster, selector: string): JsonObject[] =>
  list(cluster, 'pods', REMOTE_NAMESPACE, selector).sort((a, b) =>
    (getString(a, 'metadata', 'name') ?? '').localeCompare(getString(b, 'metadata', 'name') ?? ''),
  );

/** Wait for a gang's two pods (the leader and one worker, as `pods` lists them) to be Ready; them. */
export const gangReady = (pods: () => JsonObject[]): Promise<JsonObject[]> =>
  eventually(
    'the leader and the worker Ready on the node',
    () => {
      const found = pods();
      return found.length === 2 && found.every((pod) => conditionTrue(pod, 'Ready')) ? found : undefined;
    },
    {
      ...ENGINE_WAIT,
      describe: () =>
        JSON.stringify(
          pods().map((p) => [getString(p, 'metadata', 'name'), getIn(p, 'status', 'phase'), getIn(p, 'spec', 'schedulingGates')]),
        ),
    },
  );

/** What `command` prints in a pod's running (first) container; a failure names the pod and what was run. */
function execIn(cluster: Cluster, pod: JsonObject, command: string[], what: string): string {
  const podName = getString(pod, 'metadata', 'name') ?? '';
  const result = kubectl(cluster, ['exec', '-n', REMOTE_NAMESPACE, podName, '--', ...command]);
  if (result.code !== 0) throw new Error(`${what} in ${podName}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** A variable as a pod's running container has it (its env after Kubernetes expanded `$(VAR)` references). */
export const runningEnv = (cluster: Cluster, pod: JsonObject, name: string): string =>
  execIn(cluster, pod, ['printenv', name], `printenv ${name}`);

/**
 * What a gang pod's container finds at a leader address in its env: the name's
 * address, looked up by the pod's own resolver (the cluster's DNS), and the
 * answer of the engine's `/health` by that name; or the lookup's error.
 */
export type LeaderSeen = { name: string; ip: string; health: number } | { name: string; error: string };

const REACH_LEADER = [
  'import json, os, socket, sys, urllib.request',
  'name = os.environ[sys.argv[1]]',
  'try:',
  '    ip = socket.gethostbyname(name)',
  'except OSError as e:',
  "    print(json.dumps({'name': name, 'error': f'{type(e).__name__}: {e}'}))",
  '    sys.exit(0)',
  "health = urllib.request.urlopen(f'http://{name}:8000/health', timeout=20).status",
  "print(json.dumps({'name': name, 'ip': ip, 'health': health}))",
].join('\n');

/** From inside `pod`'s running container: resolve the address in its env `variable` and ask the engine for /health by that name. */
export const reachLeader = (cluster: Cluster, pod: JsonObject, variable = 'MODELPLANE_LEADER_ADDRESS'): LeaderSeen =>
  JSON.parse(execIn(cluster, pod, ['python3', '-c', REACH_LEADER, variable], `reaching ${variable}`)) as LeaderSeen;

/** The names in a pod's first container's env, in the order the kubelet resolves them. */
export const envNames = (pod: JsonObject): (string | undefined)[] =>
  asArray(getIn(asArray(getIn(pod, 'spec', 'containers')).find(isObject), 'env'))
    .filter(isObject)
    .map((e) => getString(e, 'name'));

/** A ModelCache of the hub's public repository (or `repo`) on the clusters labelled `label: yes` (openStory labels the story's). */
export const hubCache = (namespace: string, name: string, label: string, repo: string = HUB_REPO): JsonObject =>
  modelCache(namespace, name, { source: 'HuggingFace', huggingFace: { repo, sizeGiB: 1 } }, { [label]: 'yes' });

export const replicaOf = (namespace: string, name: string): JsonObject | undefined =>
  getObject('control-plane', 'modelreplica', name, namespace);

/** The replica's engine pods on its cluster (its Deployment's, running the stand-in). */
export const standinPods = (cluster: Cluster, replica: string): JsonObject[] =>
  list(cluster, 'pods', REMOTE_NAMESPACE).filter(
    (pod) =>
      (getString(pod, 'metadata', 'name') ?? '').startsWith(`${replica}-`) &&
      asArray(getIn(pod, 'spec', 'containers')).some((c) => isObject(c) && c['image'] === ENGINE_STANDIN_IMAGE),
  );

/** Wait for the replica's engine pod to be Ready, then for the replica to say Serving; the pod. */
export async function servingPod(namespace: string, replica: string, cluster: Cluster): Promise<JsonObject> {
  const pod = await eventually(
    `the engine pod Ready on ${cluster}`,
    () => standinPods(cluster, replica).find((p) => conditionTrue(p, 'Ready')),
    { ...ENGINE_WAIT, describe: () => JSON.stringify(standinPods(cluster, replica).map((p) => getIn(p, 'status'))) },
  );
  await eventually('the replica Serving', () => reasonOf(replicaOf(namespace, replica), 'ModelReady') === 'Serving', {
    ...ENGINE_WAIT,
    describe: () => JSON.stringify(getIn(replicaOf(namespace, replica), 'status', 'conditions')),
  });
  return pod;
}

/** The stand-in's own GET /files (a pod's IP is routed from the host). */
export async function engineFiles(pod: JsonObject): Promise<JsonObject> {
  return (await (await fetch(`http://${getString(pod, 'status', 'podIP')}:8000/files`)).json()) as JsonObject;
}

/** What the stand-in says it read: each file's path and sha256. */
export const readShas = (files: JsonObject): Record<string, string | undefined> =>
  Object.fromEntries(
    asArray(getIn(files, 'files'))
      .filter(isObject)
      .map((f) => [getString(f, 'path') ?? '', getString(f, 'sha256')]),
  );
