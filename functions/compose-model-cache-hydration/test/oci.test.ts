// OCI (issue 4): the per-cluster resolver, its least-privilege access, the
// result read back from its ConfigMap, classification, the latched digest,
// and the mount pinned to it.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateMount, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, inferenceCluster, manifestOf } from '#testing';
import { classify, readResult } from '../src/oci-result.js';
import { hydration, jobRemote, observe, readiness, resolved, results, run, type Remote } from './support.js';

const REF = 'registry.example.com/models/qwen:v1';
const REPOSITORY = 'registry.example.com/models/qwen';
const RESOLVER = 'modelcache-ml-team-qwen-resolve-167ed';
const OCI: JsonObject = { source: 'OCI', oci: { ref: REF, imagePullSecrets: [{ name: 'regcred' }] } };
const CLUSTER = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', imageVolumes: true });
const OLD_CLUSTER = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', storageClassName: 'modelplane-rwx' });

const IMAGE = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${'c'.repeat(64)}`, size: 1 },
  layers: [
    { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${'1'.repeat(64)}`, size: 1 },
    { mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', digest: `sha256:${'2'.repeat(64)}`, size: 1 },
  ],
};
const DOCKER_IMAGE = {
  schemaVersion: 2,
  mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
  config: { mediaType: 'application/vnd.docker.container.image.v1+json' },
  layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip' }],
};
const MODEL = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  artifactType: 'application/vnd.cncf.model.manifest.v1+json',
  config: { mediaType: 'application/vnd.cncf.model.config.v1+json' },
  layers: [{ mediaType: 'application/vnd.cncf.model.weight.v1.raw' }, { mediaType: 'application/vnd.cncf.model.weight.config.v1.raw' }],
};
const HELM_CHART = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: { mediaType: 'application/vnd.cncf.helm.config.v1+json' },
  layers: [{ mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip' }],
};
const BUILDX_INDEX = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.index.v1+json',
  manifests: [
    { mediaType: 'application/vnd.oci.image.manifest.v1+json', platform: { os: 'linux', architecture: 'amd64' } },
    {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      platform: { os: 'unknown', architecture: 'unknown' },
      annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
    },
  ],
};

function sha(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The resolver's ConfigMap data for `manifest` read under `ref`. */
function result(manifest: object, ref = REF): { data: JsonObject; digest: string } {
  const text = JSON.stringify(manifest);
  return { data: { ref, digest: sha(text), manifest: text }, digest: sha(text) };
}

/** Observed objects after a first pass, with the ConfigMap holding `data` and the Job in `job`. */
async function afterFirstPass(
  spec: JsonObject,
  data: JsonObject | undefined,
  job?: Remote,
  cluster: JsonObject = CLUSTER,
): Promise<Record<string, JsonObject>> {
  const desired = desiredResources(await run(resolved({ xr: hydration(spec), cluster })));
  const observed: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(desired)) {
    if (key === 'resolve') {
      if (job) observed[key] = observe(object, job);
    } else {
      observed[key] = observe(object, key === 'resolve-result' && data ? { fields: { data }, ready: true } : { ready: true });
    }
  }
  return observed;
}

describe('first compose', () => {
  it('composes the result ConfigMap, the resolver Job and exactly the access it needs', async () => {
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER }));
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve']);
    const metadata = {
      name: RESOLVER,
      namespace: 'default',
      labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'ml-team' },
      annotations: { 'modelplane.ai/owner-6f168f982eb9': 'ModelCache qwen in namespace ml-team' },
    };
    const wrapper = (manifest: JsonObject, extra: JsonObject = {}) => ({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { annotations: { 'crossplane.io/external-name': (manifest['metadata'] as JsonObject)['name'] as string } },
      spec: { forProvider: { manifest }, providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' }, ...extra },
    });
    expect(desired['resolve-result']).toEqual(
      wrapper({ apiVersion: 'v1', kind: 'ConfigMap', metadata }, { managementPolicies: ['Observe', 'Create', 'Delete'] }),
    );
    expect(desired['resolve-account']).toEqual(wrapper({ apiVersion: 'v1', kind: 'ServiceAccount', metadata }));
    expect(desired['resolve-role']).toEqual(
      wrapper({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata,
        rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [RESOLVER], verbs: ['get', 'update', 'patch'] }],
      }),
    );
    expect(desired['resolve-binding']).toEqual(
      wrapper({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: RESOLVER },
        subjects: [{ kind: 'ServiceAccount', name: RESOLVER, namespace: 'default' }],
      }),
    );
    const job = desired['resolve']!;
    expect(job['spec']).toMatchObject({
      managementPolicies: ['Observe', 'Create', 'Update', 'LateInitialize'],
      readiness: {
        policy: 'DeriveFromCelQuery',
        celQuery: 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")',
      },
    });
    const manifest = manifestOf(job) as {
      metadata: JsonObject;
      spec: { backoffLimit: number; ttlSecondsAfterFinished: number; template: { spec: Record<string, unknown> } };
    };
    expect(manifest.metadata).toEqual({
      ...metadata,
      annotations: { 'modelplane.ai/artifact': REF, 'modelplane.ai/attempt': '1', ...metadata.annotations },
    });
    expect([manifest.spec.backoffLimit, manifest.spec.ttlSecondsAfterFinished]).toEqual([3, 180]);
    const pod = manifest.spec.template.spec as {
      serviceAccountName: string;
      imagePullSecrets: JsonObject[];
      initContainers: { name: string; image: string; env?: JsonObject[] }[];
      containers: { name: string; image: string }[];
      volumes: JsonObject[];
    };
    expect(pod.serviceAccountName).toBe(RESOLVER);
    expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(pod.volumes).toEqual([
      { name: 'work', emptyDir: {} },
      { name: 'pull-secret-0', secret: { secretName: 'regcred', optional: true } },
    ]);
    expect(pod.initContainers.map((c) => [c.name, c.image])).toEqual([
      ['credentials', 'registry.k8s.io/kubectl:v1.33.4'],
      ['resolve', 'gcr.io/go-containerregistry/crane/debug:v0.20.2'],
    ]);
    expect(pod.containers.map((c) => [c.name, c.image])).toEqual([['publish', 'registry.k8s.io/kubectl:v1.33.4']]);
    // The reference reaches the pod only as an environment variable.
    expect(pod.initContainers[1]!.env).toEqual([
      { name: 'REF', value: REF },
      { name: 'DOCKER_CONFIG', value: '/work/docker' },
    ]);
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message: `resolving ${REF} on cluster-a`, attempts: 1, attemptsFor: REF });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Pending');
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', `Resolving ${REF} on cluster-a`]]);
  });

  it('with no pull secrets: no credentials step, no pull secrets, anonymous crane', async () => {
    const rsp = await run(resolved({ xr: hydration({ source: 'OCI', oci: { ref: REF } }), cluster: CLUSTER }));
    const pod = (manifestOf(desiredResources(rsp)['resolve']) as { spec: { template: { spec: JsonObject } } }).spec.template.spec;
    expect((pod['initContainers'] as JsonObject[]).map((c) => c['name'])).toEqual(['resolve']);
    expect(pod['imagePullSecrets']).toBeUndefined();
    expect(pod['volumes']).toEqual([{ name: 'work', emptyDir: {} }]);
  });

  it('needs no storage class', async () => {
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' }) }));
    expect(compositeStatus(rsp)['phase']).toBe('Pending');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('Pending');
  });
});

describe('resolved', () => {
  it('image by tag: an image volume pinned to the digest, read-only, with the pull secrets; the resolver goes, the result stays', async () => {
    const { data, digest } = result(IMAGE);
    const observed = await afterFirstPass(OCI, data, jobRemote('complete'));
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result']);
    expect(readiness(rsp)).toEqual({ 'resolve-result': 'READY_TRUE' });
    const mount = {
      volumes: [{ name: 'model-cache', image: { reference: `${REPOSITORY}@${digest}`, pullPolicy: 'IfNotPresent' } }],
      volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models', readOnly: true }],
      env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models' }],
      imagePullSecrets: [{ name: 'regcred' }],
    };
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Ready',
      message: `${REF} resolved to ${digest} (a container image)`,
      mount,
      digest,
      artifactKind: 'Image',
      resolvedRef: REF,
      staged: REF,
    });
    expect(validateMount(mount).ok).toBe(true);
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', `${REF} is ready on cluster-a`]]);
  });

  it('image by digest: pinned to its own digest', async () => {
    const { data, digest } = result(DOCKER_IMAGE);
    const byDigest = `${REPOSITORY}@${digest}`;
    const spec = { source: 'OCI', oci: { ref: byDigest } };
    const observed = await afterFirstPass(spec, { ...data, ref: byDigest });
    const rsp = await run(resolved({ xr: hydration(spec), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', digest, artifactKind: 'Image', resolvedRef: byDigest });
    expect((compositeStatus(rsp)['mount'] as { volumes: JsonObject[] }).volumes[0]).toEqual({
      name: 'model-cache',
      image: { reference: byDigest, pullPolicy: 'IfNotPresent' },
    });
  });

  it('a result that contradicts the pinned digest fails', async () => {
    const { data } = result(IMAGE);
    const pinned = `${REPOSITORY}@sha256:${'f'.repeat(64)}`;
    const spec = { source: 'OCI', oci: { ref: pinned } };
    const observed = await afterFirstPass(spec, { ...data, ref: pinned });
    const rsp = await run(resolved({ xr: hydration(spec), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)['phase']).toBe('Failed');
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('HydrationFailed');
    expect(compositeStatus(rsp)['message']).toContain(`for a reference pinned to sha256:${'f'.repeat(64)}`);
  });

  it('model artifact: the ModelPack CSI driver, pinned, no pull secrets', async () => {
    const { data, digest } = result(MODEL);
    const observed = await afterFirstPass(OCI, data);
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: OLD_CLUSTER, observed }));
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', digest, artifactKind: 'ModelArtifact', resolvedRef: REF });
    expect(compositeStatus(rsp)['mount']).toEqual({
      volumes: [
        {
          name: 'model-cache',
          csi: {
            driver: 'model.csi.modelpack.org',
            readOnly: true,
            volumeAttributes: { 'model.csi.modelpack.org/reference': `${REPOSITORY}@${digest}` },
          },
        },
      ],
      volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models', readOnly: true }],
      env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models' }],
    });
  });

  it('subPath: only that directory, where MODELPLANE_MODEL points', async () => {
    const spec = { source: 'OCI', oci: { ref: REF, subPath: 'weights/qwen' } };
    const observed = await afterFirstPass(spec, result(IMAGE).data);
    const rsp = await run(resolved({ xr: hydration(spec), cluster: CLUSTER, observed }));
    const mount = compositeStatus(rsp)['mount'] as JsonObject;
    expect(mount['volumeMounts']).toEqual([
      { name: 'model-cache', mountPath: '/mnt/models/weights/qwen', subPath: 'weights/qwen', readOnly: true },
    ]);
    expect(mount['env']).toEqual([{ name: 'MODELPLANE_MODEL', value: '/mnt/models/weights/qwen' }]);
  });

  it('an index of platform images (with a buildx attestation) is an image', async () => {
    const observed = await afterFirstPass(OCI, result(BUILDX_INDEX).data);
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', artifactKind: 'Image' });
  });
});

describe('failed', () => {
  it('unsupported artifact: Failed, naming the media types seen; the resolver goes', async () => {
    const observed = await afterFirstPass(OCI, result(HELM_CHART).data, jobRemote('complete'));
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    const message =
      `${REF} is neither a container image nor a ModelPack model artifact: manifest application/vnd.oci.image.manifest.v1+json, ` +
      'config application/vnd.cncf.helm.config.v1+json, layers application/vnd.cncf.helm.chart.content.v1.tar+gzip';
    expect(compositeStatus(rsp)).toEqual({ phase: 'Failed', message });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'UnsupportedArtifact', message });
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result']);
    expect(results(rsp)).toEqual([['SEVERITY_WARNING', message]]);
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('resolver Job failed (bad credentials): Failed with the Job’s reason and what the registry said; the Job stays', async () => {
    const error = 'GET https://registry.example.com/v2/models/qwen/manifests/v1: UNAUTHORIZED: authentication required';
    const observed = await afterFirstPass(OCI, { ref: REF, error: `${error}\n` }, jobRemote('failed'));
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    const message =
      `resolver Job ${RESOLVER} on cluster-a reading ${REF} failed (attempt 1 of 3): BackoffLimitExceeded: Job has reached the specified backoff limit; ` +
      `the last attempt said: ${error}; attempt 2 starts when Kubernetes removes the failed Job, 180s after it failed (delete it on the workload cluster to start now)`;
    expect(compositeStatus(rsp)).toEqual({ phase: 'Failed', message, attempts: 1, attemptsFor: REF });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('HydrationFailed');
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve']);
    expect(results(rsp)).toEqual([['SEVERITY_WARNING', message]]);
  });

  it('while the resolver retries, Pending says what the last attempt said', async () => {
    const observed = await afterFirstPass(OCI, { ref: REF, error: 'MANIFEST_UNKNOWN: manifest unknown' }, jobRemote('running'));
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: `resolving ${REF} on cluster-a; the last attempt said: MANIFEST_UNKNOWN: manifest unknown`,
      attempts: 1,
      attemptsFor: REF,
    });
  });

  it('image volumes unsupported: Failed naming the floor, with the digest latched, and Ready once the cluster can', async () => {
    const { data, digest } = result(IMAGE);
    const observed = await afterFirstPass(OCI, data, undefined, OLD_CLUSTER);
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: OLD_CLUSTER, observed }));
    const message = `${REF} is a container image, and cluster cluster-a can't mount image volumes: they need Kubernetes >= 1.35 with containerd >= 2.1, or CRI-O (the cluster doesn't report status.cache.imageVolumes, and the settings don't declare storage.imageVolumes)`;
    expect(compositeStatus(rsp)).toEqual({ phase: 'Failed', message, digest, artifactKind: 'Image', resolvedRef: REF });
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('ImageVolumesUnsupported');
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result']);

    // The cluster is upgraded; the tag has moved meanwhile: the latched digest is served.
    const moved = result({ ...IMAGE, layers: [IMAGE.layers[0]!] }).data;
    const later = await run(
      resolved({
        xr: hydration(OCI, compositeStatus(rsp)),
        cluster: CLUSTER,
        observed: { 'resolve-result': observe(desiredResources(rsp)['resolve-result']!, { fields: { data: moved }, ready: true }) },
      }),
    );
    expect(compositeStatus(later)).toMatchObject({ phase: 'Ready', digest });
    expect(results(later)).toEqual([['SEVERITY_NORMAL', `${REF} is ready on cluster-a`]]);
  });

  it('a malformed digest from the resolver fails rather than being published', async () => {
    const observed = await afterFirstPass(OCI, { ref: REF, digest: 'sha256:xyz', manifest: JSON.stringify(IMAGE) });
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Failed',
      message: `${REF} could not be resolved on cluster-a: the resolver reported a malformed digest (it is not a sha256 digest (sha256: and 64 lower-case hex digits))`,
    });
  });
});

describe('the latch', () => {
  it('tag moved after Ready: the latched digest is served, nothing re-resolves', async () => {
    const first = result(IMAGE);
    const latched = { phase: 'Ready', resolvedRef: REF, digest: first.digest, artifactKind: 'Image' };
    const moved = result(DOCKER_IMAGE).data; // someone re-ran a resolver: the tag now names another manifest
    const desired = desiredResources(await run(resolved({ xr: hydration(OCI), cluster: CLUSTER })));
    const rsp = await run(
      resolved({
        xr: hydration(OCI, latched),
        cluster: CLUSTER,
        observed: { 'resolve-result': observe(desired['resolve-result']!, { fields: { data: moved }, ready: true }) },
      }),
    );
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result']);
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', digest: first.digest, resolvedRef: REF });
    expect(JSON.stringify(compositeStatus(rsp)['mount'])).toContain(first.digest);
    expect(results(rsp)).toEqual([]);
  });

  // Found by the hardening fuzzer: a status digest this function never wrote was latched and published in the mount.
  it.each(['sha256:zzz', `sha256:${'A'.repeat(64)}`, 'md5:0123', ''])(
    'a malformed latched digest (%j) is not served: the resolver’s result is read again',
    async (digest) => {
      const fresh = result(IMAGE);
      const latched = { phase: 'Ready', resolvedRef: REF, digest, artifactKind: 'Image' };
      const desired = desiredResources(await run(resolved({ xr: hydration(OCI), cluster: CLUSTER })));
      const rsp = await run(
        resolved({
          xr: hydration(OCI, latched),
          cluster: CLUSTER,
          observed: { 'resolve-result': observe(desired['resolve-result']!, { fields: { data: fresh.data }, ready: true }) },
        }),
      );
      expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', digest: fresh.digest });
      expect(JSON.stringify(compositeStatus(rsp)['mount'])).toContain(`${REPOSITORY}@${fresh.digest}`);
      if (digest !== '') expect(JSON.stringify(rsp)).not.toContain(digest);
    },
  );

  it('a malformed latched digest with no result to read again stays Pending, publishing nothing', async () => {
    const latched = { phase: 'Ready', resolvedRef: REF, digest: 'sha256:zzz', artifactKind: 'Image' };
    const rsp = await run(resolved({ xr: hydration(OCI, latched), cluster: CLUSTER }));
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Pending' });
    expect(compositeStatus(rsp)['mount']).toBeUndefined();
  });

  it('a changed reference resolves anew, ignoring the old result and the old Job', async () => {
    const v1 = result(IMAGE);
    const latched = { phase: 'Ready', resolvedRef: REF, digest: v1.digest, artifactKind: 'Image' };
    const v2 = 'registry.example.com/models/qwen:v2';
    const observed = await afterFirstPass(OCI, v1.data, jobRemote('complete'));
    const rsp = await run(resolved({ xr: hydration({ source: 'OCI', oci: { ref: v2 } }, latched), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: `waiting for the resolver Job ${RESOLVER} on cluster-a, left from ${REF}, to finish and be removed (its TTL is 180s) before resolving ${v2}`,
    });
    const job = manifestOf(desiredResources(rsp)['resolve']);
    expect(job['metadata']).toMatchObject({ annotations: { 'modelplane.ai/artifact': v2 } });
    expect(JSON.stringify(job)).toContain(`{"name":"REF","value":"${v2}"}`);
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });
});

describe('classify', () => {
  it.each<[string, JsonObject, ReturnType<typeof classify>]>([
    ['an OCI image', IMAGE, { kind: 'Image' }],
    ['a Docker image', DOCKER_IMAGE, { kind: 'Image' }],
    ['an image manifest without a mediaType', { config: IMAGE.config, layers: IMAGE.layers }, { kind: 'Image' }],
    ['a ModelPack artifact', MODEL, { kind: 'ModelArtifact' }],
    [
      'ModelPack layers under an image config',
      { ...IMAGE, layers: [{ mediaType: 'application/vnd.cncf.model.weight.v1.tar' }] },
      { kind: 'ModelArtifact' },
    ],
    ['an index of platform images', BUILDX_INDEX, { kind: 'Image' }],
    [
      'an image with a layer a runtime cannot unpack',
      { ...IMAGE, layers: [...IMAGE.layers, { mediaType: 'application/octet-stream' }] },
      {
        unsupported:
          'manifest application/vnd.oci.image.manifest.v1+json, config application/vnd.oci.image.config.v1+json, layers application/vnd.oci.image.layer.v1.tar+gzip, application/vnd.oci.image.layer.v1.tar+zstd, application/octet-stream',
      },
    ],
    [
      'an artifact with an image config',
      { ...IMAGE, artifactType: 'application/vnd.example.sbom' },
      {
        unsupported:
          'manifest application/vnd.oci.image.manifest.v1+json, artifactType application/vnd.example.sbom, config application/vnd.oci.image.config.v1+json, layers application/vnd.oci.image.layer.v1.tar+gzip, application/vnd.oci.image.layer.v1.tar+zstd',
      },
    ],
    [
      'an image without layers',
      { ...IMAGE, layers: [] },
      {
        unsupported: 'manifest application/vnd.oci.image.manifest.v1+json, config application/vnd.oci.image.config.v1+json, layers (none)',
      },
    ],
    [
      'an index of attestations only',
      { ...BUILDX_INDEX, manifests: [BUILDX_INDEX.manifests[1]!] },
      {
        unsupported:
          'index application/vnd.oci.image.index.v1+json, entries application/vnd.oci.image.manifest.v1+json, no entry is a platform image',
      },
    ],
    [
      'many distinct layer types, listed up to five',
      { ...HELM_CHART, layers: [1, 2, 3, 4, 5, 6, 7].map((i) => ({ mediaType: `application/x-${i}` })) },
      {
        unsupported:
          'manifest application/vnd.oci.image.manifest.v1+json, config application/vnd.cncf.helm.config.v1+json, layers application/x-1, application/x-2, application/x-3, application/x-4, application/x-5 and 2 more',
      },
    ],
  ])('%s', (_name, manifest, expected) => {
    expect(classify(manifest)).toEqual(expected);
  });
});

describe('readResult', () => {
  const configMap = (data: JsonObject) => observe({ spec: { forProvider: { manifest: { kind: 'ConfigMap' } } } }, { fields: { data } });
  it.each<[string, JsonObject | undefined, ReturnType<typeof readResult>['state']]>([
    ['no ConfigMap observed', undefined, 'none'],
    ['an empty ConfigMap', configMap({}), 'none'],
    ['a result for another reference', configMap(result(IMAGE, 'other:v1').data), 'none'],
    ['a half-written result', configMap({ ref: REF, digest: result(IMAGE).digest }), 'none'],
    ['an error for this reference', configMap({ ref: REF, error: 'denied' }), 'error'],
    ['a manifest that is not JSON', configMap({ ref: REF, digest: sha('<html>'), manifest: '<html>' }), 'unsupported'],
    ['a manifest that is a list', configMap({ ref: REF, digest: sha('[]'), manifest: '[]' }), 'unsupported'],
    ['a result', configMap(result(IMAGE).data), 'resolved'],
  ])('%s', (_name, observed, state) => {
    expect(readResult(observed, REF).state).toBe(state);
  });

  it('keeps only the end of a long error (where the registry says why)', () => {
    const long = `${'x'.repeat(2000)} UNAUTHORIZED`;
    const read = readResult(configMap({ ref: REF, error: long }), REF);
    expect(read.state === 'error' && read.error.length).toBeLessThanOrEqual(501);
    expect(read.state === 'error' && read.error.endsWith('UNAUTHORIZED')).toBe(true);
  });
});
