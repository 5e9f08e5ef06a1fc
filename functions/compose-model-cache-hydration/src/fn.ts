// compose-model-cache-hydration: stage one cache on one cluster and publish the
// mount contract that tells a pod how to read the model there.
//
// Top to bottom, as the spec reads: resolve the inputs (the XR, its cluster,
// the token Secret), pass the cluster gate, let the source decide, report.

import {
  KIND,
  MODELPLANE_API_VERSION,
  ORPHAN_ON_DELETE_ANNOTATION,
  cacheNames,
  composedManifest,
  getObject,
  getString,
  namespaceOwner,
  newResponse,
  observedKeys,
  observedResource,
  parseHydrationSettings,
  readComposite,
  remoteManifest,
  requireResources,
  requiredOne,
  scrubResponse,
  scrubSecret,
  secretForms,
  selectByName,
  settingsFor,
  unreachableOf,
  type HydrationSettings,
  type JsonObject,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { retryRequestOf, reverifyRequestOf } from './attempts.js';
import { stageClaim } from './claim.js';
import { clusterGate } from './gate.js';
import { HF_JOB_SCOPED, HF_KEYS, artifactOf, resolveToken, stageHuggingFace } from './huggingface.js';
import { latchWarning, placeCache, placeIn } from './namespace.js';
import { cacheOwner, conflictsOf, ownedElsewhere } from './owner.js';
import { OCI_JOB_SCOPED, stageOci } from './oci.js';
import { releaseWithJob, type JobScoped } from './release.js';
import { markUnreachable } from './reach.js';
import type { Outcome, PreviousStatus, Stage } from './outcome.js';
import { previousStatus, report } from './report.js';
import { parseSpec, type HydrationSpec } from './spec.js';

/** Requirement keys. */
export const REQUIRED = { cluster: 'cluster', authSecret: 'auth-secret' } as const;

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  // The platform team's settings first: a bad one is Fatal before anything is asked for.
  const settings = parseHydrationSettings(req.input);
  const spec = parseSpec(xr);

  // Everything this reconcile reads, asked for at once, so the second call is
  // the last; until all of it is fetched, answer with the requirements only.
  const authSecret = spec.source === 'HuggingFace' ? spec.authSecret : undefined;
  const selectors: Record<string, ResourceSelector> = {
    [REQUIRED.cluster]: selectByName(MODELPLANE_API_VERSION, KIND.InferenceCluster, spec.clusterName),
  };
  if (authSecret) selectors[REQUIRED.authSecret] = selectByName('v1', 'Secret', authSecret.name, authSecret.namespace);
  requireResources(rsp, selectors);
  const cluster = requiredOne(req, REQUIRED.cluster);
  const secret: ReturnType<typeof requiredOne> = authSecret ? requiredOne(req, REQUIRED.authSecret) : { fetched: true };
  if (!cluster.fetched || !secret.fetched) return rsp;

  // A hydration that takes a cluster over from the one it replaces reads that
  // one's status as its own last status until it has one (docs/design/fleet.md).
  const adopting = getString(xr.status, 'phase') === undefined && spec.inheritedStatus !== undefined;
  const previous =
    adopting && spec.inheritedStatus ? previousStatus(spec.inheritedStatus, 'spec.inheritedStatus') : previousStatus(xr.status);
  const outcome = decide(
    req,
    {
      namespace: xr.namespace,
      retryRequest: retryRequestOf(xr.annotations),
      reverifyRequest: reverifyRequestOf(xr.annotations),
      adopting,
    },
    settings,
    spec,
    cluster.item,
    secret.item,
    previous,
  );
  if (adopting) delete outcome.firstCompose;
  // Whatever the source decided from the Objects as last observed, a cluster they can't reach says so.
  const unreachable = unreachableOf(
    observedKeys(req).map((key) => observedResource(req, key)),
    previous.unreachable?.since,
  );
  if (unreachable) markUnreachable(outcome, unreachable, spec.clusterName);
  // The token, in any form a pod or a cluster could have written it into a report or a Job's condition, is cut
  // out of every message before they are compared with the last status and written; then out of the whole
  // answer but the workload Secret's data, where it is copied on purpose.
  const token = spec.source === 'HuggingFace' ? resolveToken(spec.authSecret, secret.item) : undefined;
  const forms = tokenForms(req, token?.kind === 'present' ? token.value : undefined);
  if (forms.length > 0) withoutSecret(outcome, forms);
  report(req, rsp, outcome, previous, spec.clusterName, {
    orphanOnDelete: xr.annotations[ORPHAN_ON_DELETE_ANNOTATION] === 'true',
    owner: cacheOwner(xr.namespace, spec.cacheName),
  });
  return scrubResponse(rsp, forms);
}

/**
 * Every form of every token this reconcile knows: the one the auth Secret
 * holds now, and what the workload Secret this XR composed holds (as desired
 * and as observed). A Job that ran with a token still reports it after the
 * spec stops naming one (authSecret removed, the Secret rotated), so the
 * workload Secret's value is cut too.
 */
function tokenForms(req: RunFunctionRequest, current: string | undefined): string[] {
  const values = new Set<string>();
  if (current !== undefined) values.add(current);
  const workload = observedResource(req, HF_KEYS.auth);
  for (const manifest of [composedManifest(workload), remoteManifest(workload)]) {
    if (getString(manifest, 'kind') !== 'Secret') continue;
    for (const value of Object.values(getObject(manifest, 'data') ?? {})) if (typeof value === 'string') values.add(value);
  }
  return [...new Set([...values].flatMap((value) => secretForms(value)))].sort((a, b) => b.length - a.length);
}

/** The outcome's words with every form of the secret cut out. */
function withoutSecret(outcome: Outcome, forms: readonly string[]): void {
  if (outcome.message !== undefined) outcome.message = scrubSecret(outcome.message, forms);
  if (outcome.firstCompose !== undefined) outcome.firstCompose = scrubSecret(outcome.firstCompose, forms);
  for (const entry of [...outcome.warnings, ...(outcome.notices ?? [])]) entry.message = scrubSecret(entry.message, forms);
}

function decide(
  req: RunFunctionRequest,
  xr: Pick<Stage, 'namespace' | 'retryRequest' | 'reverifyRequest' | 'adopting'>,
  settings: HydrationSettings,
  spec: HydrationSpec,
  cluster: JsonObject | undefined,
  secret: JsonObject | undefined,
  previous: PreviousStatus,
): Outcome {
  const gate = clusterGate(spec.clusterName, cluster, previous, artifactName(spec));
  if (!gate.open) return gate.outcome;
  const observed = (key: string): JsonObject | undefined => observedResource(req, key);
  // Nothing is written over another XR's object: a conflict holds the cluster, naming the owner (owner.ts).
  const conflicts = conflictsOf(observedKeys(req), observed, cacheOwner(xr.namespace, spec.cacheName));
  if (conflicts.length > 0) return ownedElsewhere(conflicts, gate.cluster.name, artifactName(spec));
  const where = placeCache(settings.workloadNamespace, xr.namespace, gate.cluster.name, observed);
  const stage: Stage = {
    cacheName: spec.cacheName,
    names: cacheNames(xr.namespace, spec.cacheName),
    namespace: xr.namespace,
    cluster: gate.cluster,
    observed,
    previous,
    settings: settingsFor(settings, gate.cluster.labels),
    workloadNamespace: where.namespace,
    adopting: xr.adopting,
  };
  if (xr.retryRequest !== undefined) stage.retryRequest = xr.retryRequest;
  if (xr.reverifyRequest !== undefined) stage.reverifyRequest = xr.reverifyRequest;
  const outcome = stageSource(stage, spec, secret);
  // A finished Job's access and token go with the Job, not through the control plane (release.ts).
  releaseWithJob(outcome, observed, jobScoped(spec));
  placeIn(outcome, where, namespaceOwner(settings.workloadNamespace, xr.namespace, gate.cluster.name), gate.cluster.providerConfigName);
  const latched = latchWarning(where, outcome.artifact);
  if (latched) outcome.warnings.push(latched);
  return outcome;
}

function stageSource(stage: Stage, spec: HydrationSpec, secret: JsonObject | undefined): Outcome {
  switch (spec.source) {
    case 'HuggingFace':
      return stageHuggingFace(stage, spec.huggingFace, resolveToken(spec.authSecret, secret));
    case 'OCI':
      return stageOci(stage, spec.oci);
    case 'PersistentVolumeClaim':
      return stageClaim(stage, spec.persistentVolumeClaim);
  }
}

/** What each source's Jobs leave to the Job once finished. */
function jobScoped(spec: HydrationSpec): JobScoped {
  switch (spec.source) {
    case 'HuggingFace':
      return HF_JOB_SCOPED;
    case 'OCI':
      return OCI_JOB_SCOPED;
    case 'PersistentVolumeClaim':
      return { jobs: [], scoped: [] };
  }
}

/** What this cluster is to serve, in the words of its source. */
function artifactName(spec: HydrationSpec): string {
  switch (spec.source) {
    case 'HuggingFace':
      return artifactOf(spec.huggingFace);
    case 'OCI':
      return spec.oci.ref;
    case 'PersistentVolumeClaim':
      return `claim ${spec.persistentVolumeClaim.claimName}`;
  }
}
