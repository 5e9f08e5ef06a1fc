// A Crossplane control plane in miniature, for tests that follow several XRs
// through their lives with the real function servers: objects people apply
// (XRs, InferenceClusters, Secrets), and Crossplane's loop for each XR:
//
// 1. observe the XR and the resources composed for it (keyed by their
//    crossplane.io/composition-resource-name annotation);
// 2. run its Composition's pipeline over gRPC, each step through the
//    requirements loop (the render driver's runner: call, fetch what the
//    answer requires, call again until the requirements stop changing);
// 3. unless a step returned a Fatal result, apply the answer: create or
//    update every desired composed resource (named, labelled and owned as
//    Crossplane does), delete every observed one no longer desired (a
//    composed XR with everything it composed), write the XR's status with the
//    function's conditions, Ready (from the composed resources' readiness, or
//    the XR's own verdict) and Synced, and record the results as events.
//
// provider-kubernetes and the workload clusters are the doubles in
// workload-cluster.ts. settle() runs every controller until nothing changes,
// the way watches make Crossplane react to each change; advance() moves the
// clusters' clock on first. Every call is deterministic: no real clock, no
// randomness (generated names come from a hash).

import { createHash } from 'node:crypto';
import {
  Ready,
  Severity,
  Status,
  compareNames,
  getObject,
  getString,
  isObject,
  type JsonObject,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
  type State,
} from '#lib';
import { selectRequired } from '../render/fetch.js';
import type { Composition } from '../render/load.js';
import { ANNOTATION_COMPOSITION_RESOURCE_NAME, setComposedResourceMetadata, setConditions, type Condition } from '../render/metadata.js';
import { readyCondition } from '../render/render.js';
import { connect, runWithRequirements, toSelector, type FunctionConnection, type Resources } from '../render/runner.js';
import { isProviderObject, type ProviderKubernetes } from './workload-cluster.js';

/** How many rounds of every controller settle() allows before it calls the world unstable (a function that flip-flops). */
const MAX_SETTLE_ROUNDS = 10;
/** Generous: a whole test's worth of calls share each connection's deadline. */
const CONNECTION_DEADLINE_MS = 10 * 60_000;

export interface ControlPlaneOptions {
  /** The Compositions (package/), one per XR type. */
  compositions: readonly Composition[];
  /** Each Function, by the name Compositions reference, to the host:port its server listens on. */
  targets: Readonly<Record<string, string>>;
  provider: ProviderKubernetes;
  /** The moment the simulation starts, for condition and event times. */
  epoch?: string;
}

export interface RecordedEvent {
  /** Seconds since the epoch of the simulation. */
  at: number;
  /** `Kind/name` of the XR. */
  object: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** One reconcile of one XR: how many calls the requirements loop took, and the last answer. */
export interface ReconcileRecord {
  at: number;
  xr: string;
  calls: number;
  response: RunFunctionResponse;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function identity(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  return [apiVersion, kind, namespace ?? '', name].join('/');
}

function identityOf(object: JsonObject): string {
  return identity(
    getString(object, 'apiVersion') ?? '',
    getString(object, 'kind') ?? '',
    getString(object, 'metadata', 'namespace'),
    getString(object, 'metadata', 'name') ?? '',
  );
}

function metadataOf(object: JsonObject): JsonObject {
  const metadata = getObject(object, 'metadata');
  if (metadata) return metadata;
  const created: JsonObject = {};
  object['metadata'] = created;
  return created;
}

/** `Kind/name`, how a person names an object in a namespace they know. */
export function objectName(object: JsonObject): string {
  return `${getString(object, 'kind') ?? ''}/${getString(object, 'metadata', 'name') ?? ''}`;
}

const CONDITION_STATUS: Partial<Record<Status, string>> = {
  [Status.STATUS_CONDITION_TRUE]: 'True',
  [Status.STATUS_CONDITION_FALSE]: 'False',
};

export class ControlPlane {
  private readonly objects = new Map<string, JsonObject>();
  private readonly connections = new Map<string, FunctionConnection>();
  private readonly compositions: readonly Composition[];
  private readonly provider: ProviderKubernetes;
  private readonly epoch: number;
  private nextUid = 1;
  /** Seconds since the epoch. */
  private clock = 0;
  private recorded: RecordedEvent[] = [];
  /** Every reconcile, in order. */
  readonly reconciles: ReconcileRecord[] = [];

  constructor(options: ControlPlaneOptions) {
    this.compositions = options.compositions;
    this.provider = options.provider;
    this.epoch = Date.parse(options.epoch ?? '2025-01-01T00:00:00Z');
    const deadline = new Date(Date.now() + CONNECTION_DEADLINE_MS);
    for (const [name, target] of Object.entries(options.targets)) this.connections.set(name, connect(target, deadline));
  }

  close(): void {
    for (const connection of this.connections.values()) connection.close();
  }

  /** Seconds since the simulation started. */
  get now(): number {
    return this.clock;
  }

  private timestamp(): string {
    return new Date(this.epoch + this.clock * 1000).toISOString().replace('.000Z', 'Z');
  }

  // --- what people do -----------------------------------------------------------

  /** `kubectl apply`: create the object, or replace its spec and metadata keeping its status. */
  apply(object: JsonObject): void {
    const key = identityOf(object);
    const existing = this.objects.get(key);
    const applied = clone(object);
    if (existing) {
      metadataOf(applied)['uid'] = getString(existing, 'metadata', 'uid') ?? '';
      if (existing['status'] !== undefined && applied['status'] === undefined) applied['status'] = existing['status'];
    } else {
      metadataOf(applied)['uid'] = `uid-${this.nextUid++}`;
    }
    this.objects.set(key, applied);
  }

  /** The object as stored now (a copy). */
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): JsonObject | undefined {
    const found = this.objects.get(identity(apiVersion, kind, namespace, name));
    return found ? clone(found) : undefined;
  }

  /** Every stored object of a kind, by name. */
  list(kind: string): JsonObject[] {
    return [...this.objects.values()]
      .filter((object) => getString(object, 'kind') === kind)
      .sort((a, b) => compareNames(getString(a, 'metadata', 'name') ?? '', getString(b, 'metadata', 'name') ?? ''))
      .map(clone);
  }

  /** Every stored object (copies). */
  all(): JsonObject[] {
    return [...this.objects.values()].map(clone);
  }

  /** The resources composed for an XR, by composition-resource-name (copies). */
  composed(xr: JsonObject): Record<string, JsonObject> {
    const out: Record<string, JsonObject> = {};
    for (const [key, object] of this.composedOf(xr)) out[key] = clone(object);
    return out;
  }

  /** The events recorded since the last call, oldest first. */
  takeEvents(): RecordedEvent[] {
    const events = this.recorded;
    this.recorded = [];
    return events;
  }

  // --- the controllers --------------------------------------------------------

  /** Let time pass on every workload cluster, then let every controller react. */
  async advance(seconds: number): Promise<void> {
    this.clock += seconds;
    this.provider.advance(seconds);
    await this.settle();
  }

  /**
   * Run provider-kubernetes and reconcile every XR, round after round, until
   * a round changes nothing: what Crossplane's watches achieve. Throws if
   * that doesn't happen within a few rounds.
   */
  async settle(): Promise<void> {
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      const before = this.snapshot();
      this.syncObjects();
      for (const xr of this.composites()) {
        const current = this.objects.get(identityOf(xr));
        if (current) await this.reconcile(current);
      }
      this.syncObjects();
      if (this.snapshot() === before) return;
    }
    throw new Error(`the control plane did not settle within ${MAX_SETTLE_ROUNDS} rounds: something keeps changing`);
  }

  private snapshot(): string {
    return JSON.stringify([...this.objects.entries()].sort(([a], [b]) => compareNames(a, b)));
  }

  private compositionFor(object: JsonObject): Composition | undefined {
    const apiVersion = getString(object, 'apiVersion');
    const kind = getString(object, 'kind');
    return this.compositions.find((c) => c.compositeTypeRef.apiVersion === apiVersion && c.compositeTypeRef.kind === kind);
  }

  /** Every XR, in a fixed order: by kind as the Compositions list them, then by namespace and name. */
  private composites(): JsonObject[] {
    const order = (object: JsonObject): number => this.compositions.findIndex((c) => c === this.compositionFor(object));
    return [...this.objects.values()]
      .filter((object) => this.compositionFor(object) !== undefined)
      .sort((a, b) => order(a) - order(b) || compareNames(identityOf(a), identityOf(b)));
  }

  /** provider-kubernetes: every Object's remote object applied and observed. */
  private syncObjects(): void {
    for (const object of this.objects.values()) {
      if (isProviderObject(object)) object['status'] = this.provider.reconcile(getString(object, 'metadata', 'uid') ?? '', object);
    }
  }

  private composedOf(xr: JsonObject): Map<string, JsonObject> {
    const uid = getString(xr, 'metadata', 'uid');
    const out = new Map<string, JsonObject>();
    for (const object of this.objects.values()) {
      const owners = getObject(object, 'metadata')?.['ownerReferences'];
      const owned = Array.isArray(owners) && owners.some((ref) => isObject(ref) && ref['controller'] === true && ref['uid'] === uid);
      const key = getString(object, 'metadata', 'annotations', ANNOTATION_COMPOSITION_RESOURCE_NAME);
      if (owned && key !== undefined) out.set(key, object);
    }
    return out;
  }

  /** Required resources as Crossplane resolves a selector: by kind, then name or labels, in the selector's namespace if it names one. */
  private fetch(selector: ResourceSelector): Resources {
    const found = selectRequired([...this.objects.values()], toSelector(selector)).filter(
      (object) => selector.namespace === undefined || getString(object, 'metadata', 'namespace') === selector.namespace,
    );
    return { items: found.map((object) => ({ resource: clone(object), connectionDetails: {}, ready: Ready.READY_UNSPECIFIED })) };
  }

  /** One reconcile of one XR: Crossplane's composite reconciler, with a function pipeline. */
  private async reconcile(xr: JsonObject): Promise<void> {
    const composition = this.compositionFor(xr)!;
    this.selectComposition(xr, composition);
    const observedComposed = this.composedOf(xr);
    const observed: State = { composite: { resource: clone(xr), connectionDetails: {}, ready: Ready.READY_UNSPECIFIED }, resources: {} };
    for (const [key, object] of observedComposed) {
      observed.resources[key] = { resource: clone(object), connectionDetails: {}, ready: Ready.READY_UNSPECIFIED };
    }

    let desired: State | undefined = { composite: undefined, resources: {} };
    let context: Record<string, unknown> | undefined = {};
    const conditions: Condition[] = [];
    const results: RunFunctionResponse['results'] = [];
    for (const step of composition.pipeline) {
      const connection = this.connections.get(step.functionName);
      if (!connection) throw new Error(`no server for Function ${step.functionName} (step ${step.step})`);
      const req: RunFunctionRequest = {
        meta: { tag: '', capabilities: [] },
        observed,
        desired,
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- the generated type requires the old field; it stays empty
        extraResources: {},
        credentials: {},
        requiredResources: {},
        requiredSchemas: {},
      };
      if (context !== undefined) req.context = context;
      if (step.input !== undefined) req.input = step.input;
      const { rsp, calls } = await runWithRequirements(
        (r) => connection.run(r),
        req,
        (selector) => this.fetch(selector),
      );
      this.reconciles.push({ at: this.clock, xr: objectName(xr), calls, response: rsp });
      const fatal = rsp.results.find((result) => result.severity === Severity.SEVERITY_FATAL);
      if (fatal) {
        // Crossplane applies nothing from a pipeline that returned a Fatal result, and says why on the XR.
        setConditions(xr, {
          type: 'Synced',
          status: 'False',
          reason: 'ReconcileError',
          message: fatal.message,
          lastTransitionTime: this.timestamp(),
        });
        this.record(xr, 'Warning', 'ComposeResources', fatal.message);
        return;
      }
      desired = rsp.desired;
      context = rsp.context;
      for (const c of rsp.conditions) {
        const condition: Condition = {
          type: c.type,
          status: CONDITION_STATUS[c.status] ?? 'Unknown',
          reason: c.reason,
          lastTransitionTime: '',
        };
        if (c.message) condition.message = c.message;
        conditions.push(condition);
      }
      results.push(...rsp.results);
    }

    // Apply: every desired composed resource, then garbage-collect the ones no longer desired.
    const unready: string[] = [];
    for (const [key, value] of Object.entries(desired?.resources ?? {})) {
      if (value.ready !== Ready.READY_TRUE) unready.push(key);
      this.applyComposed(xr, key, value.resource ?? {}, observedComposed.get(key));
    }
    for (const [key, object] of observedComposed) {
      if (!Object.hasOwn(desired?.resources ?? {}, key)) this.deleteComposed(object);
    }

    // The XR's status: the fields the pipeline returned (replacing what it returned before), then the conditions.
    const returned = getObject(desired?.composite?.resource, 'status') ?? {};
    const status: JsonObject = clone(returned);
    const previous = getObject(xr, 'status')?.['conditions'];
    if (previous !== undefined) status['conditions'] = previous;
    xr['status'] = status;
    const at = this.timestamp();
    for (const condition of conditions) setConditions(xr, { ...condition, lastTransitionTime: at });
    setConditions(xr, { ...readyCondition(desired?.composite?.ready ?? Ready.READY_UNSPECIFIED, unready), lastTransitionTime: at });
    setConditions(xr, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at });

    for (const result of results) {
      this.record(
        xr,
        result.severity === Severity.SEVERITY_WARNING ? 'Warning' : 'Normal',
        result.reason ?? 'ComposeResources',
        result.message,
      );
    }
  }

  /** Crossplane's first act on an XR: it records the Composition it selected, in a field it owns. */
  private selectComposition(xr: JsonObject, composition: Composition): void {
    const spec = getObject(xr, 'spec');
    if (!spec || getObject(spec, 'crossplane')?.['compositionRef'] !== undefined) return;
    spec['crossplane'] = { ...(getObject(spec, 'crossplane') ?? {}), compositionRef: { name: composition.name } };
  }

  /**
   * Server-side apply of a desired composed resource: it keeps the name it
   * already has (else takes the one it asks for, else one generated from the
   * XR's), gets Crossplane's metadata, and its spec becomes the desired spec,
   * but for what other controllers own there (spec.crossplane on an XR).
   * Status belongs to whoever reconciles the resource, never to the composer.
   */
  private applyComposed(xr: JsonObject, key: string, resource: JsonObject, existing: JsonObject | undefined): void {
    const desired = clone(resource);
    const metadata = metadataOf(desired);
    const existingName = getString(existing, 'metadata', 'name');
    if (existingName !== undefined) metadata['name'] = existingName;
    else if (getString(metadata, 'name') === undefined) metadata['name'] = this.generatedName(xr, key);
    setComposedResourceMetadata(desired, xr, key);
    delete metadataOf(desired)['generateName'];
    if (!existing) {
      metadataOf(desired)['uid'] = `uid-${this.nextUid++}`;
      this.objects.set(identityOf(desired), desired);
      return;
    }
    const merged: JsonObject = { ...clone(existing), ...desired };
    const existingMetadata = metadataOf(existing);
    merged['metadata'] = {
      ...existingMetadata,
      ...metadataOf(desired),
      labels: { ...(getObject(existingMetadata, 'labels') ?? {}), ...(getObject(desired, 'metadata', 'labels') ?? {}) },
      annotations: { ...(getObject(existingMetadata, 'annotations') ?? {}), ...(getObject(desired, 'metadata', 'annotations') ?? {}) },
      uid: getString(existing, 'metadata', 'uid') ?? '',
    };
    const ownedByOthers = getObject(existing, 'spec', 'crossplane');
    if (ownedByOthers !== undefined) merged['spec'] = { ...(getObject(desired, 'spec') ?? {}), crossplane: ownedByOthers };
    if (existing['status'] !== undefined) merged['status'] = existing['status'];
    else delete merged['status'];
    this.objects.set(identityOf(existing), merged);
  }

  /** What metadata.generateName `<xr>-` gives, made deterministic: five characters of a hash instead of random ones. */
  private generatedName(xr: JsonObject, key: string): string {
    const suffix = createHash('sha256')
      .update(`${getString(xr, 'metadata', 'uid') ?? ''}/${key}`)
      .digest('hex')
      .slice(0, 5);
    return `${getString(xr, 'metadata', 'name') ?? ''}-${suffix}`;
  }

  /** Delete a composed resource: a composed XR takes what it composed with it; an Object's remote object goes only if its policies say Delete. */
  private deleteComposed(object: JsonObject): void {
    if (this.compositionFor(object) !== undefined) {
      for (const child of this.composedOf(object).values()) this.deleteComposed(child);
    }
    if (isProviderObject(object)) this.provider.remove(getString(object, 'metadata', 'uid') ?? '', object);
    this.objects.delete(identityOf(object));
  }

  private record(xr: JsonObject, type: RecordedEvent['type'], reason: string, message: string): void {
    const object = objectName(xr);
    // Kubernetes folds a repeated event into one (it counts it); so do we, between two takeEvents().
    if (this.recorded.some((e) => e.object === object && e.type === type && e.reason === reason && e.message === message)) return;
    this.recorded.push({ at: this.clock, object, type, reason, message });
  }
}
