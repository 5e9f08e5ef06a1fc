// The local control plane of `make up`, from a test: kubectl against each of
// its API servers, the workload kubelet stand-in, and waiting for what real
// controllers do in their own time.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LABEL_NAMESPACE, REMOTE_NAMESPACE, asArray, getIn, getString, isObject, type JsonObject } from '#lib';
import { REPO_ROOT } from '../support/server.js';
import { requireTool } from '../support/tools.js';

export const STATE_DIR = process.env['MODELPLANE_UP_DIR'] ?? join(REPO_ROOT, '_output', 'up');
export const WORKLOAD_CLUSTERS = ['cluster-a', 'cluster-b', 'cluster-c'] as const;
/**
 * The serving stand-in for vLLM (images/engine/): loads the model offline as
 * vLLM does, reads every file, serves /health, /v1/models and /files on 8000.
 * Named like HYDRATION_IMAGE, under a registry the nodes' containerd mirrors
 * to the plane's; `up.sh` pushes it there for its nodes.
 * images/engine/build.sh reads this line.
 */
export const ENGINE_STANDIN_IMAGE = 'xpkg.upbound.io/modelplane/engine-standin:v0.1.0';
/**
 * With nodes, the plane's package index (pypiserver.sh, on common.sh's
 * PYPI_PORT) as the pods reach it, at the plane's address there
 * (NODE_PLANE_ADDRESS): the indexUrl of the pip path's HydrationSettings.
 */
export const PYPI_INDEX_URL = 'http://10.209.255.1:15081/simple/';
/** The plane's registry (common.sh REGISTRY_PORT) as the host pushes to it, and as the nodes' pods name it (NODE_PLANE_ADDRESS). */
export const REGISTRY = { push: '127.0.0.1:15000', pull: '10.209.255.1:15000' } as const;
/** The plane's hub as the nodes' pods reach it (common.sh HUB_ENDPOINT): the hydration Jobs' hfEndpoint. */
export const HUB_ENDPOINT = 'http://10.209.255.1:15080';
export type ApiServer = 'control-plane' | (typeof WORKLOAD_CLUSTERS)[number];

/** `make up` leaves each node's pids in its state directory; MODELPLANE_UP_NODES=0 starts no node. */
export const PLANE_HAS_NODES = WORKLOAD_CLUSTERS.every((cluster) => existsSync(join(STATE_DIR, 'nodes', cluster, 'pids')));

/** Whether a story of real pods runs on this plane (it needs its nodes), saying so when it does not. */
export function nodesPlane(file: string): boolean {
  if (!PLANE_HAS_NODES)
    console.log(`${file}: skipped: it runs real pods, and the plane in ${STATE_DIR} has no nodes (\`make e2e\` starts one with them)`);
  return PLANE_HAS_NODES;
}

/**
 * Whether a story that plays the stand-in kubelet (kubelet() below) runs on this plane, saying so when it does not:
 * on real nodes the real controllers would undo what the stand-in writes (`make e2e-standin` starts a plane without).
 */
export function standInPlane(file: string): boolean {
  if (PLANE_HAS_NODES)
    console.log(
      `${file}: skipped: it plays the stand-in kubelet, and the plane in ${STATE_DIR} has real nodes (\`make e2e-standin\` runs it)`,
    );
  return !PLANE_HAS_NODES;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], input?: string): Run {
  const result = spawnSync(command, args, { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** kubectl against one API server of the plane. */
export function kubectl(server: ApiServer, args: readonly string[], input?: string): Run {
  return run(requireTool('KUBECTL'), ['--kubeconfig', join(STATE_DIR, 'kubeconfigs', server), ...args], input);
}

/** kubectl that must succeed; its stdout. */
export function kubectlOk(server: ApiServer, args: readonly string[], input?: string): string {
  const result = kubectl(server, args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} on ${server} failed (exit ${result.code}): ${result.stderr.trim()}`);
  return result.stdout;
}

/** kubectl apply of manifests given as objects. */
export function apply(server: ApiServer, ...objects: JsonObject[]): void {
  kubectlOk(server, ['apply', '-f', '-'], objects.map((object) => JSON.stringify(object)).join('\n'));
}

/** Write an object's status subresource with a merge patch, as its controller would. */
export function patchStatus(server: ApiServer, resource: string, name: string, status: JsonObject, namespace?: string): void {
  const where = namespace === undefined ? [] : ['-n', namespace];
  kubectlOk(server, ['patch', resource, name, ...where, '--subresource', 'status', '--type', 'merge', '-p', JSON.stringify({ status })]);
}

/** Write an InferenceCluster's status, as upstream's InferenceCluster composition would. */
export function setInferenceClusterStatus(name: string, status: JsonObject): void {
  patchStatus('control-plane', 'inferencecluster', name, status);
}

/** One object, or undefined when the API server has none of that name. */
export function getObject(server: ApiServer, resource: string, name: string, namespace?: string): JsonObject | undefined {
  const result = kubectl(server, ['get', resource, name, '-o', 'json', ...(namespace ? ['-n', namespace] : [])]);
  if (result.code !== 0) {
    if (/NotFound|not found/.test(result.stderr)) return undefined;
    throw new Error(`kubectl get ${resource} ${name} on ${server}: ${result.stderr.trim()}`);
  }
  return JSON.parse(result.stdout) as JsonObject;
}

/** Every object of a resource (in a namespace, or all namespaces). */
export function list(server: ApiServer, resource: string, namespace?: string, selector?: string): JsonObject[] {
  const args = ['get', resource, '-o', 'json', ...(namespace ? ['-n', namespace] : ['-A']), ...(selector ? ['-l', selector] : [])];
  const parsed = JSON.parse(kubectlOk(server, args)) as { items?: unknown[] };
  return (parsed.items ?? []).filter(isObject);
}

/**
 * Is `object` owned by the Job named `job` on the cluster (an owner reference with that Job's uid)?
 * What a finished Job leaves (its access, the token Secret) is handed to it and goes with it (release.ts).
 */
export function ownedByJob(object: JsonObject | undefined, job: JsonObject | undefined): boolean {
  const uid = getString(job, 'metadata', 'uid');
  if (uid === undefined || getString(job, 'kind') !== 'Job') return false;
  return asArray(getIn(object, 'metadata', 'ownerReferences')).some(
    (reference) => isObject(reference) && reference['kind'] === 'Job' && reference['uid'] === uid,
  );
}

/**
 * The token has left the cluster: its Secret is gone, or handed to the finished Job without its data
 * (release.ts), to go with the Job.
 */
export function tokenLeft(server: ApiServer, name: string, namespace: string): boolean {
  const secret = getObject(server, 'secret', name, namespace);
  if (secret === undefined) return true;
  const fields = ['data', 'stringData'].map((field) => getIn(secret, field)).filter(isObject);
  const data = Object.assign({}, ...fields) as JsonObject;
  const owner = asArray(getIn(secret, 'metadata', 'ownerReferences')).find((r) => isObject(r) && r['kind'] === 'Job');
  const jobName = getString(owner, 'name');
  const job = jobName === undefined ? undefined : getObject(server, 'job', jobName, namespace);
  return Object.keys(data).length === 0 && ownedByJob(secret, job);
}

/**
 * The kinds of a Job's report access (its ServiceAccount, Role and RoleBinding, all named as the Job), each
 * not yet owned by the Job `job` in `namespace` on the cluster: empty once the access is handed to it (release.ts).
 */
export function accessNotOwnedByJob(server: ApiServer, job: string, namespace: string): string[] {
  const owner = getObject(server, 'job', job, namespace);
  return ['serviceaccount', 'role', 'rolebinding'].filter((kind) => !ownedByJob(getObject(server, kind, job, namespace), owner));
}

export function names(objects: readonly JsonObject[]): string[] {
  return objects.map((object) => getString(object, 'metadata', 'name') ?? '').sort();
}

/**
 * The label selector of what the functions compose on a workload cluster for the XRs of one namespace (a story's):
 * what it may count or delete there while other stories play beside it (docs/nodes.md, "Two lanes").
 */
export const ofStory = (namespace: string): string => `${LABEL_NAMESPACE}=${namespace}`;

/** The workload kubelet stand-in (test/e2e/workload-kubelet.sh), on one workload cluster. */
export function kubelet(cluster: (typeof WORKLOAD_CLUSTERS)[number], ...args: string[]): string {
  const result = run('bash', [join(REPO_ROOT, 'test', 'e2e', 'workload-kubelet.sh'), cluster, ...args]);
  if (result.code !== 0) throw new Error(`workload-kubelet ${cluster} ${args.join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

/**
 * Wait until `probe` returns (or resolves to) something other than undefined (or false), and
 * return it. On timeout, fail with what was waited for and the last thing the
 * probe saw, so a failure reads as a sentence.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | PromiseLike<T | undefined | false>,
  options: { timeoutMs?: number; describe?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const seen = options.describe ? `\nlast seen: ${options.describe()}` : '';
      const error = lastError instanceof Error ? `\nlast error: ${lastError.message}` : '';
      throw new Error(`timed out waiting for ${what}${seen}${error}`);
    }
    await sleep(1000);
  }
}

/** A condition of an object, by type. */
export function condition(object: JsonObject | undefined, type: string): JsonObject | undefined {
  const status = object?.['status'];
  const conditions = isObject(status) && Array.isArray(status['conditions']) ? status['conditions'] : [];
  return conditions.filter(isObject).find((c) => c['type'] === type);
}

/** Whether an object's condition of this type is True (a pod Ready, a Job Complete, a workload Available). */
export const conditionTrue = (object: JsonObject | undefined, type: string): boolean =>
  getString(condition(object, type) ?? {}, 'status') === 'True';

/** A condition's reason, and its message. */
export const reasonOf = (object: JsonObject | undefined, type: string): string | undefined =>
  getString(condition(object, type) ?? {}, 'reason');
export const messageOf = (object: JsonObject | undefined, type: string): string | undefined =>
  getString(condition(object, type) ?? {}, 'message');

/**
 * Whether an XR's status says a state: its phase (when given) and each named condition's reason. Crossplane writes
 * an XR's status in two writes each reconcile, the status the function returned (phase, message, clusters), then
 * the conditions once the reconcile ends (docs/troubleshooting.md), so a read between them sees the new phase
 * beside the old reasons: a state is read only once both writes say it.
 */
export const statusSays = (object: JsonObject | undefined, state: { phase?: string; reasons: Record<string, string> }): boolean =>
  (state.phase === undefined || getIn(object, 'status', 'phase') === state.phase) &&
  Object.entries(state.reasons).every(([type, reason]) => reasonOf(object, type) === reason);

/** One cluster's entry of a ModelCache's (or a shard's) status.clusters[]. */
export const clusterEntry = (cache: JsonObject | undefined, cluster: string): JsonObject | undefined =>
  asArray(getIn(cache, 'status', 'clusters'))
    .filter(isObject)
    .find((entry) => entry['name'] === cluster);

/** The engine Deployments a replica composed on a workload cluster (not its endpoint picker's). */
export function engineDeployments(cluster: ApiServer, replica: string): JsonObject[] {
  return list(cluster, 'deployments', REMOTE_NAMESPACE).filter(
    (d) =>
      (getString(d, 'metadata', 'name') ?? '').startsWith(`${replica}-`) &&
      asArray(getIn(d, 'spec', 'template', 'spec', 'containers')).some((c) => isObject(c) && c['name'] === 'engine'),
  );
}

/** The object once Crossplane has reported both Synced and Ready on it (whatever their status), else undefined. */
export function settled(object: JsonObject | undefined): JsonObject | undefined {
  return condition(object, 'Synced') && condition(object, 'Ready') ? object : undefined;
}

/** Only the named top-level fields of an object (those it has). */
export function pick(object: unknown, ...fields: string[]): JsonObject {
  const out: JsonObject = {};
  for (const field of fields) {
    const value = getIn(object, field);
    if (value !== undefined) out[field] = value as JsonObject;
  }
  return out;
}

/** What a Standalone replica's one member runs and asks for (the defaults: vLLM on an NVIDIA GPU in the a100 pool). */
export interface StandaloneMember {
  image?: string;
  args?: string[];
  nodePoolName?: string;
  deviceClassName?: string;
}

/** A ModelReplica of one engine `main` (one copy) of these members, from a cache, on one cluster; `spec` adds fields (serving). */
export function replicaManifest(
  namespace: string,
  name: string,
  cluster: string,
  cache: string,
  members: JsonObject[],
  spec: JsonObject = {},
): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: { name, namespace, labels: { 'modelplane.ai/deployment': name, 'modelplane.ai/cluster': cluster } },
    spec: { clusterName: cluster, modelCacheRef: { name: cache }, ...spec, engines: [{ name: 'main', copies: 1, members }] },
  };
}

/** A member's pod: one container `engine` of this image and args (and env, when given). */
export const engineTemplate = (image: string, args: string[], env: JsonObject[] = []): JsonObject => ({
  spec: { containers: [{ name: 'engine', image, args, ...(env.length > 0 ? { env } : {}) }] },
});

/** The node pool standaloneReplica's engine names unless told otherwise (its nodePoolName). */
export const DEFAULT_POOL = 'a100';

/** A ModelReplica serving one Standalone vLLM engine on one GPU, from a cache, on one cluster. */
export function standaloneReplica(
  namespace: string,
  name: string,
  cluster: string,
  cache: string,
  member: StandaloneMember = {},
): JsonObject {
  const standalone = {
    role: 'Standalone',
    nodePoolName: member.nodePoolName ?? DEFAULT_POOL,
    deviceRequests: [{ name: 'gpu', deviceClassName: member.deviceClassName ?? 'gpu.nvidia.com', count: 1 }],
    template: engineTemplate(member.image ?? 'vllm/vllm-openai:v0.11.0', member.args ?? ['--model=$(MODELPLANE_MODEL)']),
  };
  return replicaManifest(namespace, name, cluster, cache, [standalone], { serving: { mode: 'Unified' } });
}

/** The token the e2e stories stage gated models with: not a real one, and never to be found in a capture. */
export const E2E_HF_TOKEN = 'hf_e2e_not_a_real_token';

/** An InferenceCluster as a platform team labels it (its status comes from setInferenceClusterStatus). */
export function inferenceCluster(name: string, labels: Record<string, string>, spec: JsonObject = {}): JsonObject {
  return { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', metadata: { name, labels }, spec };
}

/** The Secret `hf-token` holding E2E_HF_TOKEN under HF_TOKEN, in a namespace. */
export function hfTokenSecret(namespace: string): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace }, stringData: { HF_TOKEN: E2E_HF_TOKEN } };
}

/** A ModelCache of a source (`source` and its field, as the spec has them) on the clusters a label selector matches. */
export function modelCache(namespace: string, name: string, source: JsonObject, matchLabels: Record<string, string>): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCache',
    metadata: { name, namespace },
    spec: { ...source, clusterSelector: { matchLabels } },
  };
}

/** A gated HuggingFace ModelCache of Qwen3-0.6B (20 GiB, the token in `hf-token`) on the clusters a label selects. */
export const huggingFaceCache = (namespace: string, name: string, matchLabels: Record<string, string>): JsonObject =>
  modelCache(
    namespace,
    name,
    {
      source: 'HuggingFace',
      huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main', sizeGiB: 20, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } },
    },
    matchLabels,
  );
