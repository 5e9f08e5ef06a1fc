// Writing an Outcome into the response: composed resources and their
// readiness, the status the parent copies, the ArtifactReady condition,
// events, and the composite's readiness.

import {
  DIGEST,
  OBJECT_KIND,
  canDeleteRemote,
  desire,
  getObject,
  isReady,
  keepObservedObject,
  leaveToOwner,
  normalEvent,
  observedKeys,
  observedResource,
  MAX_STATUS_MESSAGE,
  REPORTS_ACCEPTED,
  REPORTS_REASON,
  ReportChecks,
  conditionOf,
  readCacheStateChecked,
  reportsCondition,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  toJson,
  validateMount,
  warningEvent,
  withoutDelete,
  withOwner,
  managementPoliciesOf,
  unreachableWords,
  type JsonObject,
  type Owner,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import type { Outcome, PreviousStatus } from './outcome.js';
import { SHARED_KEYS } from './owner.js';
import { CLUSTER_REACHABLE, REACHABLE_REASON } from './reach.js';

/** The condition the parent and a person read: is the artifact usable on this cluster? */
export const ARTIFACT_READY = 'ArtifactReady';

/**
 * This XR's status as last written: the latches live there. A digest that is
 * not a well-formed sha256 one was not written by this function; latching it
 * would pin pods to a reference no registry resolves, so it is not read (the
 * resolver's result is read again instead).
 */
export function previousStatus(status: JsonObject, label = 'its own last status'): PreviousStatus {
  const { state, problems } = readCacheStateChecked(status, label);
  const checks = new ReportChecks(label);
  const previous: PreviousStatus = { phase: state.phase };
  if (state.message !== undefined) previous.message = state.message;
  if (state.mount !== undefined) previous.mount = state.mount;
  if (state.accessModes !== undefined) previous.accessModes = state.accessModes;
  if (state.unreachable !== undefined) previous.unreachable = state.unreachable;
  const attemptsFor = checks.string(status, 'attemptsFor', MAX_STATUS_MESSAGE);
  if (attemptsFor !== undefined) {
    previous.attempts = { artifact: attemptsFor, count: state.attempts ?? 0 };
    const retryRequest = checks.string(status, 'retryRequest', MAX_STATUS_MESSAGE);
    if (retryRequest !== undefined) previous.attempts.retryRequest = retryRequest;
  }
  if (state.digest !== undefined && DIGEST.test(state.digest)) previous.digest = state.digest;
  if (state.artifactKind !== undefined) previous.artifactKind = state.artifactKind;
  const resolvedRef = checks.string(status, 'resolvedRef', MAX_STATUS_MESSAGE);
  if (resolvedRef !== undefined) previous.resolvedRef = resolvedRef;
  const staged = checks.string(status, 'staged', MAX_STATUS_MESSAGE);
  if (staged !== undefined) previous.staged = staged;
  if (state.progress !== undefined) previous.progress = state.progress;
  if (state.verified !== undefined) previous.verified = state.verified;
  if (state.commit !== undefined) previous.commit = state.commit;
  if (state.sizeGiB !== undefined) previous.sizeGiB = state.sizeGiB;
  const reverifiedFor = checks.string(status, 'reverifiedFor', MAX_STATUS_MESSAGE);
  if (reverifiedFor !== undefined) previous.reverifiedFor = reverifiedFor;
  const all = [...problems, ...checks.problems];
  if (all.length > 0) previous.problems = all;
  return previous;
}

/**
 * While the XR is handed to another parent (ORPHAN_ON_DELETE_ANNOTATION), every
 * Object it composes loses the Delete policy, so deleting the XR deletes no
 * remote object: the new parent's XR of the same name adopts them by name.
 */
export interface HandOver {
  orphanOnDelete: boolean;
  /** The cache every composed remote object is marked as belonging to (owner.ts). */
  owner?: Owner;
}

function orphaned(resource: JsonObject): JsonObject {
  if (resource['kind'] !== OBJECT_KIND) return resource;
  const spec = getObject(resource, 'spec') ?? {};
  return { ...resource, spec: { ...spec, managementPolicies: withoutDelete(managementPoliciesOf(resource)) } };
}

export function report(
  req: RunFunctionRequest,
  rsp: RunFunctionResponse,
  outcome: Outcome,
  previous: PreviousStatus,
  cluster: string,
  handOver: HandOver = { orphanOnDelete: false },
): void {
  // Composed resources: each ready only when its observed Object says so; a
  // key not composed this time is not in the response at all.
  const shape = handOver.orphanOnDelete ? orphaned : (resource: JsonObject): JsonObject => resource;
  if (outcome.keepObserved) {
    const othersOwn = new Set(outcome.othersOwn);
    for (const key of observedKeys(req)) {
      const observed = observedResource(req, key);
      if (!observed) continue;
      desire(rsp, key, othersOwn.has(key) ? leaveToOwner(observed) : shape(keepObservedObject(observed)), isReady(observed));
    }
  }
  // What is composed says whose it is (the workload namespace excepted: every cache of a team shares it).
  const { owner } = handOver;
  const mark = (key: string, resource: JsonObject): JsonObject =>
    owner === undefined || SHARED_KEYS.has(key) ? resource : withOwner(resource, owner);
  for (const [key, resource] of outcome.resources) desire(rsp, key, shape(mark(key, resource)), isReady(observedResource(req, key)));
  // Told only once it holds for every Object as observed: the parent deletes this XR on that word. After a
  // hand-over is called off, `false` until every Object that should delete its remote object can again.
  const observedCanDelete = (key: string): boolean => canDeleteRemote(observedResource(req, key));
  let orphanOnDelete: boolean | undefined;
  if (handOver.orphanOnDelete) orphanOnDelete = observedKeys(req).every((key) => !observedCanDelete(key));
  else if (
    Object.entries(rsp.desired?.resources ?? {}).some(
      ([key, d]) => canDeleteRemote(d.resource) && !observedCanDelete(key) && observedResource(req, key) !== undefined,
    )
  )
    orphanOnDelete = false;

  // The contract is published only when Ready, and only if it is inside the
  // allowed subset: a builder output that isn't is a bug, and fails loudly.
  let mount: JsonObject | undefined;
  if (outcome.phase === 'Ready') {
    const checked = validateMount(outcome.mount);
    if (!checked.ok) throw new Error(`the mount contract for ${outcome.artifact} fails validateMount: ${checked.problems.join('; ')}`);
    mount = toJson(checked.mount);
  }
  const { facts } = outcome;
  // The record only once it says something: an attempt made, or a retry request taken.
  const attempts = facts.attempts && (facts.attempts.count > 0 || facts.attempts.retryRequest !== undefined) ? facts.attempts : undefined;
  // Every field this function owns, set or unset, so none is left from an earlier answer.
  setCompositeStatus(rsp, {
    phase: outcome.phase,
    message: outcome.message,
    mount,
    accessModes: facts.accessModes,
    digest: facts.digest,
    artifactKind: facts.artifactKind,
    resolvedRef: facts.resolvedRef,
    staged: outcome.phase === 'Ready' ? (facts.staged ?? outcome.artifact) : undefined,
    attempts: attempts && attempts.count > 0 ? attempts.count : undefined,
    attemptsFor: attempts?.artifact,
    retryRequest: attempts?.retryRequest,
    progress: facts.progress ? toJson(facts.progress) : undefined,
    verified: facts.verified,
    commit: facts.commit,
    sizeGiB: facts.sizeGiB,
    reverifiedFor: facts.reverifiedFor,
    orphanOnDelete,
    unreachable: facts.unreachable ? toJson(facts.unreachable) : undefined,
  });
  setCondition(rsp, { type: ARTIFACT_READY, status: outcome.phase === 'Ready', reason: outcome.reason, message: outcome.message });

  // What the cluster wrote back (and this XR's own last status), as checked: named here when any of it was refused.
  const refused = [...(previous.problems ?? []), ...(outcome.refused ?? [])];
  const reports = reportsCondition(refused, `every report read from ${cluster} passed its checks`);
  setCondition(rsp, reports);
  // After ReportsAccepted: on an XR that has both already, Crossplane appends a new condition last.
  setCondition(
    rsp,
    facts.unreachable
      ? {
          type: CLUSTER_REACHABLE,
          status: false,
          reason: REACHABLE_REASON.unreachable,
          message: unreachableWords(cluster, facts.unreachable),
        }
      : {
          type: CLUSTER_REACHABLE,
          status: true,
          reason: REACHABLE_REASON.reachable,
          message: `no Object on ${cluster} reports a network failure`,
        },
  );
  const before = conditionOf(req.observed?.composite?.resource, REPORTS_ACCEPTED);
  if (refused.length > 0 && before?.message !== reports.message) warningEvent(rsp, REPORTS_REASON.refused, reports.message ?? '');

  // Events, each once: on the reconcile where what it says became true. The
  // last status says what was true before (a Warning repeated every minute
  // would bury the ones that matter).
  for (const warning of outcome.warnings) {
    if (previous.message !== warning.message) warningEvent(rsp, warning.reason, warning.message);
  }
  if (facts.unreachable && !previous.unreachable) warningEvent(rsp, 'ClusterUnreachable', unreachableWords(cluster, facts.unreachable));
  if (!facts.unreachable && previous.unreachable) {
    const since = previous.unreachable.since === undefined ? '' : ` (unreachable since ${previous.unreachable.since})`;
    normalEvent(rsp, 'ClusterReachable', `cluster ${cluster} answers again${since}`);
  }
  if (outcome.firstCompose !== undefined) normalEvent(rsp, 'Staging', outcome.firstCompose);
  for (const notice of outcome.notices ?? []) normalEvent(rsp, notice.reason, notice.message);
  if (outcome.phase === 'Ready' && previous.phase !== 'Ready') normalEvent(rsp, 'Staged', `${outcome.artifact} is ready on ${cluster}`);
  if (outcome.phase === 'Failed' && !(previous.phase === 'Failed' && previous.message === outcome.message))
    warningEvent(rsp, outcome.reason, outcome.message ?? `${outcome.artifact} failed on ${cluster}`);

  setCompositeReady(rsp, outcome.phase === 'Ready');
}
