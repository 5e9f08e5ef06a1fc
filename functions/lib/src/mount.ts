// The mount contract: what a pod adds to read the model on one cluster. The
// hydration function publishes it (only when the cluster is Ready), the cache
// copies it per cluster, and the replica copies it into every engine pod.
//
// Whoever can write a cache's status puts these volumes into every engine pod
// on every cluster, so the contract is a narrow subset of the corev1 types and
// validateMount is a security boundary: widen it only on purpose.

import type {
  V1CSIVolumeSource,
  V1EnvVar,
  V1ImageVolumeSource,
  V1LocalObjectReference,
  V1PersistentVolumeClaimVolumeSource,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import {
  CACHE_MOUNT_PATH,
  CACHE_VOLUME,
  HF_DEFAULT_REVISION,
  HF_HUB_CACHE_ENV,
  HF_HUB_OFFLINE_ENV,
  HF_HUB_OFFLINE_VALUE,
  MODEL_ENV,
  MODEL_REVISION_ENV,
  MODELPACK_CSI_DRIVER,
  MODELPACK_CSI_REFERENCE_ATTRIBUTE,
  RESERVED_VOLUME_NAMES,
  WORKLOAD_NAMESPACE_ENV,
} from './constants.js';
import { DNS_LABEL, DNS_SUBDOMAIN } from './input.js';
import { isObject, type JsonObject } from './json.js';

export interface CacheVolume extends V1Volume {
  name: string;
  persistentVolumeClaim?: Pick<V1PersistentVolumeClaimVolumeSource, 'claimName' | 'readOnly'>;
  image?: Required<Pick<V1ImageVolumeSource, 'reference'>> & Pick<V1ImageVolumeSource, 'pullPolicy'>;
  csi?: Pick<V1CSIVolumeSource, 'driver' | 'readOnly' | 'volumeAttributes'>;
}
export type CacheVolumeMount = Pick<V1VolumeMount, 'name' | 'mountPath' | 'subPath' | 'readOnly'>;
export interface CacheEnvVar extends V1EnvVar {
  value: string;
}
export type CachePullSecret = Required<Pick<V1LocalObjectReference, 'name'>>;

export interface CacheMount {
  volumes: CacheVolume[];
  volumeMounts: CacheVolumeMount[];
  env: CacheEnvVar[];
  imagePullSecrets?: CachePullSecret[];
}

// Bounds from the published schema: a contract is a handful of entries.
const MAX_VOLUMES = 4;
const MAX_MOUNTS = 4;
const MAX_ENV = 8;
const MAX_PULL_SECRETS = 8;
/** Only this CSI driver is admitted: another driver could mount secrets or host state into engine pods. */
const ALLOWED_CSI_DRIVERS: readonly string[] = [MODELPACK_CSI_DRIVER];
const PULL_POLICIES: readonly string[] = ['Always', 'IfNotPresent', 'Never'];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Where a contract may mount: the cache path or below it, so it can't shadow the image's own files. */
const MOUNT_ROOT = CACHE_MOUNT_PATH;

/** What is wrong with an env value, or undefined when it is allowed. */
type EnvValueRule = (value: string) => string | undefined;
/**
 * The only variables a contract may set, each with the rule its value must
 * meet (undefined: any string). The env lands in every engine pod, so a
 * variable that changes what a process loads (LD_PRELOAD, PYTHONPATH,
 * LD_LIBRARY_PATH, ...) pointed into a cache volume would run whatever the
 * volume holds: only the variables this project publishes pass.
 */
const CONTRACT_ENV: ReadonlyMap<string, EnvValueRule | undefined> = new Map<string, EnvValueRule | undefined>([
  [MODEL_ENV, undefined],
  [MODEL_REVISION_ENV, undefined],
  [HF_HUB_CACHE_ENV, (value: string) => (isUnder(value, MOUNT_ROOT) ? undefined : `must be ${MOUNT_ROOT} or a path below it`)],
  // A contract may only keep engines off the hub, never send them there.
  [HF_HUB_OFFLINE_ENV, (value: string) => (value === HF_HUB_OFFLINE_VALUE ? undefined : `must be "${HF_HUB_OFFLINE_VALUE}"`)],
  // Where the cache lives on the cluster: read by the replica to place engine pods, inert in the pod.
  [
    WORKLOAD_NAMESPACE_ENV,
    (value: string) => (value.length <= 63 && DNS_LABEL.test(value) ? undefined : 'must be a namespace name (a DNS label)'),
  ],
]);

export type MountValidation = { ok: true; mount: CacheMount } | { ok: false; problems: string[] };

/**
 * Check a contract against the allowed subset and return it typed. Anything
 * outside the subset (a hostPath or secret volume, valueFrom, a reserved
 * volume name, a mount of an undeclared volume, a variable this project does
 * not publish, an unknown field) is refused with every problem named.
 */
export function validateMount(value: unknown): MountValidation {
  const problems: string[] = [];
  if (!isObject(value)) return { ok: false, problems: ['mount must be an object'] };
  unknownKeys(value, ['volumes', 'volumeMounts', 'env', 'imagePullSecrets'], 'mount', problems);

  const volumes = list(value['volumes'], 'mount.volumes', 1, MAX_VOLUMES, problems);
  const volumeNames = new Set<string>();
  volumes.forEach((volume, i) => {
    checkVolume(volume, `mount.volumes[${i}]`, volumeNames, problems);
  });

  const mounts = list(value['volumeMounts'], 'mount.volumeMounts', 1, MAX_MOUNTS, problems);
  const mountPaths = new Set<string>();
  mounts.forEach((mount, i) => {
    checkVolumeMount(mount, `mount.volumeMounts[${i}]`, volumeNames, mountPaths, problems);
  });

  const env = list(value['env'], 'mount.env', 1, MAX_ENV, problems);
  const envNames = new Set<string>();
  env.forEach((entry, i) => {
    checkEnv(entry, `mount.env[${i}]`, envNames, problems);
  });
  if (env.length > 0 && !envNames.has(MODEL_ENV)) problems.push(`mount.env must set ${MODEL_ENV}`);

  if (value['imagePullSecrets'] !== undefined) {
    const secrets = list(value['imagePullSecrets'], 'mount.imagePullSecrets', 0, MAX_PULL_SECRETS, problems);
    secrets.forEach((secret, i) => {
      const field = `mount.imagePullSecrets[${i}]`;
      if (!isObject(secret)) {
        problems.push(`${field} must be an object`);
        return;
      }
      unknownKeys(secret, ['name'], field, problems);
      if (!isName(secret['name'], DNS_SUBDOMAIN, 253)) problems.push(`${field}.name must be a Secret name`);
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, mount: value as unknown as CacheMount };
}

function checkVolume(volume: unknown, field: string, names: Set<string>, problems: string[]): void {
  if (!isObject(volume)) {
    problems.push(`${field} must be an object`);
    return;
  }
  unknownKeys(volume, ['name', 'persistentVolumeClaim', 'image', 'csi'], field, problems);
  const name = volume['name'];
  if (!isName(name, DNS_LABEL, 63)) problems.push(`${field}.name must be a DNS label`);
  else if (RESERVED_VOLUME_NAMES.includes(name)) problems.push(`${field}.name "${name}" is reserved for the engine pod`);
  else if (names.has(name)) problems.push(`${field}.name "${name}" is declared twice`);
  else names.add(name);

  const sources = (['persistentVolumeClaim', 'image', 'csi'] as const).filter((s) => volume[s] !== undefined);
  if (sources.length !== 1) {
    problems.push(`${field} must have exactly one of persistentVolumeClaim, image or csi (got ${sources.length})`);
    return;
  }
  const source = sources[0]!;
  const body = volume[source];
  const at = `${field}.${source}`;
  if (!isObject(body)) {
    problems.push(`${at} must be an object`);
    return;
  }
  if (source === 'persistentVolumeClaim') {
    unknownKeys(body, ['claimName', 'readOnly'], at, problems);
    if (!isName(body['claimName'], DNS_SUBDOMAIN, 253)) problems.push(`${at}.claimName must be a claim name`);
    optionalBoolean(body['readOnly'], `${at}.readOnly`, problems);
  } else if (source === 'image') {
    unknownKeys(body, ['reference', 'pullPolicy'], at, problems);
    if (typeof body['reference'] !== 'string' || body['reference'] === '') problems.push(`${at}.reference must be a non-empty string`);
    const pullPolicy = body['pullPolicy'];
    if (pullPolicy !== undefined && (typeof pullPolicy !== 'string' || !PULL_POLICIES.includes(pullPolicy))) {
      problems.push(`${at}.pullPolicy must be one of ${PULL_POLICIES.join(', ')}`);
    }
  } else {
    unknownKeys(body, ['driver', 'readOnly', 'volumeAttributes'], at, problems);
    if (typeof body['driver'] !== 'string' || !ALLOWED_CSI_DRIVERS.includes(body['driver'])) {
      problems.push(`${at}.driver must be ${ALLOWED_CSI_DRIVERS.join(' or ')}`);
    }
    optionalBoolean(body['readOnly'], `${at}.readOnly`, problems);
    const attributes = body['volumeAttributes'];
    if (attributes !== undefined && (!isObject(attributes) || Object.values(attributes).some((v) => typeof v !== 'string'))) {
      problems.push(`${at}.volumeAttributes must map strings to strings`);
    }
  }
}

function checkVolumeMount(mount: unknown, field: string, volumes: Set<string>, paths: Set<string>, problems: string[]): void {
  if (!isObject(mount)) {
    problems.push(`${field} must be an object`);
    return;
  }
  unknownKeys(mount, ['name', 'mountPath', 'subPath', 'readOnly'], field, problems);
  const name = mount['name'];
  if (typeof name !== 'string' || !volumes.has(name)) problems.push(`${field}.name must name a volume in mount.volumes`);
  const path = mount['mountPath'];
  if (typeof path !== 'string' || !isUnder(path, MOUNT_ROOT)) {
    problems.push(`${field}.mountPath must be ${MOUNT_ROOT} or a path below it`);
  } else if (paths.has(path)) {
    problems.push(`${field}.mountPath ${path} is mounted twice`);
  } else {
    paths.add(path);
  }
  const subPath = mount['subPath'];
  if (subPath !== undefined && !isRelativePath(subPath)) problems.push(`${field}.subPath must be a relative path without ".."`);
  optionalBoolean(mount['readOnly'], `${field}.readOnly`, problems);
}

function checkEnv(entry: unknown, field: string, names: Set<string>, problems: string[]): void {
  if (!isObject(entry)) {
    problems.push(`${field} must be an object`);
    return;
  }
  unknownKeys(entry, ['name', 'value'], field, problems);
  const name = entry['name'];
  const value = entry['value'];
  if (typeof value !== 'string') problems.push(`${field}.value must be a string`);
  if (typeof name !== 'string' || !ENV_NAME.test(name)) {
    problems.push(`${field}.name must be an environment variable name`);
    return;
  }
  if (!CONTRACT_ENV.has(name)) {
    problems.push(`${field}.name ${name} is not a variable a cache mount may set (only ${[...CONTRACT_ENV.keys()].join(', ')})`);
    return;
  }
  if (names.has(name)) problems.push(`${field}.name ${name} is set twice`);
  else names.add(name);
  const problem = typeof value === 'string' ? CONTRACT_ENV.get(name)?.(value) : undefined;
  if (problem !== undefined) problems.push(`${field}.value of ${name} ${problem}`);
}

function list(value: unknown, field: string, min: number, max: number, problems: string[]): unknown[] {
  if (!Array.isArray(value)) {
    problems.push(`${field} must be a list`);
    return [];
  }
  if (value.length < min || value.length > max) problems.push(`${field} must have ${min} to ${max} entries (got ${value.length})`);
  return value.slice(0, max);
}

function unknownKeys(value: JsonObject, allowed: readonly string[], field: string, problems: string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) problems.push(`${field}.${key} is not allowed in a cache mount`);
  }
}

function optionalBoolean(value: unknown, field: string, problems: string[]): void {
  if (value !== undefined && typeof value !== 'boolean') problems.push(`${field} must be true or false`);
}

function isName(value: unknown, pattern: RegExp, maxLength: number): value is string {
  return typeof value === 'string' && value.length <= maxLength && pattern.test(value);
}

function isUnder(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(`${root}/`) && isRelativePath(path.slice(root.length + 1));
}

function isRelativePath(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || value.startsWith('/')) return false;
  return value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Is any volume mounted read-only? Such pods need a writable HOME. */
export function isReadOnly(mount: CacheMount): boolean {
  return mount.volumeMounts.some((m) => m.readOnly === true);
}

// --- Builders, one per source ------------------------------------------------

/**
 * Where the model sits in the pod, and how the volume is mounted there. With a
 * subPath only that directory of the artifact or claim is mounted, at
 * /mnt/models/<subPath>, so MODELPLANE_MODEL and the mount always agree.
 */
export function modelDirectory(subPath?: string): string {
  return subPath ? `${CACHE_MOUNT_PATH}/${subPath}` : CACHE_MOUNT_PATH;
}

function readOnlyMount(subPath?: string): CacheVolumeMount {
  const mount: CacheVolumeMount = { name: CACHE_VOLUME, mountPath: modelDirectory(subPath), readOnly: true };
  if (subPath) mount.subPath = subPath;
  return mount;
}

/**
 * HuggingFace: the staged PVC, read-write because huggingface_hub writes lock
 * files under its cache root, with HF_HUB_CACHE pointing there so
 * `--model=$(MODELPLANE_MODEL)` (the repo id) reads the staged snapshot, and
 * `--revision=$(MODELPLANE_MODEL_REVISION)` exactly the revision staged.
 * HF_HUB_OFFLINE keeps the engine off the hub: it never downloads into the
 * shared claim at serve time. `revision` is what was staged: the resolved
 * commit when known, else the requested revision, else the hub's default.
 */
export function huggingFaceMount(options: { claimName: string; repo: string; revision?: string }): CacheMount {
  return {
    volumes: [{ name: CACHE_VOLUME, persistentVolumeClaim: { claimName: options.claimName } }],
    volumeMounts: [{ name: CACHE_VOLUME, mountPath: CACHE_MOUNT_PATH }],
    env: [
      { name: HF_HUB_CACHE_ENV, value: CACHE_MOUNT_PATH },
      { name: HF_HUB_OFFLINE_ENV, value: HF_HUB_OFFLINE_VALUE },
      { name: MODEL_ENV, value: options.repo },
      { name: MODEL_REVISION_ENV, value: options.revision ?? HF_DEFAULT_REVISION },
    ],
  };
}

/**
 * OCI container image: an image volume pinned to the resolved digest, so a
 * moved tag never changes what a new pod serves (and IfNotPresent is then
 * always right). Pull secrets go with it: the kubelet pulls the image.
 */
export function ociImageMount(options: { reference: string; subPath?: string; imagePullSecrets?: readonly string[] }): CacheMount {
  const mount: CacheMount = {
    volumes: [{ name: CACHE_VOLUME, image: { reference: options.reference, pullPolicy: 'IfNotPresent' } }],
    volumeMounts: [readOnlyMount(options.subPath)],
    env: [{ name: MODEL_ENV, value: modelDirectory(options.subPath) }],
  };
  if (options.imagePullSecrets && options.imagePullSecrets.length > 0) {
    mount.imagePullSecrets = options.imagePullSecrets.map((name) => ({ name }));
  }
  return mount;
}

/**
 * OCI ModelPack model artifact: mounted by the ModelPack CSI driver, pinned to
 * the digest. No pull secrets: the driver authenticates with its own config.
 */
export function ociModelArtifactMount(options: { reference: string; subPath?: string }): CacheMount {
  return {
    volumes: [
      {
        name: CACHE_VOLUME,
        csi: { driver: MODELPACK_CSI_DRIVER, readOnly: true, volumeAttributes: { [MODELPACK_CSI_REFERENCE_ATTRIBUTE]: options.reference } },
      },
    ],
    volumeMounts: [readOnlyMount(options.subPath)],
    env: [{ name: MODEL_ENV, value: modelDirectory(options.subPath) }],
  };
}

/** A claim the user filled: mounted read-only, Modelplane never writes it. */
export function claimMount(options: { claimName: string; subPath?: string }): CacheMount {
  return {
    volumes: [{ name: CACHE_VOLUME, persistentVolumeClaim: { claimName: options.claimName, readOnly: true } }],
    volumeMounts: [readOnlyMount(options.subPath)],
    env: [{ name: MODEL_ENV, value: modelDirectory(options.subPath) }],
  };
}
