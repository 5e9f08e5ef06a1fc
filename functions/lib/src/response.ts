// Writing a RunFunctionResponse. Every helper builds its piece whole and
// replaces what was there: the SDK's merge helpers append to arrays, which
// would duplicate volumes, env and conditions on every call.

import { RESPONSE_TTL_SECONDS } from './constants.js';
import { asObject, keyedRecord, prune, type JsonObject } from './json.js';
import { Ready, Severity, Status, type ResourceSelector, type RunFunctionRequest, type RunFunctionResponse } from './protocol.js';

type DesiredResource = NonNullable<RunFunctionResponse['desired']>['resources'][string];

/**
 * A response that echoes the request's tag, carries the TTL, and keeps the
 * desired state and context earlier pipeline steps produced.
 */
export function newResponse(req: RunFunctionRequest): RunFunctionResponse {
  const desired = req.desired;
  const rsp: RunFunctionResponse = {
    meta: { tag: req.meta?.tag ?? '', ttl: { seconds: RESPONSE_TTL_SECONDS, nanos: 0 } },
    desired: {
      composite: desired?.composite ? { ...desired.composite, connectionDetails: { ...desired.composite.connectionDetails } } : undefined,
      resources: Object.assign(keyedRecord<DesiredResource>(), desired?.resources),
    },
    results: [],
    requirements: undefined,
    conditions: [],
  };
  if (req.context !== undefined) rsp.context = req.context;
  return rsp;
}

/**
 * Declare every required resource this reconcile needs at once, so the second
 * call is the last. None at all: no requirements message, since Crossplane
 * calls a function again whenever the requirements it returns differ from
 * the previous call's, and an empty message differs from none.
 */
export function requireResources(rsp: RunFunctionResponse, selectors: Record<string, ResourceSelector>): void {
  if (Object.keys(selectors).length === 0) {
    rsp.requirements = undefined;
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the generated type requires the field; it stays empty
  rsp.requirements = { extraResources: {}, resources: { ...selectors }, schemas: {} };
}

/** Put a composed resource into desired state; `ready` only when its observed counterpart says so. */
export function desire(rsp: RunFunctionResponse, key: string, resource: JsonObject, ready = false): void {
  rsp.desired ??= { composite: undefined, resources: keyedRecord() };
  rsp.desired.resources[key] = {
    resource: prune(resource),
    connectionDetails: {},
    ready: ready ? Ready.READY_TRUE : Ready.READY_UNSPECIFIED,
  };
}

export function isDesired(rsp: RunFunctionResponse, key: string): boolean {
  return Object.hasOwn(rsp.desired?.resources ?? {}, key);
}

function desiredComposite(rsp: RunFunctionResponse): JsonObject {
  rsp.desired ??= { composite: undefined, resources: {} };
  rsp.desired.composite ??= { resource: {}, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED };
  rsp.desired.composite.resource ??= {};
  return rsp.desired.composite.resource;
}

/**
 * Write the status fields this function owns, each replaced whole. Fields set
 * to undefined are removed; nothing null is ever written.
 */
export function setCompositeStatus(rsp: RunFunctionResponse, fields: JsonObject): void {
  const composite = desiredComposite(rsp);
  const status: JsonObject = {};
  for (const [key, value] of Object.entries(asObject(composite['status']) ?? {})) {
    if (!Object.hasOwn(fields, key)) status[key] = value;
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) status[key] = prune(value);
  }
  composite['status'] = status;
}

/** Tell Crossplane whether the XR itself is ready (it also needs every composed resource ready). */
export function setCompositeReady(rsp: RunFunctionResponse, ready: boolean): void {
  desiredComposite(rsp);
  rsp.desired!.composite!.ready = ready ? Ready.READY_TRUE : Ready.READY_FALSE;
}

export interface ConditionSpec {
  type: string;
  status: boolean;
  reason: string;
  /** Every non-ready state carries one a person can act on. */
  message?: string;
}

/** Set a condition on the XR, replacing any earlier one of the same type in this response. */
export function setCondition(rsp: RunFunctionResponse, condition: ConditionSpec): void {
  rsp.conditions = rsp.conditions.filter((c) => c.type !== condition.type);
  rsp.conditions.push({
    type: condition.type,
    status: condition.status ? Status.STATUS_CONDITION_TRUE : Status.STATUS_CONDITION_FALSE,
    reason: condition.reason,
    ...(condition.message !== undefined && condition.message !== '' ? { message: condition.message } : {}),
  });
}

/** A Normal event on the XR. */
export function normalEvent(rsp: RunFunctionResponse, reason: string, message: string): void {
  rsp.results.push({ severity: Severity.SEVERITY_NORMAL, reason, message });
}

/** A Warning event on the XR. */
export function warningEvent(rsp: RunFunctionResponse, reason: string, message: string): void {
  rsp.results.push({ severity: Severity.SEVERITY_WARNING, reason, message });
}

/**
 * Stop the pipeline: Crossplane applies nothing from this call, so every
 * composed resource stays as it is, and shows the message on the XR.
 */
export function fatalResult(rsp: RunFunctionResponse, message: string): void {
  rsp.results.push({ severity: Severity.SEVERITY_FATAL, message });
}
