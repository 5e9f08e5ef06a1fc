// Calling a function as render does: over insecure gRPC at its Development
// target, waiting for the server to be ready, and looping on its requirements
// (Crossplane's FetchingFunctionRunner): after each call, if the requirements
// differ from the previous call's, resolve them and call again, at most five
// extra times. A Fatal result ends the loop at once.

import * as grpc from '@grpc/grpc-js';
import { Severity, type ResourceSelector, type RunFunctionRequest, type RunFunctionResponse } from '#lib';
import { FunctionRunnerServiceService } from '#lib/sdk';
import type { Selector } from './load.js';

/** Crossplane's MaxRequirementsIterations: the first call plus at most five more. */
export const MAX_REQUIREMENTS_ITERATIONS = 5;

export type Requirements = NonNullable<RunFunctionResponse['requirements']>;
export type Resources = RunFunctionRequest['requiredResources'][string];

export class RenderError extends Error {
  override name = 'RenderError';
  /** The requirements each step asked for before the render stopped, so a caller can satisfy them. */
  requirements: Record<string, Requirements> = {};
}

export interface FunctionConnection {
  run(req: RunFunctionRequest): Promise<RunFunctionResponse>;
  close(): void;
}

const RUN_FUNCTION = FunctionRunnerServiceService.runFunction;

/** Render's service config: wait for the server to be ready rather than failing while it starts. */
const WAIT_FOR_READY = JSON.stringify({ methodConfig: [{ name: [{}], waitForReady: true }] });

/** An insecure connection to a Development runtime target, as render dials one. */
export function connect(target: string, deadline: Date): FunctionConnection {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), { 'grpc.service_config': WAIT_FOR_READY });
  return {
    run(req) {
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          RUN_FUNCTION.path,
          RUN_FUNCTION.requestSerialize,
          RUN_FUNCTION.responseDeserialize,
          req,
          new grpc.Metadata(),
          { deadline },
          (error, rsp) => {
            if (error) reject(new Error(`${target}: ${error.details || error.message}`));
            else if (!rsp) reject(new Error(`${target}: empty response`));
            else resolve(rsp);
          },
        );
      });
    },
    close() {
      client.close();
    },
  };
}

export function toSelector(selector: ResourceSelector): Selector {
  const out: Selector = { apiVersion: selector.apiVersion, kind: selector.kind };
  if (selector.matchName !== undefined) out.matchName = selector.matchName;
  else if (selector.matchLabels !== undefined) out.matchLabels = { ...selector.matchLabels.labels };
  if (selector.namespace !== undefined) out.namespace = selector.namespace;
  return out;
}

function selectorsEqual(a: ResourceSelector | undefined, b: ResourceSelector | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.apiVersion !== b.apiVersion || a.kind !== b.kind || a.namespace !== b.namespace || a.matchName !== b.matchName) return false;
  if ((a.matchLabels === undefined) !== (b.matchLabels === undefined)) return false;
  return stringMapsEqual(a.matchLabels?.labels ?? {}, b.matchLabels?.labels ?? {});
}

function stringMapsEqual(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

function mapsEqual<T>(a: Record<string, T>, b: Record<string, T>, equal: (x: T, y: T) => boolean): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equal(a[key]!, b[key]!));
}

/** proto.Equal for Requirements: absent equals only absent; an empty message is not absent. */
export function requirementsEqual(a: Requirements | undefined, b: Requirements | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- compared on purpose: render still honours the old field
    mapsEqual(a.extraResources, b.extraResources, selectorsEqual) &&
    mapsEqual(a.resources, b.resources, selectorsEqual) &&
    mapsEqual(a.schemas, b.schemas, (x, y) => x?.apiVersion === y?.apiVersion && x?.kind === y?.kind)
  );
}

function isFatal(rsp: RunFunctionResponse): boolean {
  return rsp.results.some((result) => result.severity === Severity.SEVERITY_FATAL);
}

export interface LoopResult {
  rsp: RunFunctionResponse;
  /** How many times the function was called. */
  calls: number;
}

/**
 * Call until the requirements stop changing. Each new call carries exactly
 * the resources the latest requirements resolve to (plus the bootstrap ones
 * the step started with) and the context the function last returned.
 */
export async function runWithRequirements(
  call: (req: RunFunctionRequest) => Promise<RunFunctionResponse>,
  first: RunFunctionRequest,
  fetch: (selector: ResourceSelector) => Resources,
): Promise<LoopResult> {
  const bootstrap = { ...first.requiredResources };
  let req = first;
  let previous: Requirements | undefined;
  for (let i = 0; i <= MAX_REQUIREMENTS_ITERATIONS; i++) {
    const rsp = await call(req);
    if (isFatal(rsp)) return { rsp, calls: i + 1 };
    const requirements = rsp.requirements;
    if (requirementsEqual(requirements, previous)) return { rsp, calls: i + 1 };
    previous = requirements;
    const extraResources: Record<string, Resources> = {};
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- resolved on purpose: render still honours the old field
    for (const [name, selector] of Object.entries(requirements?.extraResources ?? {})) extraResources[name] = fetch(selector);
    const requiredResources: Record<string, Resources> = { ...bootstrap };
    for (const [name, selector] of Object.entries(requirements?.resources ?? {})) requiredResources[name] = fetch(selector);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- resolved on purpose: render still honours the old field
    req = { ...req, extraResources, requiredResources };
    if (rsp.context !== undefined) req.context = rsp.context;
    else delete req.context;
  }
  throw new Error(`requirements didn't stabilize after the maximum number of iterations (${MAX_REQUIREMENTS_ITERATIONS})`);
}
