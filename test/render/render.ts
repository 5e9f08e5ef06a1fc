// The project's own driver of a Composition's Function pipeline, in process
// (make render and the example tests run the real `crossplane render`; the
// control-plane double and bench run on this driver's parts: runner.ts,
// fetch.ts, metadata.ts, readyCondition). It follows render's rules
// (Crossplane v2.1, cmd/crank/render): load and check the inputs, run the
// Composition's pipeline step by step against each Function's Development
// target, loop on each step's requirements, pass desired state and context
// along, stop at a Fatal result, then build render's output: the XR
// (identity, status, the conditions render sets), each desired composed
// resource with the metadata Crossplane adds, and the results.

import { Buffer } from 'node:buffer';
import {
  Ready,
  Severity,
  Status,
  compareNames,
  getObject,
  getString,
  getStringMap,
  isObject,
  type JsonObject,
  type JsonValue,
  type Resource,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
  type State,
} from '#lib';
import { selectRequired } from './fetch.js';
import {
  ANNOTATION,
  DEFAULT_DEVELOPMENT_TARGET,
  checkCompositionFor,
  loadComposition,
  loadCompositeResource,
  loadFunctions,
  loadResources,
  type Composition,
  type FunctionRef,
  type PipelineStep,
} from './load.js';
import {
  ANNOTATION_COMPOSITION_RESOURCE_NAME,
  CONDITION_TIME,
  SYSTEM_CONDITION_TYPES,
  setComposedResourceMetadata,
  setConditions,
  setMetadataString,
  someNames,
  type Condition,
} from './metadata.js';
import {
  RenderError,
  connect,
  runWithRequirements,
  toSelector,
  type FunctionConnection,
  type Requirements,
  type Resources,
} from './runner.js';
import { LoadError } from './yaml.js';

export { RenderError };

/** Render's default --timeout: the whole render, every call included. */
export const DEFAULT_TIMEOUT_MS = 60_000;

export const RENDER_API_VERSION = 'render.crossplane.io/v1beta1';

/** A file path (YAML, as render reads it) or the objects themselves. */
type Source<T> = string | T;

export interface RenderOptions {
  /** The XR (render's first argument). */
  compositeResource: Source<JsonObject>;
  /** The Composition (second argument). */
  composition: Source<JsonObject>;
  /** The Functions (third argument): a stream of pkg.crossplane.io Functions. */
  functions: Source<readonly JsonObject[]>;
  /** -o / --observed-resources: a file or directory. */
  observedResources?: Source<readonly JsonObject[]>;
  /** -e / --required-resources: a file or directory. */
  requiredResources?: Source<readonly JsonObject[]>;
  /** --extra-resources (deprecated in render, same meaning). */
  extraResources?: Source<readonly JsonObject[]>;
  /** --function-credentials: Secrets a step's credentials name. */
  functionCredentials?: Source<readonly JsonObject[]>;
  /** --context-values: initial context, key to value. */
  context?: Record<string, JsonValue>;
  /** -a: annotations set on every Function (e.g. the runtime or target). */
  functionAnnotations?: Record<string, string>;
  /**
   * Not a render flag: a Development target per Function name, overriding
   * functions.yaml, so tests can run servers on ephemeral ports.
   */
  targets?: Record<string, string>;
  /** -x: output the XR with the input's metadata and spec. */
  includeFullXr?: boolean;
  /** --timeout, for the whole render. */
  timeoutMs?: number;
}

export interface StepTrace {
  step: string;
  functionName: string;
  /** How many times the requirements loop called the function. */
  calls: number;
}

export interface RenderOutput {
  compositeResource: JsonObject;
  /** Sorted by composition-resource-name. */
  composedResources: JsonObject[];
  /** Every non-Fatal result, as render prints them with -r. */
  results: JsonObject[];
  /** The context after the last step, as render prints it with -c. */
  context?: JsonObject;
  /** Each step's last requirements. */
  requirements: Record<string, Requirements>;
  steps: StepTrace[];
}

function resource(body: JsonObject): Resource {
  return { resource: body, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED };
}

function toResources(items: readonly JsonObject[]): Resources {
  return { items: items.map(resource) };
}

function withAnnotations(fn: FunctionRef, annotations: Record<string, string>, targets: Record<string, string>): FunctionRef {
  const out = { ...fn };
  const runtime = annotations[ANNOTATION.runtime];
  if (runtime !== undefined) out.runtime = runtime;
  const developmentTarget = annotations[ANNOTATION.developmentTarget];
  if (developmentTarget !== undefined) out.target = developmentTarget || DEFAULT_DEVELOPMENT_TARGET;
  const target = targets[fn.name];
  if (target !== undefined) {
    out.runtime = 'Development';
    out.target = target;
  }
  return out;
}

/** Start every Function's runtime (for us: check it is a Development one) and dial it, as render does before step one. */
function connectFunctions(functions: readonly FunctionRef[], deadline: Date): Map<string, FunctionConnection> {
  const connections = new Map<string, FunctionConnection>();
  try {
    for (const fn of functions) {
      if (fn.runtime === 'Docker') {
        throw new LoadError(
          `cannot start function runtimes: cannot start Function "${fn.name}": it uses the Docker runtime, which this driver can't run; ` +
            `annotate it ${ANNOTATION.runtime}: Development, start it yourself, or use the crossplane CLI`,
        );
      }
      if (fn.runtime !== 'Development') {
        throw new LoadError(
          `cannot start function runtimes: cannot get runtime for Function "${fn.name}": unsupported "${ANNOTATION.runtime}" annotation value "${fn.runtime}" (unknown runtime)`,
        );
      }
      connections.get(fn.name)?.close();
      connections.set(fn.name, connect(fn.target, deadline));
    }
  } catch (error) {
    for (const connection of connections.values()) connection.close();
    throw error;
  }
  return connections;
}

function secretData(secret: JsonObject): Record<string, Buffer> {
  const data: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(getStringMap(secret, 'data'))) data[key] = Buffer.from(value, 'base64');
  for (const [key, value] of Object.entries(getStringMap(secret, 'stringData'))) data[key] = Buffer.from(value, 'utf8');
  return data;
}

const STATUS_NAMES: Partial<Record<Status, string>> = {
  [Status.STATUS_CONDITION_TRUE]: 'True',
  [Status.STATUS_CONDITION_FALSE]: 'False',
};

function severityName(severity: Severity): string {
  return Object.entries(Severity).find(([, value]) => value === severity)?.[0] ?? String(severity);
}

interface Inputs {
  xr: JsonObject;
  composition: Composition;
  functions: FunctionRef[];
  credentials: JsonObject[];
  /** Observed composed resources by their composition-resource-name annotation. */
  observed: Map<string, JsonObject>;
  /** -e objects, for a step's bootstrap requirements. */
  required: JsonObject[];
  /** -e and --extra-resources objects, for the requirements functions return. */
  fetchable: JsonObject[];
}

/** Render's inputs, checked as render checks them before it runs anything. */
function loadInputs(options: RenderOptions): Inputs {
  const xr = loadCompositeResource(options.compositeResource);
  const composition = loadComposition(options.composition);
  checkCompositionFor(xr, composition);
  const functions = loadFunctions(options.functions).map((fn) =>
    withAnnotations(fn, options.functionAnnotations ?? {}, options.targets ?? {}),
  );
  const observed = new Map<string, JsonObject>();
  for (const object of loadResources(options.observedResources)) {
    // Render keys each by its annotation; one without it lands under "", as it does in render.
    observed.set(getString(object, 'metadata', 'annotations', ANNOTATION_COMPOSITION_RESOURCE_NAME) ?? '', object);
  }
  const required = loadResources(options.requiredResources);
  return {
    xr,
    composition,
    functions,
    credentials: loadResources(options.functionCredentials),
    observed,
    required,
    fetchable: [...loadResources(options.extraResources), ...required],
  };
}

/** Run the pipeline and build what `crossplane render` would print. */
export async function renderPipeline(options: RenderOptions): Promise<RenderOutput> {
  const inputs = loadInputs(options);
  const deadline = new Date(Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const connections = connectFunctions(inputs.functions, deadline);
  try {
    const run = await runPipeline(inputs, connections, options.context ?? {});
    return buildOutput(inputs, run, options.includeFullXr ?? false);
  } finally {
    for (const connection of connections.values()) connection.close();
  }
}

interface PipelineRun {
  desired: State | undefined;
  context: JsonObject | undefined;
  results: JsonObject[];
  conditions: Condition[];
  requirements: Record<string, Requirements>;
  steps: StepTrace[];
}

/** Each step in order, on the desired state and context the step before returned. */
async function runPipeline(inputs: Inputs, connections: Map<string, FunctionConnection>, initialContext: JsonObject): Promise<PipelineRun> {
  const observed: State = { composite: resource(inputs.xr), resources: {} };
  for (const [key, object] of inputs.observed) observed.resources[key] = resource(object);
  const fetch = (selector: ResourceSelector): Resources => toResources(selectRequired(inputs.fetchable, toSelector(selector)));

  // The pipeline starts with empty desired state and an empty context (plus what the caller gave).
  const run: PipelineRun = {
    desired: { composite: undefined, resources: {} },
    context: { ...initialContext },
    results: [],
    conditions: [],
    requirements: {},
    steps: [],
  };
  for (const step of inputs.composition.pipeline) {
    const connection = connections.get(step.functionName);
    if (!connection) {
      throw new RenderError(
        `cannot run pipeline step "${step.step}": unknown Function "${step.functionName}" - does it exist in your Functions file?`,
      );
    }
    const req = firstRequest(inputs, step, observed, run);
    let rsp: RunFunctionResponse;
    let calls: number;
    try {
      ({ rsp, calls } = await runWithRequirements((r) => connection.run(r), req, fetch));
    } catch (error) {
      throw withRequirements(
        new RenderError(`cannot run pipeline step "${step.step}": ${error instanceof Error ? error.message : String(error)}`),
        run,
      );
    }
    run.steps.push({ step: step.step, functionName: step.functionName, calls });
    run.desired = rsp.desired;
    run.context = rsp.context;
    for (const c of rsp.conditions) {
      const condition: Condition = {
        type: c.type,
        status: STATUS_NAMES[c.status] ?? 'Unknown',
        reason: c.reason,
        lastTransitionTime: CONDITION_TIME,
      };
      if (c.message) condition.message = c.message;
      run.conditions.push(condition);
    }
    if (rsp.requirements !== undefined) run.requirements[step.step] = rsp.requirements;
    for (const result of rsp.results) {
      // A Fatal result stops the render; Crossplane would change nothing.
      if (result.severity === Severity.SEVERITY_FATAL) {
        throw withRequirements(new RenderError(`pipeline step "${step.step}" returned a fatal result: ${result.message}`), run);
      }
      run.results.push({
        apiVersion: RENDER_API_VERSION,
        kind: 'Result',
        step: step.step,
        severity: severityName(result.severity),
        message: result.message,
      });
    }
  }
  return run;
}

function withRequirements(error: RenderError, run: PipelineRun): RenderError {
  error.requirements = run.requirements;
  return error;
}

/** A step's first request: state so far, its input and credentials, and its bootstrap requirements resolved. */
function firstRequest(inputs: Inputs, step: PipelineStep, observed: State, run: PipelineRun): RunFunctionRequest {
  const req: RunFunctionRequest = {
    meta: undefined,
    observed,
    desired: run.desired,
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the generated type requires the old field; it starts empty
    extraResources: {},
    credentials: {},
    requiredResources: {},
    requiredSchemas: {},
  };
  if (run.context !== undefined) req.context = run.context;
  if (step.input !== undefined) req.input = step.input;
  for (const credential of step.credentials) {
    const secret = inputs.credentials.find(
      (s) =>
        getString(s, 'metadata', 'name') === credential.secretName &&
        (getString(s, 'metadata', 'namespace') ?? '') === credential.secretNamespace,
    );
    if (!secret)
      throw new LoadError(`cannot get credentials from secret "${credential.secretName}": secret "${credential.secretName}" not found`);
    req.credentials[credential.name] = { credentialData: { data: secretData(secret) } };
  }
  for (const bootstrap of step.requiredResources) {
    req.requiredResources[bootstrap.requirementName] = toResources(selectRequired(inputs.required, bootstrap.selector));
  }
  return req;
}

/** What render prints, from the last desired state: the XR, then the composed resources by key. */
function buildOutput(inputs: Inputs, run: PipelineRun, includeFullXr: boolean): RenderOutput {
  const { xr } = inputs;
  const composed: { key: string; body: JsonObject }[] = [];
  const unready: string[] = [];
  for (const [key, value] of Object.entries(run.desired?.resources ?? {})) {
    if (value.ready !== Ready.READY_TRUE) unready.push(key);
    const body = structuredClone<JsonObject>(value.resource ?? {});
    // A desired resource that is already observed keeps the observed one's name and namespace.
    const existing = inputs.observed.get(key);
    if (existing) {
      setMetadataString(body, 'namespace', getString(existing, 'metadata', 'namespace'));
      setMetadataString(body, 'name', getString(existing, 'metadata', 'name'));
      setMetadataString(body, 'generateName', getString(existing, 'metadata', 'generateName'));
    }
    setComposedResourceMetadata(body, xr, key);
    composed.push({ key, body });
  }
  composed.sort((a, b) => compareNames(a.key, b.key));

  // The pipeline returns only the XR's desired status; its identity comes from the input.
  const out = structuredClone<JsonObject>(run.desired?.composite?.resource ?? {});
  out['apiVersion'] = getString(xr, 'apiVersion') ?? '';
  out['kind'] = getString(xr, 'kind') ?? '';
  setMetadataString(out, 'name', getString(xr, 'metadata', 'name'));
  setMetadataString(out, 'namespace', getString(xr, 'metadata', 'namespace'));
  setConditions(out, readyCondition(run.desired?.composite?.ready ?? Ready.READY_UNSPECIFIED, unready));
  for (const condition of run.conditions) {
    // Ready, Synced and Healthy are Crossplane's own: a function can't set them.
    if (!SYSTEM_CONDITION_TYPES.includes(condition.type)) setConditions(out, condition);
  }
  if (includeFullXr) {
    if (!isObject(xr['spec'])) throw new LoadError('cannot get composite resource spec');
    out['spec'] = structuredClone(xr['spec']);
    out['metadata'] = structuredClone(getObject(xr, 'metadata') ?? {});
  }

  const output: RenderOutput = {
    compositeResource: out,
    composedResources: composed.map((c) => c.body),
    results: run.results,
    requirements: run.requirements,
    steps: run.steps,
  };
  if (run.context !== undefined) output.context = { apiVersion: RENDER_API_VERSION, kind: 'Context', fields: run.context };
  return output;
}

/**
 * Render's Ready condition on the XR (Crossplane's too): the XR's own verdict
 * if it has one, else whether every composed resource is ready.
 */
export function readyCondition(compositeReady: Ready, unready: readonly string[]): Condition {
  const at = CONDITION_TIME;
  if (compositeReady === Ready.READY_FALSE) return { type: 'Ready', status: 'False', reason: 'Creating', lastTransitionTime: at };
  if (compositeReady === Ready.READY_UNSPECIFIED && unready.length > 0) {
    return {
      type: 'Ready',
      status: 'False',
      reason: 'Creating',
      message: `Unready resources: ${someNames(unready)}`,
      lastTransitionTime: at,
    };
  }
  return { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: at };
}

export interface FormatOptions {
  /** -r */
  includeFunctionResults?: boolean;
  /** -c */
  includeContext?: boolean;
}

/** Render's output as it prints it: the XR, each composed resource, then (if asked) the results and the context. */
export function renderDocuments(output: RenderOutput, options: FormatOptions = {}): JsonObject[] {
  const docs = [output.compositeResource, ...output.composedResources];
  if (options.includeFunctionResults) docs.push(...output.results);
  if (options.includeContext && output.context) docs.push(output.context);
  return docs;
}
