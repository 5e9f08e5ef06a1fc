// OCI: the weights are in a registry, as a container image or a CNCF ModelPack
// model artifact. The function can't reach a registry, so a resolver Job on
// the workload cluster reads the manifest (with oci.imagePullSecrets) and
// writes it into a ConfigMap; the function reads that back, classifies it,
// latches the digest and publishes a mount pinned to it. Nothing is copied:
// the kubelet (image volume) or the ModelPack CSI driver pulls at pod start.

import type { V1ConfigMap, V1Container, V1EnvVar, V1Job, V1SecurityContext, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { jobAccess } from './access.js';
import {
  JOB_POLICIES,
  PUBLISHER_IMAGE,
  READY_QUERY,
  REMOTE_NAMESPACE,
  RESOLVER_IMAGE,
  celReadiness,
  defaultClusterSettings,
  ociImageMount,
  ociModelArtifactMount,
  remoteObject,
  toJson,
  type ArtifactKind,
  type ClusterSettings,
  type JsonObject,
  type ManagementPolicy,
} from '#lib';
import { attemptNote, failureMessage, jobTtlSeconds, planJob, settled, type JobRun } from './attempts.js';
import { applyPodSettings, caMounts, caVolumes, containerResources, networkEnv } from './job-settings.js';
import { jobMetadata, podMetadata } from './jobs.js';
import { podLabels, remoteLabels } from './labels.js';
import { readResult, type ResolverResult } from './oci-result.js';
import type { Outcome, Stage } from './outcome.js';
import type { JobScoped } from './release.js';
import { parseReference, quoteValue, type OciSource } from '#lib';

/** Desired keys. The resolver's Job, ServiceAccount, Role, RoleBinding and ConfigMap share one name on the cluster. */
export const OCI_KEYS = {
  job: 'resolve',
  account: 'resolve-account',
  role: 'resolve-role',
  binding: 'resolve-binding',
  result: 'resolve-result',
} as const;

/** Once the resolver has finished, its access goes with it (release.ts). */
export const OCI_JOB_SCOPED: JobScoped = {
  jobs: [OCI_KEYS.job],
  scoped: [OCI_KEYS.account, OCI_KEYS.role, OCI_KEYS.binding],
};

/** The default images (the settings' images.resolver and images.publisher override them). */
export { PUBLISHER_IMAGE, RESOLVER_IMAGE };

/**
 * The result ConfigMap is created by us and written by the Job. No Update, so
 * the provider never reverts what the Job wrote; Delete, so it goes with the
 * cache. (RBAC can't limit `create` by name: composing it ourselves is what
 * lets the Job's Role name this one ConfigMap and nothing else.)
 */
export const RESULT_POLICIES: readonly ManagementPolicy[] = ['Observe', 'Create', 'Delete'];

/** The Job's field manager: it owns only the data keys it applies. */
const FIELD_MANAGER = 'modelplane-resolver';
const WORK_DIR = '/work';
const PULL_SECRETS_DIR = '/var/run/modelplane/pull-secrets';
/** Any unprivileged user works: the scripts write only to the emptyDir. 65532 is distroless' "nonroot". */
const NONROOT = 65532;

// The scripts are constant text: the reference reaches them only as $REF (an
// environment variable), so no value of it can change what they run.

/** Merge the pull secrets' docker configs into one for crane (a missing secret is skipped: crane then says what failed). */
const CREDENTIALS_SCRIPT = [
  'set -eu',
  `mkdir -p ${WORK_DIR}/docker`,
  `set -- ${PULL_SECRETS_DIR}/*/.dockerconfigjson`,
  `if [ -e "$1" ]; then jq -s '{auths: (map(.auths // {}) | add)}' "$@" > ${WORK_DIR}/docker/config.json; else echo '{"auths":{}}' > ${WORK_DIR}/docker/config.json; fi`,
].join('\n');

/**
 * Fetch the manifest once and take its digest from those very bytes (a tag
 * that moves between two requests can't pair one manifest with another's
 * digest). A failure is recorded, not fatal here: the next step publishes it.
 */
const RESOLVE_SCRIPT = [
  'set -u',
  `mkdir -p ${WORK_DIR}/out`,
  `printf '%s' "$REF" > ${WORK_DIR}/out/ref`,
  `if crane manifest "$REF" > ${WORK_DIR}/out/manifest 2> ${WORK_DIR}/crane.log; then`,
  `  set -- $(sha256sum ${WORK_DIR}/out/manifest)`,
  `  printf 'sha256:%s' "$1" > ${WORK_DIR}/out/digest`,
  'else',
  `  rm -f ${WORK_DIR}/out/manifest`,
  `  tail -c 2000 ${WORK_DIR}/crane.log > ${WORK_DIR}/out/error`,
  'fi',
].join('\n');

/**
 * Server-side apply the files as the ConfigMap's data (every key the last run
 * wrote and this one didn't is removed), then fail the pod if the fetch
 * failed, so the Job retries up to its backoff limit and then reports Failed.
 */
const PUBLISH_SCRIPT = [
  'set -eu',
  `kubectl create configmap "$CONFIGMAP" --namespace "$NAMESPACE" --from-file=${WORK_DIR}/out --dry-run=client --output=yaml > ${WORK_DIR}/configmap.yaml`,
  `kubectl apply --server-side --force-conflicts --field-manager=${FIELD_MANAGER} --filename=${WORK_DIR}/configmap.yaml`,
  `if [ -f ${WORK_DIR}/out/error ]; then cat ${WORK_DIR}/out/error >&2; exit 1; fi`,
].join('\n');

export function stageOci(stage: Stage, source: OciSource): Outcome {
  const { cluster, names, previous } = stage;
  const ref = source.ref;
  const reference = parseReference(ref);
  // parseSpec refused anything else; a failure here is a bug, not input.
  if (!reference) throw new Error(`spec.oci.ref ${quoteValue(ref, 120)} passed parsing but is not a reference`);
  const labels = remoteLabels(stage);

  const resources: Outcome['resources'] = [
    [
      OCI_KEYS.result,
      remoteObject({
        providerConfig: cluster.providerConfigName,
        manifest: configMapManifest(names.resolver, stage.workloadNamespace, labels),
        managementPolicies: RESULT_POLICIES,
      }),
    ],
  ];
  const outcome: Outcome = { phase: 'Pending', reason: 'Pending', facts: {}, resources, warnings: [], artifact: ref };
  if (stage.observed(OCI_KEYS.result) === undefined) outcome.firstCompose = `Resolving ${ref} on ${cluster.name}`;

  // A reference resolves once per cluster: what this XR latched for this very
  // reference wins over whatever the ConfigMap says now, so a tag that moved
  // never changes what the next pod serves. A new reference resolves anew.
  const latched: ResolverResult | undefined =
    previous.resolvedRef === ref && previous.digest !== undefined && previous.artifactKind !== undefined
      ? { state: 'resolved', digest: previous.digest, kind: previous.artifactKind }
      : undefined;
  const result =
    latched ?? readResult(stage.observed(OCI_KEYS.result), ref, reference.digest, `the resolver's result in ConfigMap ${names.resolver}`);

  if (result.state === 'resolved') {
    // Known: the resolver is done (and so is its access); the ConfigMap stays as the record.
    outcome.facts = {
      resolvedRef: ref,
      digest: result.digest,
      artifactKind: result.kind,
      attempts: settled(previous.attempts, ref, stage.retryRequest),
    };
    const pinned = `${reference.repository}@${result.digest}`;
    // The platform team's word wins over the cluster's: upstream's InferenceCluster never reports it.
    const declared = stage.settings.storage.imageVolumes;
    if (result.kind === 'Image' && !(declared ?? cluster.imageVolumes)) {
      outcome.phase = 'Failed';
      outcome.reason = 'ImageVolumesUnsupported';
      const why =
        declared === false
          ? 'the settings declare storage.imageVolumes false for it'
          : "the cluster doesn't report status.cache.imageVolumes, and the settings don't declare storage.imageVolumes";
      outcome.message = `${ref} is a container image, and cluster ${cluster.name} can't mount image volumes: they need Kubernetes >= 1.35 with containerd >= 2.1, or CRI-O (${why})`;
      return outcome;
    }
    outcome.phase = 'Ready';
    outcome.reason = 'Staged';
    outcome.message = `${ref} resolved to ${result.digest} (${describeKind(result.kind)})`;
    outcome.mount = mountFor(result.kind, pinned, source);
    return outcome;
  }
  if (result.state === 'unsupported' || result.state === 'invalid') {
    if (result.state === 'invalid') outcome.refused = [result.problem];
    outcome.phase = 'Failed';
    outcome.reason = result.state === 'unsupported' ? 'UnsupportedArtifact' : 'HydrationFailed';
    outcome.message =
      result.state === 'unsupported'
        ? `${ref} is neither a container image nor a ModelPack model artifact: ${result.message}`
        : `${ref} could not be resolved on ${cluster.name}: ${result.message}`;
    return outcome;
  }

  const jobs = planJob({ observed: stage.observed(OCI_KEYS.job), artifact: ref, previous, request: stage.retryRequest });
  outcome.facts.attempts = jobs.record;
  if (jobs.notices.length > 0) outcome.notices = jobs.notices;
  // The resolver stays desired while it has an attempt to make; once they are spent, it and its access go.
  if (jobs.run) resources.push(...resolverObjects(stage, source, labels, jobs.run));
  const { job, failure } = jobs;
  const lastError = result.state === 'error' ? `; the last attempt said: ${result.error}` : '';
  if (failure) {
    outcome.phase = 'Failed';
    outcome.reason = 'HydrationFailed';
    const why = failure.latched ? failure.why : `${failure.why}${lastError}`;
    outcome.message = failureMessage(
      `resolver Job ${names.resolver} on ${cluster.name} reading ${ref}`,
      { ...failure, why },
      stage.settings.jobs.ttlSecondsAfterFinished,
    );
  } else if (job.state === 'stale') {
    outcome.message = `waiting for the resolver Job ${names.resolver} on ${cluster.name}, ${job.left}, to finish and be removed (${job.removal}) before resolving ${ref}`;
  } else {
    outcome.message = `resolving ${ref} on ${cluster.name}${attemptNote(jobs.record.count)}${lastError}`;
  }
  return outcome;
}

function describeKind(kind: ArtifactKind): string {
  return kind === 'Image' ? 'a container image' : 'a ModelPack model artifact';
}

function mountFor(kind: ArtifactKind, pinned: string, source: OciSource) {
  if (kind === 'Image') {
    return ociImageMount({ reference: pinned, subPath: source.subPath, imagePullSecrets: source.imagePullSecrets });
  }
  return ociModelArtifactMount({ reference: pinned, subPath: source.subPath });
}

function configMapManifest(name: string, namespace: string, labels: Record<string, string>): JsonObject {
  const configMap: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } };
  return toJson(configMap);
}

/**
 * The resolver and exactly the access it needs: its own ServiceAccount, and a
 * Role that can read and write the one result ConfigMap by name. Once the
 * resolver has finished, its access is handed to it and goes with it (release.ts).
 */
function resolverObjects(stage: Stage, source: OciSource, labels: Record<string, string>, run: JobRun): Outcome['resources'] {
  const name = stage.names.resolver;
  const namespace = stage.workloadNamespace;
  const access = jobAccess(name, namespace, labels, {
    apiGroups: [''],
    resources: ['configmaps'],
    resourceNames: [name],
    verbs: ['get', 'update', 'patch'],
  });
  const providerConfig = stage.cluster.providerConfigName;
  return [
    [OCI_KEYS.account, remoteObject({ providerConfig, manifest: access.account })],
    [OCI_KEYS.role, remoteObject({ providerConfig, manifest: access.role })],
    [OCI_KEYS.binding, remoteObject({ providerConfig, manifest: access.binding })],
    [
      OCI_KEYS.job,
      remoteObject({
        providerConfig,
        manifest: resolverJob({ name, source, labels, templateLabels: podLabels(stage), run, settings: stage.settings, namespace }),
        readiness: celReadiness(READY_QUERY.jobComplete),
        managementPolicies: JOB_POLICIES,
      }),
    ],
  ];
}

const RESTRICTED: V1SecurityContext = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };

/**
 * Init containers merge the pull secrets (when there are any) and fetch the
 * manifest; the container publishes it. `Never` restarts in place: each
 * attempt is a pod of its own, whose log a person can read.
 */
export interface ResolverJobInput {
  name: string;
  source: OciSource;
  /** On the Job's metadata. */
  labels: Record<string, string>;
  /** On its pod template (which can't change once the Job exists). */
  templateLabels: Record<string, string>;
  run: JobRun;
  /** The platform team's settings for the cluster (default: today's). */
  settings?: ClusterSettings;
  /** The workload namespace (default: `default`). */
  namespace?: string;
}

export function resolverJob({
  name,
  source,
  labels,
  templateLabels,
  run,
  settings = defaultClusterSettings(),
  namespace = REMOTE_NAMESPACE,
}: ResolverJobInput): JsonObject {
  const work: V1VolumeMount = { name: 'work', mountPath: WORK_DIR };
  const ref: V1EnvVar = { name: 'REF', value: source.ref };
  const secretVolumes: V1Volume[] = source.imagePullSecrets.map((secretName, i) => ({
    name: `pull-secret-${i}`,
    // Optional: a missing Secret must fail the fetch (and say so), not hold the pod in ContainerCreating forever.
    secret: { secretName, optional: true },
  }));
  const initContainers: V1Container[] = [];
  if (secretVolumes.length > 0) {
    initContainers.push({
      name: 'credentials',
      image: settings.images.publisher,
      command: ['/bin/sh', '-c', CREDENTIALS_SCRIPT],
      volumeMounts: [work, ...secretVolumes.map((v, i) => ({ name: v.name, mountPath: `${PULL_SECRETS_DIR}/${i}`, readOnly: true }))],
      securityContext: RESTRICTED,
    });
  }
  const resolveEnv: V1EnvVar[] = [ref];
  if (secretVolumes.length > 0) resolveEnv.push({ name: 'DOCKER_CONFIG', value: `${WORK_DIR}/docker` });
  // Only crane talks to the registry: the proxies and the CA bundle are its alone (kubectl, beside
  // it, talks to the cluster's own API server, which a proxy must not see).
  resolveEnv.push(...networkEnv(settings, { huggingFace: false }));
  initContainers.push({
    name: 'resolve',
    image: settings.images.resolver,
    command: ['/busybox/sh', '-c', RESOLVE_SCRIPT],
    env: resolveEnv,
    volumeMounts: [work, ...caMounts(settings)],
    securityContext: RESTRICTED,
    ...containerResources(settings),
  });
  const publish: V1Container = {
    name: 'publish',
    image: settings.images.publisher,
    command: ['/bin/sh', '-c', PUBLISH_SCRIPT],
    env: [
      { name: 'CONFIGMAP', value: name },
      { name: 'NAMESPACE', value: namespace },
      // kubectl caches discovery under $HOME; the root filesystem is read-only.
      { name: 'HOME', value: WORK_DIR },
    ],
    volumeMounts: [work],
    securityContext: RESTRICTED,
  };
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: jobMetadata(name, namespace, labels, source.ref, run.attempt),
    spec: {
      backoffLimit: settings.jobs.backoffLimit,
      ttlSecondsAfterFinished: jobTtlSeconds(run.attempt, settings.jobs.ttlSecondsAfterFinished),
      template: {
        metadata: podMetadata(templateLabels, run.round),
        spec: {
          serviceAccountName: name,
          restartPolicy: 'Never',
          securityContext: { runAsNonRoot: true, runAsUser: NONROOT, runAsGroup: NONROOT, seccompProfile: { type: 'RuntimeDefault' } },
          initContainers,
          containers: [publish],
          volumes: [{ name: 'work', emptyDir: {} }, ...secretVolumes, ...caVolumes(settings)],
        },
      },
    },
  };
  applyPodSettings(job.spec!.template.spec!, settings, source.imagePullSecrets);
  return toJson(job);
}
