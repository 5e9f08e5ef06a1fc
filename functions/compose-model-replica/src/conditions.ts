// What the replica reports: ModelAccepted (its engine workloads exist on the
// cluster) and ModelReady (they serve), upstream's reasons plus the cache's;
// the one-time events; and which composed resources are ready.

import {
  Ready,
  composedManifest,
  conditionOf,
  getString,
  isReady,
  normalEvent,
  remoteManifest,
  setCondition,
  warningEvent,
  type JsonObject,
  type RunFunctionResponse,
} from '#lib';
import { GROVE_KIND, GROVE_SCHEDULER } from './grove.js';
import { EPP_KEYS } from './names.js';

export const MODEL_ACCEPTED = 'ModelAccepted';
export const MODEL_READY = 'ModelReady';

export const REASON = {
  waitingForCluster: 'WaitingForCluster',
  waitingForModel: 'WaitingForModel',
  deploying: 'Deploying',
  accepted: 'Accepted',
  modelStarting: 'ModelStarting',
  serving: 'Serving',
  /** An object this replica would compose on its cluster belongs to another XR (docs/design/names.md). */
  ownedElsewhere: 'OwnedElsewhere',
} as const;

/** The observed composed resources by key. */
export type Observed = ReadonlyMap<string, JsonObject>;

/**
 * Keys whose readiness is a running workload (an engine, the endpoint
 * picker): ready only when provider-kubernetes reports the Object Ready, i.e.
 * its Available query holds. Everything else is ready once observed: existing
 * is all a Service or a template does.
 */
export function isWorkloadKey(key: string): boolean {
  return key.startsWith('model-serving-') || key === EPP_KEYS.deployment;
}

/** Mark each desired resource ready from its observed counterpart; never one not observed. */
export function markReady(rsp: RunFunctionResponse, observed: Observed): void {
  const desired = rsp.desired?.resources ?? {};
  for (const [key, resource] of Object.entries(desired)) {
    const seen = observed.get(key);
    if (seen === undefined) continue;
    if (!isWorkloadKey(key) || isReady(seen)) resource.ready = Ready.READY_TRUE;
  }
}

/** A not-ready state: both conditions False, each with a message a person can act on. */
export function notServing(
  rsp: RunFunctionResponse,
  accepted: { reason: string; message: string },
  ready: { reason: string; message: string },
): void {
  setCondition(rsp, { type: MODEL_ACCEPTED, status: false, ...accepted });
  setCondition(rsp, { type: MODEL_READY, status: false, ...ready });
}

/**
 * ModelAccepted once provider-kubernetes has observed every engine workload
 * on the cluster (its Object reports the remote manifest); ModelReady once
 * every one is Ready. All engines must be up for the replica to serve.
 */
export function workloadConditions(rsp: RunFunctionResponse, observed: Observed, workloadKeys: readonly string[], cluster: string): void {
  const unaccepted = workloadKeys.filter((key) => !hasRemoteManifest(observed.get(key)));
  const unready = workloadKeys.filter((key) => !isReady(observed.get(key)));
  if (unaccepted.length === 0) {
    setCondition(rsp, { type: MODEL_ACCEPTED, status: true, reason: REASON.accepted });
  } else {
    setCondition(rsp, {
      type: MODEL_ACCEPTED,
      status: false,
      reason: REASON.deploying,
      message: `waiting for provider-kubernetes to create ${unaccepted.join(', ')} on ${cluster}`,
    });
  }
  if (unready.length === 0) {
    setCondition(rsp, { type: MODEL_READY, status: true, reason: REASON.serving });
  } else if (unaccepted.length === 0) {
    setCondition(rsp, {
      type: MODEL_READY,
      status: false,
      reason: REASON.modelStarting,
      message: startingMessage(observed, unready, cluster),
    });
  } else {
    setCondition(rsp, {
      type: MODEL_READY,
      status: false,
      reason: REASON.waitingForModel,
      message: `the model is not serving yet: ${unaccepted.join(', ')} not yet created on ${cluster}`,
    });
  }
}

function hasRemoteManifest(object: JsonObject | undefined): boolean {
  const manifest = remoteManifest(object);
  return manifest !== undefined && Object.keys(manifest).length > 0;
}

/**
 * What a workload of a kind waits on beyond its own controller, said while it
 * is not Available: a Dynamo gang's pods ask for KAI's scheduler by name, and
 * on a cluster without KAI they stay Pending with nothing else to say so.
 */
const ALSO_WAITS_ON: ReadonlyMap<string, string> = new Map([
  [GROVE_KIND, `its pods ask for the scheduler ${GROVE_SCHEDULER}: KAI must run on the cluster`],
]);

function startingMessage(observed: Observed, unready: readonly string[], cluster: string): string {
  const details = unready.map((key) => {
    const object = observed.get(key);
    // provider-kubernetes often gives only a reason (Unavailable); a message, when there is one, says more.
    const ready = conditionOf(object, 'Ready');
    const kind = getString(composedManifest(object), 'kind');
    const why = [ready?.message ?? ready?.reason, kind === undefined ? undefined : ALSO_WAITS_ON.get(kind)].filter(Boolean);
    return why.length > 0 ? `${key} (${why.join('; ')})` : key;
  });
  return `waiting for ${details.join(', ')} to become Available on ${cluster}`;
}

/**
 * A Warning for a state a person must fix, once per state: not again while
 * the XR already reports it as ModelAccepted's reason and message (Crossplane
 * copies our conditions onto the XR), so a failure is one event, not one a
 * minute.
 */
export function warnOnce(rsp: RunFunctionResponse, xr: JsonObject, reason: string, message: string): void {
  const previous = conditionOf(xr, MODEL_ACCEPTED);
  if (previous?.reason === reason && previous.message === message) return;
  warningEvent(rsp, reason, message);
}

/** The first compose: no engine workload has been observed yet. */
export function composingEvent(
  rsp: RunFunctionResponse,
  observed: Observed,
  workloadKeys: readonly string[],
  image: string,
  cluster: string,
): void {
  if (workloadKeys.some((key) => observed.has(key))) return;
  normalEvent(rsp, 'Composing', `Composing ${image} on ${cluster}`);
}
