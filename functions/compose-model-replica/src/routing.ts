// Routing: the gateway routes the replica's path to an InferencePool over the
// serving pods, and an endpoint picker chooses a pod per request by
// prefix-cache locality and queue depth (Unified), or a prefill and a decode
// pod (PrefillDecode). One surface whether the replica runs one pod or many,
// so a second copy never swaps a Service for a pool under live traffic.

import { createHash } from 'node:crypto';
import { DEFAULT_GATEWAY, READY_QUERY, SUCCESSFUL_CREATE, celReadiness, remoteObject, type InferenceCluster, type JsonObject } from '#lib';
import type { Composed } from './composed.js';
import { EPP_KEYS, LABEL_SERVING, POOL_KEY, ROUTE_KEY, eppName, eppServiceName, poolName, routeName, servingLabel } from './names.js';
import { ENGINE_PORT } from './pod.js';
import { phaseEngine, servingMember, type Replica } from './spec.js';

/** Pinned: a new picker release changes behaviour, so it is a reviewed bump, not a floating tag. */
export const EPP_IMAGE = 'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0';
const EPP_GRPC_PORT = 9002;
const EPP_HEALTH_PORT = 9003;
const EPP_CONFIG_FILE = 'epp-config.yaml';
const EPP_CONFIG_DIR = '/config';
const INFERENCE_GROUP = 'inference.networking.k8s.io';
/** On the picker's pod template: the picker reads its config once, so a changed config must roll the pod. */
const EPP_CHECKSUM_ANNOTATION = 'modelplane.ai/epp-config-checksum';

/**
 * "0s" turns the gateway's request timeout off. Generation time grows with the
 * output, and a default such as Envoy's 15 s cuts token streams mid-answer;
 * the gateway's stream-idle timeout still reaps stuck connections.
 */
const REQUEST_TIMEOUT = '0s';

/** vLLM's default KV block size, when the engine's flags don't say. */
export const DEFAULT_KV_BLOCK_SIZE = 16;

/**
 * How every picker config begins: the prefix-cache producer, chunking at the
 * engine's KV block size without auto-tuning (which leaves the block size 0
 * and the prefix scorer blind), and the scorer that reads what it produces.
 */
function prefixProducer(blockSize: number): string[] {
  return [
    'apiVersion: llm-d.ai/v1alpha1',
    'kind: EndpointPickerConfig',
    'plugins:',
    '- type: approx-prefix-cache-producer',
    '  parameters:',
    '    autoTune: false',
    `    blockSizeTokens: ${blockSize}`,
    '    maxPrefixBlocksToMatch: 256',
    '    lruCapacityPerServer: 31250',
    '- type: prefix-cache-scorer',
  ];
}

/** A scheduling profile: its filter, if any, then the picker and the two scorers, weighed alike in every profile. */
function schedulingProfile(name: string, filter?: string): string[] {
  return [
    `- name: ${name}`,
    '  plugins:',
    ...(filter ? [`  - pluginRef: ${filter}`] : []),
    '  - pluginRef: max-score-picker',
    '  - pluginRef: prefix-cache-scorer',
    '    weight: 2',
    '  - pluginRef: queue-scorer',
    '    weight: 1',
  ];
}

/**
 * The unified EndpointPickerConfig, byte for byte upstream's (its SHA-256 is
 * on the picker's pod template, so any change rolls every picker). The
 * producer must chunk prefixes at the engine's KV block size, and must not
 * auto-tune (which leaves the block size 0 and the prefix scorer blind).
 */
export function unifiedEppConfig(blockSize: number): string {
  return [
    ...prefixProducer(blockSize),
    '- type: queue-scorer',
    '- type: max-score-picker',
    'schedulingProfiles:',
    ...schedulingProfile('default'),
    '',
  ].join('\n');
}

/**
 * The disaggregated EndpointPickerConfig, byte for byte upstream v0.3.1's.
 * Each request runs the prefill profile first; the profile handler's decider
 * sends it through a prefill engine only when its uncached suffix is at least
 * nonCachedTokens long (0 would mean never), reading the prefix match the
 * producer computes; the routing sidecar on the decode pod then has the
 * prefill engine do that part. Same producer settings as Unified.
 */
export function disaggregatedEppConfig(blockSize: number): string {
  return [
    ...prefixProducer(blockSize),
    '- type: disagg-headers-handler',
    '- type: queue-scorer',
    '- type: prefill-filter',
    '- type: decode-filter',
    '- type: max-score-picker',
    '- type: prefix-based-pd-decider',
    '  parameters:',
    '    nonCachedTokens: 16',
    '- type: disagg-profile-handler',
    '  parameters:',
    '    deciders:',
    '      prefill: prefix-based-pd-decider',
    'schedulingProfiles:',
    ...schedulingProfile('prefill', 'prefill-filter'),
    ...schedulingProfile('decode', 'decode-filter'),
    '',
  ].join('\n');
}

export function configChecksum(config: string): string {
  return createHash('sha256').update(config, 'utf8').digest('hex');
}

/**
 * The value of `--flag value` or `--flag=value`, at the first argument that
 * carries any of the flags (upstream's peek). Only read, never changed.
 */
export function flagValue(args: readonly string[], ...flags: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    for (const flag of flags) {
      if (arg === flag && i + 1 < args.length) return args[i + 1];
      if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
    }
  }
  return undefined;
}

/** Python's int(): optional sign, digits, single underscores between digits, surrounding whitespace. */
const PYTHON_INT = /^\s*[+-]?\d+(_\d+)*\s*$/;

/**
 * The engine's KV block size, read best-effort from vLLM's --block-size or
 * SGLang's --page-size; 16 when absent or not an integer. A mismatch silently
 * degrades prefix-cache routing, so reading it beats a constant.
 */
export function kvBlockSize(args: readonly string[]): number {
  const raw = flagValue(args, '--block-size', '--page-size');
  if (raw !== undefined && PYTHON_INT.test(raw)) {
    const value = Number(raw.trim().replaceAll('_', ''));
    if (Number.isSafeInteger(value)) return value;
  }
  return DEFAULT_KV_BLOCK_SIZE;
}

export interface Gateway {
  name: string;
  namespace: string;
}

/** The cluster's gateway when it reports one, else the one every Modelplane cluster runs. */
export function gatewayOf(cluster: InferenceCluster): Gateway {
  return { name: cluster.gatewayName ?? DEFAULT_GATEWAY.name, namespace: cluster.gatewayNamespace ?? DEFAULT_GATEWAY.namespace };
}

export function unifiedRouting(providerConfig: string, replica: Replica, gateway: Gateway): Composed {
  // The first engine's serving pod (upstream's choice); args are the user's, as composed.
  const firstEngine = replica.spec.engines[0]!;
  return routingSurface(providerConfig, replica, gateway, unifiedEppConfig(kvBlockSize(servingMember(firstEngine).container.args ?? [])));
}

/**
 * PrefillDecode: the same pool, route and picker set as Unified (the pool
 * still selects the serving label both engines' serving pods carry), with the
 * disaggregated picker config. Its producer chunks prefixes at the decode
 * engine's KV block size: decode holds the cache the prefix scorer predicts.
 */
export function disaggregatedRouting(providerConfig: string, replica: Replica, gateway: Gateway): Composed {
  const decode = phaseEngine(replica.spec, 'Decode');
  return routingSurface(providerConfig, replica, gateway, disaggregatedEppConfig(kvBlockSize(servingMember(decode).container.args ?? [])));
}

function routingSurface(providerConfig: string, replica: Replica, gateway: Gateway, config: string): Composed {
  const plain = (manifest: JsonObject): JsonObject => remoteObject({ providerConfig, readiness: SUCCESSFUL_CREATE, manifest });
  const eppService = eppServiceName(replica);
  const pool = poolName(replica);
  const meta = (name: string): JsonObject => ({ name, namespace: replica.workloadNamespace });

  return [
    [
      POOL_KEY,
      plain({
        apiVersion: `${INFERENCE_GROUP}/v1`,
        kind: 'InferencePool',
        metadata: meta(pool),
        spec: {
          selector: { matchLabels: { [LABEL_SERVING]: servingLabel(replica) } },
          targetPorts: [{ number: ENGINE_PORT }],
          // FailOpen: if the picker is down, the gateway still reaches a pod.
          endpointPickerRef: { name: eppService, port: { number: EPP_GRPC_PORT }, failureMode: 'FailOpen' },
        },
      }),
    ],
    [
      ROUTE_KEY,
      plain({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: meta(routeName(replica)),
        spec: {
          parentRefs: [{ name: gateway.name, namespace: gateway.namespace }],
          rules: [
            {
              // The replica's Modelplane namespace and name: ModelDeployment publishes this path as the endpoint.
              matches: [{ path: { type: 'PathPrefix', value: `/${replica.namespace}/${replica.name}/` } }],
              timeouts: { request: REQUEST_TIMEOUT },
              filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
              backendRefs: [{ group: INFERENCE_GROUP, kind: 'InferencePool', name: pool }],
            },
          ],
        },
      }),
    ],
    ...endpointPicker(providerConfig, replica, config),
  ];
}

function endpointPicker(providerConfig: string, replica: Replica, config: string): Composed {
  const epp = eppName(replica);
  const plain = (manifest: JsonObject): JsonObject => remoteObject({ providerConfig, readiness: SUCCESSFUL_CREATE, manifest });
  const meta: JsonObject = { name: epp, namespace: replica.workloadNamespace };
  const watch = ['get', 'watch', 'list'];
  return [
    [EPP_KEYS.serviceAccount, plain({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { ...meta } })],
    [
      EPP_KEYS.role,
      plain({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { ...meta },
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: [...watch] },
          { apiGroups: [INFERENCE_GROUP], resources: ['inferencepools'], verbs: [...watch] },
          // The picker also watches InferenceObjectives; without this it logs forbidden errors.
          { apiGroups: ['inference.networking.x-k8s.io'], resources: ['inferenceobjectives'], verbs: [...watch] },
        ],
      }),
    ],
    [
      EPP_KEYS.roleBinding,
      plain({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { ...meta },
        subjects: [{ kind: 'ServiceAccount', name: epp, namespace: replica.workloadNamespace }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: epp },
      }),
    ],
    [EPP_KEYS.config, plain({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta }, data: { [EPP_CONFIG_FILE]: config } })],
    [
      EPP_KEYS.deployment,
      remoteObject({
        providerConfig,
        readiness: celReadiness(READY_QUERY.workloadAvailable),
        manifest: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { ...meta },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: epp } },
            template: {
              metadata: { labels: { app: epp }, annotations: { [EPP_CHECKSUM_ANNOTATION]: configChecksum(config) } },
              spec: {
                serviceAccountName: epp,
                containers: [
                  {
                    name: 'epp',
                    image: EPP_IMAGE,
                    args: [
                      `--pool-name=${poolName(replica)}`,
                      `--pool-namespace=${replica.workloadNamespace}`,
                      `--pool-group=${INFERENCE_GROUP}`,
                      `--config-file=${EPP_CONFIG_DIR}/${EPP_CONFIG_FILE}`,
                      `--grpc-port=${EPP_GRPC_PORT}`,
                    ],
                    ports: [
                      { name: 'grpc', containerPort: EPP_GRPC_PORT },
                      { name: 'grpc-health', containerPort: EPP_HEALTH_PORT },
                    ],
                    volumeMounts: [{ name: 'config', mountPath: EPP_CONFIG_DIR }],
                  },
                ],
                volumes: [{ name: 'config', configMap: { name: epp } }],
              },
            },
          },
        },
      }),
    ],
    [
      EPP_KEYS.service,
      plain({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: eppServiceName(replica), namespace: replica.workloadNamespace },
        spec: {
          selector: { app: epp },
          ports: [{ name: 'grpc-ext-proc', port: EPP_GRPC_PORT, targetPort: EPP_GRPC_PORT, appProtocol: 'http2' }],
        },
      }),
    ],
  ];
}
