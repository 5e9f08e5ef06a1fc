// The cluster's serving stack (InferenceCluster spec.stack): Standard runs a
// Leader/Worker gang as a LeaderWorkerSet; Dynamo runs it as a Grove
// PodCliqueSet, and gives cached engines the ModelExpress bundle, so a new
// pod can pull weights from a running peer over RDMA instead of reading them
// all from the volume.

import type { V1EnvVar, V1SecurityContext } from '@kubernetes/client-node';
import { InputError, cacheNames, type InferenceCluster } from '#lib';
import type { Replica } from './spec.js';

export const STACKS = ['Standard', 'Dynamo'] as const;
export type Stack = (typeof STACKS)[number];
/** What a cluster that names no stack runs (upstream's default). */
export const DEFAULT_STACK: Stack = 'Standard';

/** The cluster's stack; one this function doesn't know is a Fatal result naming it, never a guess. */
export function stackOf(cluster: InferenceCluster): Stack {
  const stack = cluster.stack ?? DEFAULT_STACK;
  const known = STACKS.find((s) => s === stack);
  if (known === undefined) {
    throw new InputError(
      `InferenceCluster ${cluster.name} spec.stack`,
      `is ${stack}: compose-model-replica serves on the ${STACKS.join(' or ')} stack; correct the cluster's spec.stack`,
    );
  }
  return known;
}

/**
 * The ModelExpress server every Dynamo cluster runs, one per cluster, in
 * `default` (the serving stack installs it there, whatever namespace the
 * engines run in). Upstream's two newer revisions disagree: one addresses it
 * as `modelexpress-server:8001`, the newest as
 * `modelexpress-server.default.svc:8001`. We follow the newest: the qualified
 * name reaches the server from any namespace, so it keeps working when the
 * workload namespace becomes per team.
 */
const MODELEXPRESS_SERVER = 'modelexpress-server';
const MODELEXPRESS_NAMESPACE = 'default';
const MODELEXPRESS_PORT = 8001;
export const MODELEXPRESS_ADDRESS = `${MODELEXPRESS_SERVER}.${MODELEXPRESS_NAMESPACE}.svc:${MODELEXPRESS_PORT}`;

/** The names the bundle sets, in its order. */
export const MODELEXPRESS_ENV_NAMES = [
  'MX_SERVER_ADDRESS',
  'MODEL_EXPRESS_URL',
  'MX_MODEL_REVISION',
  'MX_P2P_METADATA',
  'POD_NAME',
  'POD_UID',
  'POD_NAMESPACE',
] as const;

/** ModelExpress applies where the Dynamo stack runs its server, to a replica that reads a cache (weights to seed peers from). */
export function usesModelExpress(stack: Stack, replica: Replica): boolean {
  return stack === 'Dynamo' && replica.spec.modelCacheRef !== undefined;
}

/**
 * The ModelExpress env, upstream's bundle in upstream's order. Every variable
 * is read only by ModelExpress's client, so an engine that doesn't load
 * through it is unaffected. MODEL_EXPRESS_URL is the deprecated spelling of
 * MX_SERVER_ADDRESS, still read (and preferred) by older clients, so both are
 * set. MX_MODEL_REVISION keeps this cache's peers apart from another cache's
 * of the same repo: the cache's claim name, distinct per namespace and cache.
 * POD_* let the server tie what a pod publishes to the pod's lifetime.
 * Upstream's first Dynamo revision also put HF_HUB_CACHE in the bundle; the
 * newer one moved it to the cache's own env on every stack, and so do we:
 * here the cache's contract carries it (a HuggingFace cache), never the bundle.
 */
export function modelExpressEnv(replica: Replica, cacheName: string): V1EnvVar[] {
  const field = (fieldPath: string): Pick<V1EnvVar, 'valueFrom'> => ({ valueFrom: { fieldRef: { fieldPath } } });
  return [
    { name: 'MX_SERVER_ADDRESS', value: MODELEXPRESS_ADDRESS },
    { name: 'MODEL_EXPRESS_URL', value: MODELEXPRESS_ADDRESS },
    { name: 'MX_MODEL_REVISION', value: cacheNames(replica.namespace, cacheName).pvc },
    { name: 'MX_P2P_METADATA', value: '1' },
    { name: 'POD_NAME', ...field('metadata.name') },
    { name: 'POD_UID', ...field('metadata.uid') },
    { name: 'POD_NAMESPACE', ...field('metadata.namespace') },
  ];
}

/** GPUDirect RDMA pins memory, which needs IPC_LOCK; set under the same gate as the env. */
export function modelExpressSecurityContext(): V1SecurityContext {
  return { capabilities: { add: ['IPC_LOCK'] } };
}

/** What the stack adds to every engine container of the replica (native and Grove; never a LeaderWorkerSet). */
export interface StackShaping {
  stack: Stack;
  env: V1EnvVar[];
  securityContext?: V1SecurityContext;
}

export function stackShaping(stack: Stack, replica: Replica): StackShaping {
  const cacheName = replica.spec.modelCacheRef?.name;
  if (cacheName === undefined || !usesModelExpress(stack, replica)) return { stack, env: [] };
  return { stack, env: modelExpressEnv(replica, cacheName), securityContext: modelExpressSecurityContext() };
}
