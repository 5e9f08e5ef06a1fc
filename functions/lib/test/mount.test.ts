import { describe, expect, it } from 'vitest';
import {
  claimMount,
  huggingFaceMount,
  isReadOnly,
  modelDirectory,
  ociImageMount,
  ociModelArtifactMount,
  validateMount,
  type JsonObject,
} from '#lib';

const hf = huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' });

describe('builders', () => {
  it('HuggingFace: the PVC read-write at /mnt/models with the hub cache, offline, the repo id and the revision', () => {
    expect(hf).toEqual({
      volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'modelcache-ml-team-qwen-17db2' } }],
      volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models' }],
      env: [
        { name: 'HF_HUB_CACHE', value: '/mnt/models' },
        { name: 'HF_HUB_OFFLINE', value: '1' },
        { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
        { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
      ],
    });
    expect(isReadOnly(hf)).toBe(false);
  });

  it('HuggingFace: a staged revision is published as it was staged', () => {
    const pinned = huggingFaceMount({ claimName: 'c', repo: 'Qwen/Qwen3-0.6B', revision: 'v2.1' });
    expect(pinned.env).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: 'v2.1' });
  });

  it('OCI image: an image volume pinned to the digest, read-only, with pull secrets', () => {
    const mount = ociImageMount({ reference: 'reg.io/m/qwen@sha256:abc', imagePullSecrets: ['regcred'] });
    expect(mount).toEqual({
      volumes: [{ name: 'model-cache', image: { reference: 'reg.io/m/qwen@sha256:abc', pullPolicy: 'IfNotPresent' } }],
      volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models', readOnly: true }],
      env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models' }],
      imagePullSecrets: [{ name: 'regcred' }],
    });
    expect(isReadOnly(mount)).toBe(true);
  });

  it('OCI model artifact: the ModelPack CSI driver, no pull secrets', () => {
    expect(ociModelArtifactMount({ reference: 'reg.io/m/qwen@sha256:abc' }).volumes).toEqual([
      {
        name: 'model-cache',
        csi: {
          driver: 'model.csi.modelpack.org',
          readOnly: true,
          volumeAttributes: { 'model.csi.modelpack.org/reference': 'reg.io/m/qwen@sha256:abc' },
        },
      },
    ]);
  });

  it('subPath: only that directory, mounted where MODELPLANE_MODEL points', () => {
    const mount = claimMount({ claimName: 'qwen-weights', subPath: 'qwen/v1' });
    expect(mount.volumeMounts).toEqual([{ name: 'model-cache', mountPath: '/mnt/models/qwen/v1', subPath: 'qwen/v1', readOnly: true }]);
    expect(mount.env).toEqual([{ name: 'MODELPLANE_MODEL', value: '/mnt/models/qwen/v1' }]);
    expect(modelDirectory()).toBe('/mnt/models');
  });

  it('every builder output passes validateMount', () => {
    for (const mount of [
      hf,
      ociImageMount({ reference: 'r@sha256:1', subPath: 'w' }),
      ociModelArtifactMount({ reference: 'r@sha256:1', subPath: 'w' }),
      claimMount({ claimName: 'c' }),
      claimMount({ claimName: 'c', subPath: 'x' }),
    ]) {
      expect(validateMount(mount)).toEqual({ ok: true, mount });
    }
  });
});

function withChange(change: (m: JsonObject) => void): JsonObject {
  const mount = structuredClone(hf) as unknown as JsonObject;
  change(mount);
  return mount;
}
const volumes = (m: JsonObject) => m['volumes'] as JsonObject[];
const mounts = (m: JsonObject) => m['volumeMounts'] as JsonObject[];
const env = (m: JsonObject) => m['env'] as JsonObject[];

describe('validateMount refuses what is outside the subset', () => {
  const cases: [string, unknown, string][] = [
    ['not an object', 'mount', 'mount must be an object'],
    [
      'a hostPath volume',
      withChange((m) => volumes(m).push({ name: 'host', hostPath: { path: '/' } })),
      'mount.volumes[1].hostPath is not allowed',
    ],
    [
      'a secret volume',
      withChange((m) => (volumes(m)[0] = { name: 'model-cache', secret: { secretName: 's' } })),
      'mount.volumes[0].secret is not allowed',
    ],
    [
      'valueFrom in env',
      withChange((m) => env(m).push({ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } })),
      'mount.env[4].valueFrom is not allowed',
    ],
    ['the reserved dshm name', withChange((m) => (volumes(m)[0]!['name'] = 'dshm')), 'mount.volumes[0].name "dshm" is reserved'],
    ['the HOME scratch name', withChange((m) => (volumes(m)[0]!['name'] = 'modelplane-home')), 'is reserved for the engine pod'],
    [
      'the NIXL shared-memory name',
      withChange((m) => (volumes(m)[0]!['name'] = 'nixl-shm')),
      'mount.volumes[0].name "nixl-shm" is reserved',
    ],
    [
      'a mount of an undeclared volume',
      withChange((m) => (mounts(m)[0]!['name'] = 'other')),
      'mount.volumeMounts[0].name must name a volume in mount.volumes',
    ],
    [
      'two sources in one volume',
      withChange((m) => (volumes(m)[0]!['image'] = { reference: 'r' })),
      'must have exactly one of persistentVolumeClaim, image or csi (got 2)',
    ],
    [
      'no source',
      withChange((m) => (volumes(m)[0] = { name: 'model-cache' })),
      'must have exactly one of persistentVolumeClaim, image or csi (got 0)',
    ],
    [
      'another CSI driver',
      withChange((m) => (volumes(m)[0] = { name: 'model-cache', csi: { driver: 'secrets-store.csi.k8s.io' } })),
      '.csi.driver must be model.csi.modelpack.org',
    ],
    [
      'a mount outside /mnt/models',
      withChange((m) => (mounts(m)[0]!['mountPath'] = '/etc')),
      'mountPath must be /mnt/models or a path below it',
    ],
    [
      'a mount that climbs out',
      withChange((m) => (mounts(m)[0]!['mountPath'] = '/mnt/models/../etc')),
      'mountPath must be /mnt/models or a path below it',
    ],
    ['a subPath that climbs out', withChange((m) => (mounts(m)[0]!['subPath'] = '../x')), 'subPath must be a relative path'],
    ['mountPropagation', withChange((m) => (mounts(m)[0]!['mountPropagation'] = 'Bidirectional')), 'mountPropagation is not allowed'],
    [
      'no MODELPLANE_MODEL',
      withChange((m) => (m['env'] = env(m).filter((e) => e['name'] !== 'MODELPLANE_MODEL'))),
      'mount.env must set MODELPLANE_MODEL',
    ],
    [
      'LD_PRELOAD, a variable the project does not publish',
      withChange((m) => env(m).push({ name: 'LD_PRELOAD', value: '/mnt/models/hook.so' })),
      'mount.env[4].name LD_PRELOAD is not a variable a cache mount may set (only MODELPLANE_MODEL, MODELPLANE_MODEL_REVISION, HF_HUB_CACHE, HF_HUB_OFFLINE, MODELPLANE_WORKLOAD_NAMESPACE)',
    ],
    [
      'a workload namespace that is not a namespace name',
      withChange((m) => env(m).push({ name: 'MODELPLANE_WORKLOAD_NAMESPACE', value: 'mp-team; rm -rf /' })),
      'mount.env[4].value of MODELPLANE_WORKLOAD_NAMESPACE must be a namespace name (a DNS label)',
    ],
    [
      'PYTHONPATH into the model volume',
      withChange((m) => env(m).push({ name: 'PYTHONPATH', value: '/mnt/models' })),
      'mount.env[4].name PYTHONPATH is not a variable a cache mount may set',
    ],
    [
      'HF_HUB_CACHE outside the model volume',
      withChange((m) => (env(m)[0]!['value'] = '/etc')),
      'mount.env[0].value of HF_HUB_CACHE must be /mnt/models or a path below it',
    ],
    ['HF_HUB_OFFLINE other than 1', withChange((m) => (env(m)[1]!['value'] = '0')), 'mount.env[1].value of HF_HUB_OFFLINE must be "1"'],
    ['an env name twice', withChange((m) => env(m).push({ name: 'HF_HUB_CACHE', value: '/x' })), 'HF_HUB_CACHE is set twice'],
    ['a bad env name', withChange((m) => env(m).push({ name: 'A=B', value: 'x' })), 'must be an environment variable name'],
    ['a non-string env value', withChange((m) => (env(m)[0]!['value'] = 3)), 'mount.env[0].value must be a string'],
    [
      'an unknown top-level field',
      withChange((m) => (m['securityContext'] = { privileged: true })),
      'mount.securityContext is not allowed',
    ],
    [
      'too many volumes',
      withChange((m) => volumes(m).push(...[1, 2, 3, 4].map((i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: 'c' } })))),
      'mount.volumes must have 1 to 4 entries',
    ],
    [
      'a bad pull secret',
      withChange((m) => (m['imagePullSecrets'] = [{ name: 'Bad_Name' }])),
      'mount.imagePullSecrets[0].name must be a Secret name',
    ],
    [
      'a bad pull policy',
      withChange((m) => (volumes(m)[0] = { name: 'model-cache', image: { reference: 'r', pullPolicy: 'Sometimes' } })),
      'pullPolicy must be one of',
    ],
  ];
  it.each(cases)('%s', (_name, value, problem) => {
    const result = validateMount(value);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.join('\n')).toContain(problem);
  });
});
