// The ModelReplica spec, parsed into typed values. The XRD already refuses a
// malformed replica at admission; parsing again here means a replica that got
// past it anyway (an older XRD, a hand-written object) becomes a Fatal result
// naming the field, never a crash or a silently wrong workload.

import {
  InputError,
  REMOTE_NAMESPACE,
  array,
  assertNamePart,
  boolean,
  integer,
  object,
  oneOf,
  optional,
  record,
  refine,
  replicaNames,
  string,
  type Composite,
  type ReplicaNameSet,
  type Parser,
} from '#lib';

export const ROLES = ['Standalone', 'Leader', 'Worker'] as const;
export type Role = (typeof ROLES)[number];

export const SERVING_MODES = ['Unified', 'PrefillDecode'] as const;
export type ServingMode = (typeof SERVING_MODES)[number];

export interface DeviceRequest {
  name: string;
  deviceClassName: string;
  count: number;
  /** CEL expressions, in order; selectors without one are dropped (upstream does the same). */
  selectorExpressions: string[];
}

/** An env entry exactly as the XRD admits it: name and value, or name and one valueFrom reference. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvVarSource {
  secretKeyRef?: KeyRef;
  configMapKeyRef?: KeyRef;
  fieldRef?: { fieldPath: string; apiVersion?: string };
}

interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}

/** The member's container named "engine": passed through unchanged (image, command, args, env). */
export interface EngineContainer {
  image: string;
  command?: string[];
  args?: string[];
  env: EnvVar[];
}

export interface Member {
  role: Role;
  nodePoolName: string;
  /** Absent when the member claims no devices (never an empty list). */
  deviceRequests?: DeviceRequest[];
  /** Worker members only: the follower pods per gang. */
  workerNodes?: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  container: EngineContainer;
  imagePullSecrets: string[];
}

export type Engine = StandaloneEngine | GangEngine;

export const PHASES = ['Prefill', 'Decode'] as const;
export type Phase = (typeof PHASES)[number];

interface EngineBase {
  name: string;
  copies: number;
  /** PrefillDecode serving only: which half of a request this engine serves. */
  phase?: Phase;
  /** The engine image of the member listed first (upstream names it in the "Composing" event). */
  firstImage: string;
}
export interface StandaloneEngine extends EngineBase {
  shape: 'Standalone';
  member: Member;
}
export interface GangEngine extends EngineBase {
  shape: 'Gang';
  leader: Member;
  worker: Member;
}

export interface ReplicaSpec {
  clusterName: string;
  modelCacheRef?: { name: string };
  servingMode: ServingMode;
  engines: Engine[];
}

export interface Replica {
  name: string;
  namespace: string;
  spec: ReplicaSpec;
  /** Where everything it composes on the workload cluster goes: `default`, until fn.ts places it (settings.ts). */
  workloadNamespace: string;
  /** The names of what it composes there: this release's, until naming.ts keeps upstream's for what runs under them. */
  naming: ReplicaNaming;
}

/** Which names each part of a replica goes by (docs/design/names.md). */
export interface ReplicaNaming {
  /** This release's names, unique per XR: everything new. */
  fresh: ReplicaNameSet;
  /** Per engine (its workload and claim templates), when not `fresh`: upstream's, which it already runs under. */
  engines: ReadonlyMap<string, ReplicaNameSet>;
  /** The pool, route, endpoint picker and serving label: `fresh`, or upstream's when they already run under them. */
  routing: ReplicaNameSet;
}

// The XRD's bounds, repeated so a replica that skipped admission is held to them too.
const MAX_ENGINES = 8;
const MAX_MEMBERS = 2;
const MAX_DEVICE_REQUESTS = 16;
const MAX_SELECTORS = 8;
const MAX_COPIES = 64;
const MAX_DEVICE_COUNT = 64;
const MAX_WORKER_NODES = 63;
const MAX_METADATA_ENTRIES = 32;
const ENGINE_CONTAINER = 'engine';
/**
 * nodePoolName becomes a nodeSelector label value: a value Kubernetes refuses
 * would leave the workload unappliable on the cluster, so it is refused here.
 */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** A label or annotation key: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters. */
const QUALIFIED_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const MAX_KEY_PREFIX = 253;
const MAX_ANNOTATION_VALUE = 8192;
/** Modelplane's own labels (serving, workload, pool, role) are set by this function; a member may not set any. */
const RESERVED_LABEL_PREFIX = 'modelplane.ai/';

/**
 * The keys of a member's pod labels or annotations, held to the XRD's rules:
 * Kubernetes refuses a pod template with any other, so a replica that got
 * past admission would leave its workload unappliable on the cluster.
 */
function checkKeys(map: Record<string, string>, field: string, what: 'labels' | 'annotations'): void {
  for (const key of Object.keys(map)) {
    const at = `${field}.${key}`;
    if (!QUALIFIED_KEY.test(key)) {
      throw new InputError(at, `must be a valid Kubernetes ${what === 'labels' ? 'label' : 'annotation'} key ([prefix/]name)`);
    }
    if (key.split('/')[0]!.length > MAX_KEY_PREFIX) throw new InputError(at, `must have a prefix of at most ${MAX_KEY_PREFIX} characters`);
    if (what === 'labels' && key.startsWith(RESERVED_LABEL_PREFIX)) {
      throw new InputError(at, `must not use the reserved ${RESERVED_LABEL_PREFIX} prefix: Modelplane sets those labels itself`);
    }
  }
}

const podLabels: Parser<Record<string, string>> = refine(
  record(string({ minLength: 0, maxLength: 63, pattern: LABEL_VALUE, patternHint: 'a Kubernetes label value' }), {
    maxProperties: MAX_METADATA_ENTRIES,
  }),
  (value, field) => {
    checkKeys(value, field, 'labels');
    return undefined;
  },
);

const podAnnotations: Parser<Record<string, string>> = refine(
  record(string({ minLength: 0, maxLength: MAX_ANNOTATION_VALUE }), { maxProperties: MAX_METADATA_ENTRIES }),
  (value, field) => {
    checkKeys(value, field, 'annotations');
    return undefined;
  },
);

const keyRef = object({ name: string(), key: string(), optional: optional(boolean()) });

const envVar: Parser<EnvVar> = (value, field) => {
  const parsed = object({
    name: string(),
    value: optional(string({ minLength: 0 })),
    valueFrom: optional(
      object({
        secretKeyRef: optional(keyRef),
        configMapKeyRef: optional(keyRef),
        fieldRef: optional(object({ fieldPath: string(), apiVersion: optional(string()) })),
      }),
    ),
  })(value, field);
  const env: EnvVar = { name: parsed.name };
  if (parsed.value !== undefined) env.value = parsed.value;
  if (parsed.valueFrom !== undefined) {
    const source: EnvVarSource = {};
    if (parsed.valueFrom.secretKeyRef) source.secretKeyRef = keyRefOf(parsed.valueFrom.secretKeyRef);
    if (parsed.valueFrom.configMapKeyRef) source.configMapKeyRef = keyRefOf(parsed.valueFrom.configMapKeyRef);
    if (parsed.valueFrom.fieldRef) {
      const { fieldPath, apiVersion } = parsed.valueFrom.fieldRef;
      source.fieldRef = apiVersion === undefined ? { fieldPath } : { fieldPath, apiVersion };
    }
    env.valueFrom = source;
  }
  return env;
};

function keyRefOf(ref: { name: string; key: string; optional?: boolean }): KeyRef {
  return ref.optional === undefined ? { name: ref.name, key: ref.key } : { name: ref.name, key: ref.key, optional: ref.optional };
}

const container = object({
  name: string(),
  image: string(),
  command: optional(array(string({ minLength: 0 }))),
  args: optional(array(string({ minLength: 0 }))),
  env: optional(array(envVar)),
});

const deviceRequest: Parser<DeviceRequest> = (value, field) => {
  const parsed = object({
    name: string({ maxLength: 63 }),
    deviceClassName: string({ maxLength: 253 }),
    count: optional(integer({ min: 1, max: MAX_DEVICE_COUNT })),
    selectors: optional(array(object({ cel: optional(string({ minLength: 0, maxLength: 10240 })) }), { maxItems: MAX_SELECTORS })),
  })(value, field);
  return {
    name: parsed.name,
    deviceClassName: parsed.deviceClassName,
    count: parsed.count ?? 1,
    selectorExpressions: (parsed.selectors ?? []).flatMap((s) => (s.cel ? [s.cel] : [])),
  };
};

const member: Parser<Member> = (value, field) => {
  const parsed = object({
    role: optional(oneOf(ROLES)),
    nodePoolName: string({
      maxLength: 63,
      pattern: LABEL_VALUE,
      patternHint: 'a Kubernetes label value (it pins pods with a nodeSelector)',
    }),
    deviceRequests: optional(array(deviceRequest, { minItems: 1, maxItems: MAX_DEVICE_REQUESTS })),
    worker: optional(object({ nodes: integer({ min: 1, max: MAX_WORKER_NODES }) })),
    template: object({
      metadata: optional(
        object({
          labels: optional(podLabels),
          annotations: optional(podAnnotations),
        }),
      ),
      spec: object({
        containers: array(container, { minItems: 1, maxItems: 1 }),
        imagePullSecrets: optional(array(object({ name: string() }))),
      }),
    }),
  })(value, field);
  const role = parsed.role ?? 'Standalone';
  if (parsed.worker !== undefined && role !== 'Worker') throw new InputError(`${field}.worker`, 'may only be set on a Worker member');
  const engines = parsed.template.spec.containers.filter((c) => c.name === ENGINE_CONTAINER);
  const engine = engines[0];
  if (engines.length !== 1 || engine === undefined) {
    throw new InputError(`${field}.template.spec.containers`, `must hold exactly one container named '${ENGINE_CONTAINER}'`);
  }
  const result: Member = {
    role,
    nodePoolName: parsed.nodePoolName,
    labels: parsed.template.metadata?.labels ?? {},
    annotations: parsed.template.metadata?.annotations ?? {},
    container: { image: engine.image, env: engine.env ?? [] },
    imagePullSecrets: (parsed.template.spec.imagePullSecrets ?? []).map((s) => s.name),
  };
  if (engine.command !== undefined) result.container.command = engine.command;
  if (engine.args !== undefined) result.container.args = engine.args;
  if (parsed.deviceRequests !== undefined) result.deviceRequests = parsed.deviceRequests;
  if (parsed.worker !== undefined) result.workerNodes = parsed.worker.nodes;
  return result;
};

const engine: Parser<Engine> = (value, field) => {
  const parsed = object({
    name: string({ maxLength: 63 }),
    copies: optional(integer({ min: 1, max: MAX_COPIES })),
    phase: optional(oneOf(PHASES)),
    members: array(member, { minItems: 1, maxItems: MAX_MEMBERS }),
  })(value, field);
  // The engine name reaches childName and the remote object names.
  assertNamePart(parsed.name, `${field}.name`);
  const [first, second] = parsed.members;
  const base: EngineBase = { name: parsed.name, copies: parsed.copies ?? 1, firstImage: first?.container.image ?? '' };
  if (parsed.phase !== undefined) base.phase = parsed.phase;
  if (parsed.members.length === 1 && first?.role === 'Standalone') return { ...base, shape: 'Standalone', member: first };
  const leader = parsed.members.find((m) => m.role === 'Leader');
  const worker = parsed.members.find((m) => m.role === 'Worker');
  if (second !== undefined && leader !== undefined && worker !== undefined) return { ...base, shape: 'Gang', leader, worker };
  throw new InputError(`${field}.members`, 'must be either a single Standalone member or one Leader and one Worker member');
};

const specShape = object({
  clusterName: string(),
  modelCacheRef: optional(object({ name: string() })),
  serving: optional(object({ mode: optional(oneOf(SERVING_MODES)) })),
  engines: array(engine, { minItems: 1, maxItems: MAX_ENGINES }),
});

/** The replica as this function reads it. */
export function readReplica(xr: Composite): Replica {
  // The name and namespace reach every composed name (hashed apart by "/", which neither may hold) and the owner's labels.
  assertNamePart(xr.name, 'metadata.name');
  assertNamePart(xr.namespace, 'metadata.namespace');
  const parsed = specShape(xr.spec, 'spec');
  const seen = new Set<string>();
  parsed.engines.forEach((e, i) => {
    if (seen.has(e.name))
      throw new InputError(`spec.engines[${i}].name`, `"${e.name}" is used by another engine: engine names must be unique`);
    seen.add(e.name);
  });
  const spec: ReplicaSpec = {
    clusterName: parsed.clusterName,
    servingMode: parsed.serving?.mode ?? 'Unified',
    engines: parsed.engines,
  };
  checkPhases(spec);
  if (parsed.modelCacheRef) spec.modelCacheRef = { name: parsed.modelCacheRef.name };
  const fresh = replicaNames({ namespace: xr.namespace, name: xr.name });
  return {
    name: xr.name,
    namespace: xr.namespace,
    spec,
    workloadNamespace: REMOTE_NAMESPACE,
    naming: { fresh, engines: new Map(), routing: fresh },
  };
}

/**
 * The XRD's PrefillDecode rules, in its order and with its words: exactly two
 * engines, one per phase; and a phase only in PrefillDecode mode (a phase
 * under Unified would silently be ignored).
 */
function checkPhases(spec: ReplicaSpec): void {
  if (spec.servingMode !== 'PrefillDecode') {
    const phased = spec.engines.findIndex((e) => e.phase !== undefined);
    if (phased >= 0) throw new InputError(`spec.engines[${phased}].phase`, 'may only be set when serving.mode is PrefillDecode');
    return;
  }
  if (spec.engines.length !== 2) {
    throw new InputError(
      'spec.engines',
      `PrefillDecode serving requires exactly two engines (one Prefill, one Decode); got ${spec.engines.length}`,
    );
  }
  for (const phase of PHASES) {
    const count = spec.engines.filter((e) => e.phase === phase).length;
    if (count !== 1) {
      throw new InputError('spec.engines', `PrefillDecode serving requires exactly one engine with phase ${phase}; got ${count}`);
    }
  }
}

/** The engine serving one phase of a PrefillDecode replica (checked when read: there is exactly one). */
export function phaseEngine(spec: ReplicaSpec, phase: Phase): Engine {
  const engine = spec.engines.find((e) => e.phase === phase);
  if (engine === undefined) throw new InputError('spec.engines', `PrefillDecode serving requires exactly one engine with phase ${phase}`);
  return engine;
}

/** The member whose pods serve the API: the Standalone pod, or the gang's leader. */
export function servingMember(engine: Engine): Member {
  return engine.shape === 'Standalone' ? engine.member : engine.leader;
}
