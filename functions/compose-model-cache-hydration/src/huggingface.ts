// HuggingFace: stage a repo on a ReadWriteMany PVC in the hub layout with a
// Job, then publish the PVC. Names, labels, wrappers and policies are
// upstream's (an upstream PVC is adopted by name).

import { createHash } from 'node:crypto';
import type { V1EnvVar, V1Job, V1PersistentVolumeClaim, V1Secret } from '@kubernetes/client-node';
import { jobAccess } from './access.js';
import {
  HF_HUB_CACHE_ENV,
  HYDRATION_MOUNT_PATH,
  JOB_POLICIES,
  MAX_SIZE_GIB,
  REPORTS_ACCEPTED,
  READY_QUERY,
  RETRY_ANNOTATION,
  asArray,
  celReadiness,
  composedManifest,
  getIn,
  getObject,
  getString,
  huggingFaceMount,
  keepObservedObject,
  remoteObject,
  remoteStatus,
  scrubSecret,
  secretForms,
  toJson,
  type CacheNames,
  type JsonObject,
  type Phase,
  type ReportProblem,
} from '#lib';
import { attemptNote, failureMessage, jobTtlSeconds, planJob, settled, type JobRun } from './attempts.js';
import { held } from './gate.js';
import { applyPodSettings, caMounts, caVolumes, containerResources, networkEnv } from './job-settings.js';
import { jobMetadata, jobState, podMetadata, type JobState } from './jobs.js';
import { podLabels, remoteLabels } from './labels.js';
import type { Outcome, Stage } from './outcome.js';
import type { JobScoped } from './release.js';
import { HYDRATE_SCRIPT } from './hydrate-script.js';
import { remoteNotReported } from './adoption.js';
import { againstClaim, bytes, describeProgress, duration, progressOf, readReport, type ProgressReport } from './progress.js';
import { shellQuote } from './shell.js';
import type { AuthSecretRef, HuggingFaceSource } from './spec.js';

/**
 * Desired keys (the child stages one cluster, so the cluster is not in them).
 * The Job reports its progress on itself with its own ServiceAccount, whose
 * Role can get and patch that one Job by name (the OCI resolver's pattern).
 */
export const HF_KEYS = {
  pvc: 'pvc',
  auth: 'auth',
  job: 'hydrate',
  sizer: 'size',
  account: 'hydrate-account',
  role: 'hydrate-role',
  binding: 'hydrate-binding',
} as const;

/** Once the download (or sizing) Job has finished, its access and the token go with it (release.ts). */
export const HF_JOB_SCOPED: JobScoped = {
  jobs: [HF_KEYS.job, HF_KEYS.sizer],
  scoped: [HF_KEYS.account, HF_KEYS.role, HF_KEYS.binding, HF_KEYS.auth],
};

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

/** The huggingface_hub the Job installs (pip on): the version the script is tested with (`make test`, .venv-hf). */
export const HUGGINGFACE_HUB_VERSION = '1.33.0';

/**
 * How the Job gets huggingface_hub and the script: `Image`, the Modelplane
 * hydration image carries both (no pip, the script at IMAGE_SCRIPT); `Inline`,
 * a plain Python image: the script goes in the Job's command, and pip installs
 * huggingface_hub (pinned, from `indexUrl` when set) unless `pip` is false.
 */
export interface HubInstall {
  pip: boolean;
  indexUrl?: string;
  script?: 'Image' | 'Inline';
}

/** Where the Modelplane hydration image (images/hydration/) carries hydrate.py. */
export const IMAGE_SCRIPT = '/opt/modelplane/hydrate.py';

/** The heredoc delimiter the script is passed under; the script never holds this line (a test checks). */
export const SCRIPT_DELIMITER = 'MODELPLANE_HYDRATE_PY';

/**
 * What a volume holds: the repo, the revision when one is pinned, and the
 * file selection when there is one. A changed selection is a new artifact, as
 * a changed revision is (its own marker, a fresh Job). The patterns are
 * sorted and made unique (their order selects nothing) and written as JSON
 * lists, so two different selections never read alike.
 */
export function artifactOf(source: HuggingFaceSource): string {
  let artifact = source.revision === undefined ? source.repo : `${source.repo}@${source.revision}`;
  const include = normalPatterns(source.include);
  const exclude = normalPatterns(source.exclude);
  if (include.length > 0) artifact += ` include=${JSON.stringify(include)}`;
  if (exclude.length > 0) artifact += ` exclude=${JSON.stringify(exclude)}`;
  return artifact;
}

function normalPatterns(patterns: readonly string[] | undefined): string[] {
  return [...new Set(patterns ?? [])].sort();
}

/**
 * The download: the script (hydrate.py, embedded at build time) on standard
 * input, its arguments each one quoted word. It skips when this artifact's
 * marker is there (before installing anything), stages the selected files
 * pinned to the commit the revision resolves to, verifies every one against
 * the hub, and writes the marker only then, so an interrupted download runs
 * again (and resumes) rather than serving truncated or corrupted weights. No
 * --local-dir: HF_HUB_CACHE makes it the hub layout, which `--model=<repo>`
 * reads whether cached or not. `sizeGiB` (when given) is what the selected
 * files must fit in: the script refuses before downloading anything.
 */
/** verifyOnly: check the staged copy against `revision` (the commit it was staged at); sizeOnly: report the claim it needs. */
export interface ScriptOptions {
  verifyOnly?: boolean;
  sizeOnly?: boolean;
  revision?: string;
}

/** The script's arguments, each one word (unquoted: the caller quotes them for a shell, or passes them as they are). */
function scriptArgs(source: HuggingFaceSource, options: ScriptOptions): string[] {
  const args = [source.repo];
  const revision = options.revision ?? source.revision;
  if (revision !== undefined) args.push(`--revision=${revision}`);
  for (const pattern of normalPatterns(source.include)) args.push(`--include=${pattern}`);
  for (const pattern of normalPatterns(source.exclude)) args.push(`--exclude=${pattern}`);
  if (source.sizeGiB !== undefined) args.push(`--size-gib=${source.sizeGiB}`);
  if (options.sizeOnly) args.push('--size-only');
  else args.push(`--marker=${hubMarker(artifactOf(source))}`);
  if (options.verifyOnly) args.push('--verify-only');
  return args;
}

/**
 * The Job's command: with the Modelplane hydration image, its own script,
 * every argument one word and no shell (a few hundred bytes, where the script
 * inlined is 17 kB, and twice that again in what provider-kubernetes mirrors
 * back); with a plain Python image, the script inlined (hydrationCommand).
 */
export function jobCommand(source: HuggingFaceSource, install: HubInstall, options: ScriptOptions = {}): string[] {
  if (install.script === 'Image') return ['python3', IMAGE_SCRIPT, ...scriptArgs(source, options)];
  return ['/bin/sh', '-c', hydrationCommand(source, install, options)];
}

export function hydrationCommand(source: HuggingFaceSource, install: HubInstall = { pip: true }, options: ScriptOptions = {}): string {
  const marker = hubMarker(artifactOf(source));
  const once = options.verifyOnly === true || options.sizeOnly === true;
  // The first argument is the repo; every one quoted as one shell word.
  const args = scriptArgs(source, options).map((arg, i) => (i === 0 ? shellQuote(arg) : quoteOption(arg)));
  const lines = ['set -e'];
  if (install.pip) {
    const index = install.indexUrl === undefined ? '' : indexOptions(install.indexUrl);
    const pip = `pip install --quiet --disable-pip-version-check${index} 'huggingface_hub==${HUGGINGFACE_HUB_VERSION}'`;
    lines.push(once ? pip : `if [ ! -f ${marker} ]; then ${pip}; fi`);
  }
  lines.push(`exec python3 - ${args.join(' ')} <<'${SCRIPT_DELIMITER}'`, HYDRATE_SCRIPT.trimEnd(), SCRIPT_DELIMITER);
  return `${lines.join('\n')}\n`;
}

/**
 * pip's options for the index. pip ignores a plain-http index on any host but
 * the loopback (it only warns, then finds no distribution), so an http index
 * the platform named is also its --trusted-host (host[:port]): naming it is
 * trusting it. An https index is never marked so, which would turn off its
 * certificate check. Each value one quoted shell word.
 */
function indexOptions(indexUrl: string): string {
  const options = ` --index-url ${shellQuote(indexUrl)}`;
  if (!/^http:\/\//i.test(indexUrl) || !URL.canParse(indexUrl)) return options;
  return `${options} --trusted-host ${shellQuote(new URL(indexUrl).host)}`;
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
  // What is staged stays; the hint is for a cache upgraded from upstream v0.3.1, which downloads once more.
  return {
    kind: 'missing',
    message: `authSecret ${ref.namespace}/${ref.name} is missing or has no key '${ref.key}': nothing is downloaded without it, staged weights are kept (an upgrade from upstream v0.3.1 downloads once more: docs/migration.md)`,
  };
}

export function stageHuggingFace(stage: Stage, source: HuggingFaceSource, token: Token): Outcome {
  const { cluster, names } = stage;
  const artifact = artifactOf(source);
  const storageClassName = cluster.storageClassName;
  if (storageClassName === undefined) {
    return held(stage.previous, 'NoStorageClass', `cluster ${cluster.name} reports no ReadWriteMany StorageClass`, artifact);
  }

  const sizing = claimSize(stage, source, artifact);
  if (sizing.sizeGiB === undefined) return sizingOutcome(stage, source, artifact, token, sizing);
  const sizeGiB = sizing.sizeGiB;
  const refused = [...sizing.problems];

  // The Ready latch: the Job's TTL removes it after it completes, and the
  // volume still holds the weights, so this XR's own Ready status stands in
  // for it, as long as it is Ready for this very artifact.
  const latched = stage.previous.phase === 'Ready' && stage.previous.staged === artifact;
  const claim = remoteStatus(stage.observed(HF_KEYS.pvc));
  // A latched claim not reported yet (adopted from the XR this one replaces) is the claim it was.
  const bound = claim['phase'] === 'Bound' || (latched && remoteNotReported(stage, HF_KEYS.pvc));
  const jobs = planJob({ observed: stage.observed(HF_KEYS.job), artifact, previous: stage.previous, request: stage.retryRequest });
  const { job } = jobs;
  // The download's own report, from this artifact's Job (a stale Job's report is another artifact's), checked
  // on its own and against the claim it stages to. One that fails is no report: the last good values stand.
  const label = `the progress report on Job ${names.job}`;
  const read =
    job.state === 'running' || job.state === 'complete' || job.state === 'failed'
      ? againstClaim(readReport(stage.observed(HF_KEYS.job), label), sizeGiB, label)
      : undefined;
  if (read) refused.push(...read.problems);
  const report = withoutToken(read?.report, token);
  // The last good progress of this very artifact, while a refused report stands in for nothing.
  const lastGood =
    read !== undefined && read.problems.length > 0 && stage.previous.attempts?.artifact === artifact ? stage.previous : undefined;
  // A failed attempt with more to come waits for its token like any other; spent attempts stay Failed.
  let failure = jobs.failure && (jobs.failure.final || token.kind !== 'missing') ? jobs.failure : undefined;
  // The script says which file failed and why; the Job's condition only that it gave up.
  if (failure && !failure.latched && report?.state === 'Failed') failure = { ...failure, why: `${report.message ?? ''} (${failure.why})` };
  // A re-verification: asked of a Ready copy, or failed and latched until a retry is asked.
  const reverify = stage.reverifyRequest;
  if (reverify !== undefined && bound && !failure) {
    const previous = stage.previous;
    const failedCheck =
      previous.phase === 'Failed' &&
      previous.reverifiedFor === reverify &&
      previous.attempts?.artifact === artifact &&
      previous.attempts.retryRequest === stage.retryRequest;
    if (failedCheck || (latched && previous.reverifiedFor !== reverify)) {
      return reverifyOutcome(stage, source, artifact, token, { reverify, sizeGiB, latchedFailure: failedCheck });
    }
  }

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
        manifest: pvcManifest(stage, labels, storageClassName, sizeGiB),
        readiness: celReadiness(READY_QUERY.pvcBound),
      }),
    ],
  ];
  const outcome: Outcome = { phase, reason: 'Staged', facts: { attempts: jobs.record, sizeGiB }, resources, warnings: [], artifact };
  if (refused.length > 0) outcome.refused = refused;
  if (jobs.notices.length > 0) outcome.notices = jobs.notices;
  if (stage.observed(HF_KEYS.pvc) === undefined) outcome.firstCompose = `Staging ${artifact} on ${cluster.name}`;

  if (phase === 'Ready') {
    // The Job, its access and the token Secret are no longer desired: the Job
    // is orphaned (no Delete policy) and its TTL removes it; its access and the
    // token are handed to it first (release.ts), the Secret emptied: the token
    // leaves the cluster once it has done its work, the rest goes with the Job.
    // What was staged, as the download reported it: the Job's report when it
    // completed now, this XR's latched status after the Job is gone.
    const fresh = job.state === 'complete' && report !== undefined && report.state === 'Verified' ? report : undefined;
    const commit = fresh ? fresh.commit : latched ? stage.previous.commit : undefined;
    if (commit !== undefined) outcome.facts.commit = commit;
    const verified = fresh !== undefined || (latched && stage.previous.verified === true);
    outcome.facts.verified = verified;
    const progress = fresh ? progressOf(fresh) : latched ? stage.previous.progress : undefined;
    if (progress !== undefined) outcome.facts.progress = progress;
    // Engines load the commit staged, not whatever the branch points to by then.
    outcome.mount = huggingFaceMount({ claimName: names.pvc, repo: source.repo, revision: commit ?? source.revision });
    outcome.facts.staged = artifact;
    outcome.facts.attempts = settled(jobs.record, artifact, stage.retryRequest);
    return outcome;
  }

  const where = `on ${cluster.name}`;
  if (failure) {
    // Failed, latched: the Job stays desired only while another attempt follows it.
    outcome.reason = 'HydrationFailed';
    outcome.message = failureMessage(`hydration Job ${names.job} ${where}`, failure, stage.settings.jobs.ttlSecondsAfterFinished);
    if (jobs.run) resources.push(...jobObjects(stage, { ...source, sizeGiB }, labels, token, jobs.run));
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

  resources.push(...jobObjects(stage, { ...source, sizeGiB }, labels, token, jobs.run ?? { attempt: 1 }));
  outcome.reason = phase === 'Hydrating' ? 'Hydrating' : 'Pending';
  if (job.state === 'stale') {
    outcome.message = `waiting for the hydration Job ${names.job} ${where}, ${job.left}, to finish and be removed (${job.removal}) before staging ${artifact}`;
  } else if (phase === 'Hydrating') {
    outcome.message = `downloading ${artifact} to PVC ${names.pvc} ${where}${attemptNote(jobs.record.count)}`;
    if (report === undefined && lastGood?.progress !== undefined) {
      outcome.facts.progress = lastGood.progress;
      if (lastGood.commit !== undefined) outcome.facts.commit = lastGood.commit;
      outcome.message = `${outcome.message}: ${describeProgress(lastGood.progress)} (as last reported)`;
    }
    if (report !== undefined && report.state !== 'Failed') {
      const progress = progressOf(report);
      outcome.facts.progress = progress;
      if (report.commit !== undefined) outcome.facts.commit = report.commit;
      outcome.message =
        report.state === 'Verifying'
          ? `verifying ${artifact} ${where} against the hub: ${report.filesTotal} files, ${bytes(report.bytesTotal)} at commit ${report.commit ?? ''}${attemptNote(jobs.record.count)}`
          : `${outcome.message}: ${describeProgress(progress)}${stalledNote(report)}`;
    }
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
  mode: JobMode = 'stage',
): Outcome['resources'] {
  const providerConfig = stage.cluster.providerConfigName;
  const out: Outcome['resources'] = [];
  for (const [key, manifest] of reporterAccess(stage.names, stage.workloadNamespace, labels)) {
    out.push([key, remoteObject({ providerConfig, manifest })]);
  }
  if (token.kind === 'present') {
    out.push([
      HF_KEYS.auth,
      remoteObject({ providerConfig, manifest: secretManifest(stage.names.authSecret, stage.workloadNamespace, labels, token) }),
    ]);
  }
  out.push([
    mode === 'size' ? HF_KEYS.sizer : HF_KEYS.job,
    remoteObject({
      providerConfig,
      manifest: jobManifest(stage, source, labels, token, run, mode),
      readiness: celReadiness(READY_QUERY.jobComplete),
      managementPolicies: JOB_POLICIES,
    }),
  ]);
  return out;
}

/**
 * A claim's access modes can't change once it exists: a claim already composed keeps the modes it was
 * created with, and the setting applies to claims created from now on.
 */
function stagedAccessModes(stage: Stage): string[] {
  const composed = asArray(getIn(composedManifest(stage.observed(HF_KEYS.pvc)), 'spec', 'accessModes'));
  const modes = composed.filter((m): m is string => typeof m === 'string');
  return modes.length > 0 ? modes : [stage.settings.storage.accessMode];
}

function pvcManifest(stage: Stage, labels: Record<string, string>, storageClassName: string, sizeGiB: number): JsonObject {
  const pvc: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: stage.names.pvc, namespace: stage.workloadNamespace, labels },
    spec: { accessModes: stagedAccessModes(stage), storageClassName, resources: { requests: { storage: `${sizeGiB}Gi` } } },
  };
  return toJson(pvc);
}

/** No `type`, as upstream: an Opaque Secret holding the token exactly as the control plane holds it. */
function secretManifest(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  token: { key: string; value: string },
): JsonObject {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels },
    data: { [token.key]: token.value },
  };
  return toJson(secret);
}

/** The download (`stage`), or the sizing run before the claim exists (`size`: no volume, nothing written). */
type JobMode = 'stage' | 'size' | 'verify';

function jobManifest(
  stage: Stage,
  source: HuggingFaceSource,
  labels: Record<string, string>,
  token: Token,
  run: JobRun,
  mode: JobMode = 'stage',
): JsonObject {
  const name = mode === 'size' ? stage.names.sizer : stage.names.job;
  const env: V1EnvVar[] = [{ name: HF_HUB_CACHE_ENV, value: HYDRATION_MOUNT_PATH }];
  if (token.kind === 'present') {
    env.push({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: stage.names.authSecret, key: token.key } } });
  }
  const { settings } = stage;
  env.push(...networkEnv(settings, { huggingFace: true }));
  // Where the script writes its report: this Job (reporterAccess lets it patch exactly this one).
  env.push({ name: 'MODELPLANE_JOB', value: name }, { name: 'MODELPLANE_NAMESPACE', value: stage.workloadNamespace });
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: jobMetadata(name, stage.workloadNamespace, labels, artifactOf(source), run.attempt),
    spec: {
      backoffLimit: settings.jobs.backoffLimit,
      ttlSecondsAfterFinished: jobTtlSeconds(run.attempt, settings.jobs.ttlSecondsAfterFinished),
      template: {
        metadata: podMetadata(podLabels(stage), run.round),
        spec: {
          serviceAccountName: stage.names.job,
          restartPolicy: 'OnFailure',
          containers: [
            {
              name: CONTAINER,
              image: settings.images.hydration,
              command: jobCommand(source, settings.install, commandOptions(stage, mode)),
              env,
              volumeMounts: [{ name: ARTIFACT_VOLUME, mountPath: HYDRATION_MOUNT_PATH }, ...caMounts(settings)],
              ...containerResources(settings),
            },
          ],
          volumes: [{ name: ARTIFACT_VOLUME, persistentVolumeClaim: { claimName: stage.names.pvc } }, ...caVolumes(settings)],
        },
      },
    },
  };
  if (mode === 'size') {
    // Sizing runs before the claim exists: it mounts nothing and writes nothing.
    const pod = job.spec!.template.spec!;
    pod.volumes = pod.volumes?.filter((volume) => volume.name !== ARTIFACT_VOLUME);
    for (const container of pod.containers) {
      container.volumeMounts = container.volumeMounts?.filter((mount) => mount.name !== ARTIFACT_VOLUME);
      container.env = container.env?.filter((variable) => variable.name !== HF_HUB_CACHE_ENV);
    }
  }
  applyPodSettings(job.spec!.template.spec!, settings);
  return toJson(job);
}

/**
 * The report's access, least privilege: a ServiceAccount for the Job's pod,
 * and a Role that can get and patch only this one Job, by name (Kubernetes
 * can't limit `create` by name, and the script creates nothing). Once the
 * Job has finished, they are handed to it and go with it (release.ts).
 */
function reporterAccess(names: CacheNames, namespace: string, labels: Record<string, string>): [string, JsonObject][] {
  const access = jobAccess(names.job, namespace, labels, {
    apiGroups: ['batch'],
    resources: ['jobs'],
    resourceNames: [names.job, names.sizer],
    verbs: ['get', 'patch'],
  });
  return [
    [HF_KEYS.account, access.account],
    [HF_KEYS.role, access.role],
    [HF_KEYS.binding, access.binding],
  ];
}

/** "; stalled: no new byte for 15m" when the script says so. */
function stalledNote(report: ProgressReport): string {
  return report.stalledSeconds === undefined ? '' : `; stalled: no new byte for ${duration(report.stalledSeconds)}`;
}

const GI_QUANTITY = /^([1-9][0-9]{0,5})Gi$/;

/**
 * The claim size, in GiB: spec.huggingFace.sizeGiB when given; else the size
 * this XR latched; else the size of the claim already composed (its spec
 * can't say otherwise); else what the sizing Job reported from the hub's
 * listing of the selected files (plus the margin hydrate.py documents).
 * Undefined: not known yet, the sizing Job's state says why.
 */
function claimSize(stage: Stage, source: HuggingFaceSource, artifact: string): Sizing {
  const sizer = stage.observed(HF_KEYS.sizer);
  const job = jobState(sizer, artifact, undefined);
  if (source.sizeGiB !== undefined) return { sizeGiB: source.sizeGiB, job, problems: [] };
  if (stage.previous.sizeGiB !== undefined) return { sizeGiB: stage.previous.sizeGiB, job, problems: [] };
  const composed = GI_QUANTITY.exec(
    getString(composedManifest(stage.observed(HF_KEYS.pvc)), 'spec', 'resources', 'requests', 'storage') ?? '',
  );
  // A claim composed outside the XRD's bounds (someone edited it) is not a size to compose again: it is kept as observed.
  if (composed && Number(composed[1]) <= MAX_SIZE_GIB) return { sizeGiB: Number(composed[1]), job, problems: [] };
  // The sizing report: a size within the XRD's bounds, and the one its byte total and the script's margin give.
  const read =
    job.state === 'stale' || job.state === 'absent' ? undefined : readReport(sizer, `the sizing report on Job ${stage.names.sizer}`);
  const report = read?.report;
  const problems = read?.problems ?? [];
  if (report?.state === 'Sized' && report.requiredGiB !== undefined) return { sizeGiB: report.requiredGiB, report, job, problems };
  return report === undefined ? { job, problems } : { report, job, problems };
}

interface Sizing {
  sizeGiB?: number;
  report?: ProgressReport;
  job: JobState;
  /** What the sizing report failed, if it did: no size is taken from it. */
  problems: ReportProblem[];
}

/** No size yet: run the sizing Job (with the token, if any), and say so. Nothing is downloaded, no claim exists. */
function sizingOutcome(stage: Stage, source: HuggingFaceSource, artifact: string, token: Token, sizing: Sizing): Outcome {
  const { cluster, names } = stage;
  const where = `on ${cluster.name}`;
  const outcome: Outcome = { phase: 'Pending', reason: 'Pending', facts: {}, resources: [], warnings: [], artifact };
  if (sizing.problems.length > 0) outcome.refused = [...sizing.problems];
  if (stage.observed(HF_KEYS.sizer) === undefined) outcome.firstCompose = `Sizing ${artifact} on ${cluster.name}`;
  if (token.kind === 'missing') {
    outcome.reason = 'AuthSecretMissing';
    outcome.message = token.message;
    outcome.warnings.push({ reason: 'AuthSecretMissing', message: token.message });
    return outcome;
  }
  // A claim already there whose size can't be read (someone edited it) is kept exactly as observed:
  // sizing never drops a claim that may hold weights.
  const claim = stage.observed(HF_KEYS.pvc);
  if (claim !== undefined) outcome.resources.push([HF_KEYS.pvc, keepObservedObject(claim)]);
  // The sizing Job stays desired until it reports (a failed one is re-created when its TTL removes it).
  outcome.resources.push(...jobObjects(stage, source, remoteLabels(stage), token, { attempt: 1 }, 'size'));
  const { job } = sizing;
  const report = withoutToken(sizing.report, token);
  if (job.state === 'failed') {
    outcome.phase = 'Failed';
    outcome.reason = 'HydrationFailed';
    const why = report?.state === 'Failed' ? `${report.message ?? ''} (${job.why})` : job.why;
    outcome.message = `sizing Job ${names.sizer} ${where} failed: ${why}; it runs again when Kubernetes removes it (its TTL), or set spec.huggingFace.sizeGiB`;
    return outcome;
  }
  outcome.message = `sizing the claim for ${artifact} ${where} from the hub's listing of the selected files (spec.huggingFace.sizeGiB is not set)`;
  if (sizing.problems.length > 0) {
    // Refused: no claim is composed from it. The sizing Job reports again when Kubernetes removes it (its TTL) and it runs anew.
    outcome.message = `${outcome.message}; its report was refused (condition ${REPORTS_ACCEPTED}), so no claim is made from it: set spec.huggingFace.sizeGiB, or the sizing Job reports again once Kubernetes removes it (its TTL)`;
  }
  return outcome;
}

/**
 * The report with the token cut out of its message. The script already scrubs
 * it; a pod's words are not trusted to have done so before they reach a
 * status, a condition and an event.
 */
function withoutToken(report: ProgressReport | undefined, token: Token): ProgressReport | undefined {
  if (report?.message === undefined || token.kind !== 'present') return report;
  const message = scrubSecret(report.message, secretForms(token.value));
  return message === report.message ? report : { ...report, message };
}

/** The script's mode: a re-verification checks against the commit the copy was staged at, never a moved branch. */
function commandOptions(stage: Stage, mode: JobMode): ScriptOptions {
  if (mode === 'size') return { sizeOnly: true };
  if (mode !== 'verify') return {};
  return stage.previous.commit === undefined ? { verifyOnly: true } : { verifyOnly: true, revision: stage.previous.commit };
}

/** The round marker of a re-verification Job: another request is another Job. */
const reverifyRound = (request: string): string => `reverify:${request}`;

/**
 * A re-verification of a Ready copy. While the check runs the cluster stays
 * Ready (the copy served so far is not pulled from under running engines);
 * a passing check is Ready again; a failing one is Failed, naming the file,
 * latched until a retry request stages the artifact again (the script removed
 * the bad copy and the marker, so that retry downloads what no longer matched).
 */
function reverifyOutcome(
  stage: Stage,
  source: HuggingFaceSource,
  artifact: string,
  token: Token,
  request: { reverify: string; sizeGiB: number; latchedFailure: boolean },
): Outcome {
  const { cluster, names, previous } = stage;
  const labels = remoteLabels(stage);
  const resources: Outcome['resources'] = [
    [
      HF_KEYS.pvc,
      remoteObject({
        providerConfig: cluster.providerConfigName,
        manifest: pvcManifest(stage, labels, cluster.storageClassName ?? '', request.sizeGiB),
        readiness: celReadiness(READY_QUERY.pvcBound),
      }),
    ],
  ];
  const facts: Outcome['facts'] = { sizeGiB: request.sizeGiB, staged: artifact };
  if (previous.attempts !== undefined) facts.attempts = previous.attempts;
  if (previous.commit !== undefined) facts.commit = previous.commit;
  if (previous.progress !== undefined) facts.progress = previous.progress;
  const outcome: Outcome = { phase: 'Ready', reason: 'Staged', facts, resources, warnings: [], artifact };
  const failed = (message: string): Outcome => {
    delete facts.staged;
    facts.verified = false;
    facts.reverifiedFor = request.reverify;
    return { ...outcome, phase: 'Failed', reason: 'HydrationFailed', message };
  };
  if (request.latchedFailure) return failed(previous.message ?? `re-verification of ${artifact} on ${cluster.name} failed`);

  const round = reverifyRound(request.reverify);
  const observed = stage.observed(HF_KEYS.job);
  const job = jobState(observed, artifact, round);
  const read =
    job.state === 'complete' || job.state === 'failed' ? readReport(observed, `the progress report on Job ${names.job}`) : undefined;
  if (read !== undefined && read.problems.length > 0) outcome.refused = [...read.problems];
  const report = withoutToken(read?.report, token);
  const mount = huggingFaceMount({ claimName: names.pvc, repo: source.repo, revision: previous.commit ?? source.revision });
  if (job.state === 'complete') {
    facts.verified = true;
    facts.reverifiedFor = request.reverify;
    outcome.mount = mount;
    return outcome;
  }
  if (job.state === 'failed') {
    const why = report?.state === 'Failed' && report.message !== undefined ? report.message : job.why;
    return failed(
      `re-verification of ${artifact} on ${cluster.name} failed: ${why}; set the annotation ${RETRY_ANNOTATION} to a new value to stage it again`,
    );
  }
  // Absent, running, or another round's Job still there: the check is under way (or about to be).
  facts.verified = previous.verified === true;
  outcome.mount = mount;
  const at = previous.commit === undefined ? '' : ` at commit ${previous.commit}`;
  outcome.message = `re-verifying ${artifact}${at} on ${cluster.name} against the hub (requested ${request.reverify}); it stays Ready meanwhile`;
  if (token.kind === 'missing') {
    outcome.message = `re-verification of ${artifact} on ${cluster.name} waits for its token: ${token.message}`;
    return outcome;
  }
  resources.push(...jobObjects(stage, source, labels, token, { attempt: 1, round }, 'verify'));
  return outcome;
}

/** The options whose values come from the user: quoted as one shell word each. The others are ours (a number, a path). */
const USER_OPTIONS = ['--revision=', '--include=', '--exclude='];

/** `--name=value` as one shell word: the name as it is (ours), a user's value quoted. */
function quoteOption(arg: string): string {
  const user = USER_OPTIONS.find((option) => arg.startsWith(option));
  return user === undefined ? arg : `${user}${shellQuote(arg.slice(user.length))}`;
}
