// Engine pods: what every pod of every member gets (placement, /dev/shm, the
// cache contract), and the engine container built from the user's, whose
// image, command and args pass through unchanged.

import type {
  V1Container,
  V1EnvVar,
  V1LocalObjectReference,
  V1ObjectMeta,
  V1PodSpec,
  V1Probe,
  V1SecurityContext,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { HOME_MOUNT_PATH, HOME_SIZE_LIMIT, HOME_VOLUME, SHM_VOLUME, isReadOnly, type CacheMount } from '#lib';
import type { PhaseShaping } from './disaggregated.js';
import { LABEL_POOL, POD_CLAIM, claimTemplateName } from './names.js';
import type { Engine, EnvVar, Member, Replica } from './spec.js';

/** The engine serves its OpenAI-compatible API here; the InferencePool targets it. */
export const ENGINE_PORT = 8000;
export const ENGINE_CONTAINER = 'engine';

/**
 * GPU node groups carry this taint. DRA pods make no nvidia.com/gpu resource
 * request, so nothing adds the toleration for them. Only nvidia, on every
 * stack: upstream's two newer revisions disagree (one backend revision adds
 * amd.com/gpu too, the newest test goldens expect nvidia only); we follow the
 * newest, the goldens.
 */
const GPU_TOLERATION: V1Toleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

/** Tensor parallelism needs far more shared memory than a container's default 64Mi. */
const SHM_MOUNT_PATH = '/dev/shm';

/** The HOME env a read-only cache gets, unless the user sets HOME. */
const HOME_ENV = 'HOME';

/**
 * Engines can take a while to load weights, and some answer /health slowly
 * (SGLang sits near 1 s), so the probe waits 30 s and allows 5 s an answer
 * (upstream's values; Kubernetes' 1 s default flaps).
 */
export function readinessProbe(port: number): V1Probe {
  return { httpGet: { path: '/health', port }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5 };
}

/**
 * What the cache's contract adds to every engine pod, checked (validateMount)
 * before it gets here. A read-only contract also brings the writable HOME
 * scratch volume: engines write their own caches under $HOME.
 */
export interface CacheShaping {
  volumes: V1Volume[];
  volumeMounts: V1VolumeMount[];
  env: V1EnvVar[];
  imagePullSecrets: string[];
  /** The contract mounts read-only: the engine gets HOME on the scratch volume. */
  writableHome: boolean;
}

export function cacheShaping(mount: CacheMount): CacheShaping {
  const shaping: CacheShaping = {
    volumes: mount.volumes.map((v) => structuredClone(v)),
    volumeMounts: mount.volumeMounts.map((m) => structuredClone(m)),
    env: mount.env.map((e) => ({ name: e.name, value: e.value })),
    imagePullSecrets: (mount.imagePullSecrets ?? []).map((s) => s.name),
    writableHome: isReadOnly(mount),
  };
  if (shaping.writableHome) {
    shaping.volumes.push({ name: HOME_VOLUME, emptyDir: { sizeLimit: HOME_SIZE_LIMIT } });
    shaping.volumeMounts.push({ name: HOME_VOLUME, mountPath: HOME_MOUNT_PATH });
  }
  return shaping;
}

/**
 * The engine container's env: the cache contract's, then what Modelplane
 * injects (the gang aliases, the ModelExpress bundle on Dynamo, the NIXL side
 * channel for PrefillDecode, then HOME for a read-only cache), then the
 * user's, so `$(VAR)` in a user value can refer to any of ours (Kubernetes
 * expands left to right). Where the user sets a name we also set, the user's
 * value wins and ours is dropped, so the pod carries each name once; the
 * user's own entries are passed through exactly as written.
 *
 * Among ours, a later entry replaces an earlier one, so what Modelplane
 * injects wins over the contract. That matters for ModelExpress: its server
 * address and source identity decide which peers an engine pulls weights
 * from, and whoever writes a cache's status must not be able to point every
 * engine at another server. (The contract can't set those names today:
 * validateMount admits only the cache's own variables; this order keeps it
 * so if that list ever grows.)
 */
export function engineEnv(cache: CacheShaping | undefined, injected: readonly V1EnvVar[], user: readonly EnvVar[]): V1EnvVar[] {
  const home: V1EnvVar[] = cache?.writableHome ? [{ name: HOME_ENV, value: HOME_MOUNT_PATH }] : [];
  const ours = [...(cache?.env ?? []), ...injected, ...home].map((e) => structuredClone(e));
  const userNames = new Set(user.map((e) => e.name));
  const lastOfOurs = new Map<string, number>();
  ours.forEach((e, i) => lastOfOurs.set(e.name, i));
  const kept = ours.filter((e, i) => !userNames.has(e.name) && lastOfOurs.get(e.name) === i);
  return [...kept, ...user.map(userEnv)];
}

function userEnv(env: EnvVar): V1EnvVar {
  const out: V1EnvVar = { name: env.name };
  if (env.value !== undefined) out.value = env.value;
  if (env.valueFrom !== undefined) out.valueFrom = structuredClone(env.valueFrom);
  return out;
}

/** `dshm` first (the engine mounts it first), then the contract's volumes. */
export function podVolumes(cache: CacheShaping | undefined): V1Volume[] {
  return [{ name: SHM_VOLUME, emptyDir: { medium: 'Memory' } }, ...(cache?.volumes.map((v) => structuredClone(v)) ?? [])];
}

/** `/dev/shm` first, then the contract's mounts. */
export function engineMounts(cache: CacheShaping | undefined): V1VolumeMount[] {
  return [{ name: SHM_VOLUME, mountPath: SHM_MOUNT_PATH }, ...(cache?.volumeMounts.map((m) => structuredClone(m)) ?? [])];
}

/** The user's pull secrets, then the contract's, each name once. */
export function pullSecrets(member: Member, cache: CacheShaping | undefined): V1LocalObjectReference[] {
  const names = new Set([...member.imagePullSecrets, ...(cache?.imagePullSecrets ?? [])]);
  return [...names].map((name) => ({ name }));
}

/** The engine container reads the whole pod claim (resources.claims is keyed by name alone). */
export function claimResources(member: Member): Pick<V1Container, 'resources'> {
  return member.deviceRequests ? { resources: { claims: [{ name: POD_CLAIM }] } } : {};
}

/**
 * Pin a member's pods to the pool the scheduler chose, claim its devices
 * through its DRA template (a claimless member gets no claim), and tolerate
 * the GPU taint (a claimless member still rides on a GPU pool).
 */
export function placement(
  replica: Replica,
  engine: Engine,
  member: Member,
): Pick<V1PodSpec, 'nodeSelector' | 'resourceClaims' | 'tolerations'> {
  const placed: Pick<V1PodSpec, 'nodeSelector' | 'resourceClaims' | 'tolerations'> = {
    nodeSelector: { [LABEL_POOL]: member.nodePoolName },
  };
  if (member.deviceRequests) {
    placed.resourceClaims = [{ name: POD_CLAIM, resourceClaimTemplateName: claimTemplateName(replica, engine, member) }];
  }
  placed.tolerations = [structuredClone(GPU_TOLERATION)];
  return placed;
}

/** The pod's labels (the member's, then the managed ones, which win) and annotations; undefined when both are empty. */
export function podMetadata(member: Member, managed: Record<string, string> = {}): V1ObjectMeta | undefined {
  const labels = { ...member.labels, ...managed };
  const metadata: V1ObjectMeta = {};
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (Object.keys(member.annotations).length > 0) metadata.annotations = { ...member.annotations };
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

/** The user's command, only when it says something (an empty command would override the image's entrypoint). */
export function userCommand(member: Member): Pick<V1Container, 'command'> {
  const command = member.container.command;
  return command && command.length > 0 ? { command: [...command] } : {};
}

/**
 * A member's pod: its engine container, then a PrefillDecode phase's
 * sidecars; /dev/shm and the cache's volumes, then the phase's; the member's
 * placement and pull secrets. `schedulerName` only where a stack needs its own.
 */
export function memberPodSpec(
  replica: Replica,
  engine: Engine,
  member: Member,
  cache: CacheShaping | undefined,
  container: V1Container,
  phase: PhaseShaping | undefined,
  schedulerName?: string,
): V1PodSpec {
  const secrets = pullSecrets(member, cache);
  return {
    containers: [container, ...(phase?.sidecars.map((c) => structuredClone(c)) ?? [])],
    volumes: [...podVolumes(cache), ...(phase?.volumes.map((v) => structuredClone(v)) ?? [])],
    ...(schedulerName ? { schedulerName } : {}),
    ...placement(replica, engine, member),
    ...(secrets.length > 0 ? { imagePullSecrets: secrets } : {}),
  };
}

/**
 * A gang member's engine container (LeaderWorkerSet or Grove): the user's
 * image, command and args (args omitted when empty, as upstream's gang
 * shapes have it, never changed), the gang's `injected` env before a phase's,
 * and the port and probe only on the pod that serves. `serving`: false for a
 * worker, true for a leader, its phase shaping for a PrefillDecode leader.
 */
export function gangContainer(
  member: Member,
  cache: CacheShaping | undefined,
  serving: boolean | PhaseShaping,
  injected: readonly V1EnvVar[],
  securityContext?: V1SecurityContext,
): V1Container {
  const args = member.container.args ?? [];
  const phase = typeof serving === 'object' ? serving : undefined;
  const container: V1Container = {
    name: ENGINE_CONTAINER,
    image: member.container.image,
    volumeMounts: engineMounts(cache),
    ...claimResources(member),
    ...userCommand(member),
    ...(args.length > 0 ? { args: [...args] } : {}),
    env: engineEnv(cache, [...injected, ...(phase?.env ?? [])], member.container.env),
  };
  if (securityContext) container.securityContext = structuredClone(securityContext);
  if (serving !== false) {
    const port = phase?.enginePort ?? ENGINE_PORT;
    container.ports = [{ containerPort: port }];
    container.readinessProbe = readinessProbe(port);
  }
  return container;
}
