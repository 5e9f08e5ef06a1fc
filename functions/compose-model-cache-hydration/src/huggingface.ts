// HuggingFace: stage a repo on a ReadWriteMany PVC in the hub layout with a
// Job, then publish the PVC. Names, labels, wrappers and policies are
// upstream's (an upstream PVC is adopted by name).

import { createHash } from 'node:crypto';
import type { V1EnvVar, V1Job, V1PersistentVolumeClaim, V1Secret } from '@kubernetes/client-node';
import {
  HF_HUB_CACHE_ENV,
  HYDRATION_IMAGE,
  HYDRATION_MOUNT_PATH,
  JOB_BACKOFF_LIMIT,
  JOB_POLICIES,
  READY_QUERY,
  REMOTE_NAMESPACE,
  celReadiness,
  getObject,
  getString,
  huggingFaceMount,
  remoteObject,
  remoteStatus,
  toJson,
  type JsonObject,
  type Phase,
} from '#lib';
import { attemptNote, failureMessage, jobTtlSeconds, planJob, settled, type JobRun } from './attempts.js';
import { held } from './gate.js';
import { jobMetadata, podMetadata } from './jobs.js';
import { podLabels, remoteLabels } from './labels.js';
import type { Outcome, Stage } from './outcome.js';
import { shellQuote } from './shell.js';
import type { AuthSecretRef, HuggingFaceSource } from './spec.js';

/** Desired keys (the child stages one cluster, so the cluster is not in them). */
export const HF_KEYS = { pvc: 'pvc', auth: 'auth', job: 'hydrate' } as const;

/** The hydration Job's volume and container names (upstream's). */
const ARTIFACT_VOLUME = 'artifact';
const CONTAINER = 'hydrate';

/**
 * The completion marker of a hub-layout download, named for what was
 * downloaded: upstream's flat-layout `.modelplane-hydrated` (or another repo's
 * marker, after the cache's repo changed) never passes for this download.
 */
export function hubMarker(artifact: string): string {
  const digest = createHash('sha256').update(artifact, 'utf8').digest('hex').slice(0, 12);
  return `${HYDRATION_MOUNT_PATH}/.modelplane-hub-hydrated-${digest}`;
}

/** What a volume holds: the repo, and the revision when one is pinned. */
export function artifactOf(source: HuggingFaceSource): string {
  return source.revision === undefined ? source.repo : `${source.repo}@${source.revision}`;
}

/**
 * The download, resumable: skip when this artifact's marker is there; touch it
 * only after `hf download` succeeded (`set -e`), so an interrupted download
 * runs again (and resumes) rather than serving truncated weights. No
 * --local-dir: HF_HUB_CACHE makes it the hub layout, which `--model=<repo>`
 * reads whether cached or not. Every user string is one quoted word.
 */
export function hydrationCommand(source: HuggingFaceSource): string {
  const marker = hubMarker(artifactOf(source));
  const download = ['hf', 'download', shellQuote(source.repo)];
  if (source.revision !== undefined) download.push('--revision', shellQuote(source.revision));
  return [
    'set -e',
    `if [ -f ${marker} ]; then echo 'already hydrated, skipping'; exit 0; fi`,
    'pip install --quiet huggingface_hub',
    download.join(' '),
    `touch ${marker}`,
  ].join('; ');
}

export type Token =
  | { kind: 'none' }
  | { kind: 'present'; key: string; value: string }
  /** authSecret is set, and the Secret or its key is missing, or the value is empty. */
  | { kind: 'missing'; message: string };

/** The token, read from the control-plane Secret. The value is base64, copied verbatim and never shown. */
export function resolveToken(ref: AuthSecretRef | undefined, secret: JsonObject | undefined): Token {
  if (!ref) return { kind: 'none' };
  const value = getString(getObject(secret, 'data'), ref.key);
  if (value !== undefined) return { kind: 'present', key: ref.key, value };
  return { kind: 'missing', message: `authSecret ${ref.namespace}/${ref.name} is missing or has no key '${ref.key}'` };
}

export function stageHuggingFace(stage: Stage, source: HuggingFaceSource, token: Token): Outcome {
  const { cluster, names } = stage;
  const artifact = artifactOf(source);
  const storageClassName = cluster.storageClassName;
  if (storageClassName === undefined) {
    return held(stage.previous, 'NoStorageClass', `cluster ${cluster.name} reports no ReadWriteMany StorageClass`, artifact);
  }

  const claim = remoteStatus(stage.observed(HF_KEYS.pvc));
  const bound = claim['phase'] === 'Bound';
  const jobs = planJob({ observed: stage.observed(HF_KEYS.job), artifact, previous: stage.previous, request: stage.retryRequest });
  const { job } = jobs;
  // A failed attempt with more to come waits for its token like any other; spent attempts stay Failed.
  const failure = jobs.failure && (jobs.failure.final || token.kind !== 'missing') ? jobs.failure : undefined;
  // The Ready latch: the Job's TTL removes it after it completes, and the
  // volume still holds the weights, so this XR's own Ready status stands in
  // for it, as long as it is Ready for this very artifact.
  const latched = stage.previous.phase === 'Ready' && stage.previous.staged === artifact;

  let phase: Phase;
  if (failure) phase = 'Failed';
  else if (bound && (job.state === 'complete' || latched)) phase = 'Ready';
  else phase = bound ? 'Hydrating' : 'Pending';

  const labels = remoteLabels(stage);
  const resources: Outcome['resources'] = [
    [
      HF_KEYS.pvc,
      remoteObject({
        providerConfig: cluster.providerConfigName,
        manifest: pvcManifest(names.pvc, labels, storageClassName, source.sizeGiB),
        readiness: celReadiness(READY_QUERY.pvcBound),
      }),
    ],
  ];
  const outcome: Outcome = { phase, reason: 'Staged', facts: { attempts: jobs.record }, resources, warnings: [], artifact };
  if (jobs.notices.length > 0) outcome.notices = jobs.notices;
  if (stage.observed(HF_KEYS.pvc) === undefined) outcome.firstCompose = `Staging ${artifact} on ${cluster.name}`;

  if (phase === 'Ready') {
    // The Job and the token Secret are no longer desired: the Job is orphaned
    // (no Delete policy) and its TTL removes it; the Secret is deleted, so the
    // token leaves the cluster once it has done its work.
    outcome.mount = huggingFaceMount({ claimName: names.pvc, repo: source.repo, revision: source.revision });
    outcome.facts.staged = artifact;
    outcome.facts.attempts = settled(jobs.record, artifact, stage.retryRequest);
    return outcome;
  }

  const where = `on ${cluster.name}`;
  if (failure) {
    // Failed, latched: the Job stays desired only while another attempt follows it.
    outcome.reason = 'HydrationFailed';
    outcome.message = failureMessage(`hydration Job ${names.job} ${where}`, failure);
    if (jobs.run) resources.push(...jobObjects(stage, source, labels, token, jobs.run));
    return outcome;
  }

  if (token.kind === 'missing') {
    // Keep the PVC (a rotated-away token must not drop staged weights); run no
    // Job without its token. The claim alone says how far staging got, and no attempt is made.
    const before = stage.previous.attempts;
    outcome.facts.attempts = before?.artifact === artifact ? before : { artifact, count: 0 };
    outcome.reason = 'AuthSecretMissing';
    outcome.message = token.message;
    outcome.warnings.push({ reason: 'AuthSecretMissing', message: token.message });
    return outcome;
  }

  resources.push(...jobObjects(stage, source, labels, token, jobs.run ?? { attempt: 1 }));
  outcome.reason = phase === 'Hydrating' ? 'Hydrating' : 'Pending';
  if (job.state === 'stale') {
    outcome.message = `waiting for the hydration Job ${names.job} ${where}, ${job.left}, to finish and be removed (${job.removal}) before staging ${artifact}`;
  } else if (phase === 'Hydrating') {
    outcome.message = `downloading ${artifact} to PVC ${names.pvc} ${where}${attemptNote(jobs.record.count)}`;
  } else {
    const claimPhase = typeof claim['phase'] === 'string' ? claim['phase'] : 'not created yet';
    outcome.message = `waiting for PVC ${names.pvc} ${where} to bind (it is ${claimPhase})`;
  }
  return outcome;
}

/** The token Secret (when there is a token) and the hydration Job of one attempt. */
function jobObjects(
  stage: Stage,
  source: HuggingFaceSource,
  labels: Record<string, string>,
  token: Token,
  run: JobRun,
): Outcome['resources'] {
  const providerConfig = stage.cluster.providerConfigName;
  const out: Outcome['resources'] = [];
  if (token.kind === 'present') {
    out.push([HF_KEYS.auth, remoteObject({ providerConfig, manifest: secretManifest(stage.names.authSecret, labels, token) })]);
  }
  out.push([
    HF_KEYS.job,
    remoteObject({
      providerConfig,
      manifest: jobManifest(stage, source, labels, token, run),
      readiness: celReadiness(READY_QUERY.jobComplete),
      managementPolicies: JOB_POLICIES,
    }),
  ]);
  return out;
}

function pvcManifest(name: string, labels: Record<string, string>, storageClassName: string, sizeGiB: number): JsonObject {
  const pvc: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: REMOTE_NAMESPACE, labels },
    spec: { accessModes: ['ReadWriteMany'], storageClassName, resources: { requests: { storage: `${sizeGiB}Gi` } } },
  };
  return toJson(pvc);
}

/** No `type`, as upstream: an Opaque Secret holding the token exactly as the control plane holds it. */
function secretManifest(name: string, labels: Record<string, string>, token: { key: string; value: string }): JsonObject {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: REMOTE_NAMESPACE, labels },
    data: { [token.key]: token.value },
  };
  return toJson(secret);
}

function jobManifest(stage: Stage, source: HuggingFaceSource, labels: Record<string, string>, token: Token, run: JobRun): JsonObject {
  const env: V1EnvVar[] = [{ name: HF_HUB_CACHE_ENV, value: HYDRATION_MOUNT_PATH }];
  if (token.kind === 'present') {
    env.push({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: stage.names.authSecret, key: token.key } } });
  }
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: jobMetadata(stage.names.job, REMOTE_NAMESPACE, labels, artifactOf(source), run.attempt),
    spec: {
      backoffLimit: JOB_BACKOFF_LIMIT,
      ttlSecondsAfterFinished: jobTtlSeconds(run.attempt),
      template: {
        metadata: podMetadata(podLabels(stage), run.round),
        spec: {
          restartPolicy: 'OnFailure',
          containers: [
            {
              name: CONTAINER,
              image: HYDRATION_IMAGE,
              command: ['/bin/sh', '-c', hydrationCommand(source)],
              env,
              volumeMounts: [{ name: ARTIFACT_VOLUME, mountPath: HYDRATION_MOUNT_PATH }],
            },
          ],
          volumes: [{ name: ARTIFACT_VOLUME, persistentVolumeClaim: { claimName: stage.names.pvc } }],
        },
      },
    },
  };
  return toJson(job);
}
