// The ModelCacheHydration XRD and Composition: the package conventions, every
// CEL rule on objects it must admit and objects it must refuse (with its
// message), and a status schema that takes every mount the builders make.

import { describe, expect, it } from 'vitest';
import { claimMount, huggingFaceMount, ociImageMount, ociModelArtifactMount, type JsonObject } from '#lib';
import { celRules, loadXrd, loadYamlDocuments, validateXr, xrdSchema, type SchemaNode } from '#testing';

const xrd = loadXrd('package/modelcachehydrations/definition.yaml');
const schema = xrdSchema(xrd);
const digest = 'a'.repeat(64);

const HF = { clusterName: 'cluster-a', cacheName: 'qwen', source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 } };
const OCI = { clusterName: 'cluster-a', cacheName: 'qwen', source: 'OCI', oci: { ref: 'registry.example.com/models/qwen:v1' } };
const CLAIM = {
  clusterName: 'cluster-a',
  cacheName: 'qwen',
  source: 'PersistentVolumeClaim',
  persistentVolumeClaim: { claimName: 'weights' },
};
const AUTH = { name: 'hf-token', key: 'HF_TOKEN', namespace: 'ml-team' };

function spec(base: JsonObject, change: JsonObject = {}): JsonObject {
  const out: JsonObject = { ...base, ...change };
  for (const key of Object.keys(change)) if (change[key] === undefined) delete out[key]; // eslint-disable-line @typescript-eslint/no-dynamic-delete
  return { spec: out };
}

interface RuleCase {
  rule: string;
  admits: { body: JsonObject; old?: JsonObject }[];
  refuses: { body: JsonObject; old?: JsonObject; problem: string }[];
}

const RULES: RuleCase[] = [
  {
    rule: "self.source != 'HuggingFace' || has(self.huggingFace)",
    admits: [{ body: spec(HF) }, { body: spec(OCI) }],
    refuses: [
      { body: spec(HF, { huggingFace: undefined }), problem: 'spec: spec.huggingFace is required when spec.source is HuggingFace.' },
    ],
  },
  {
    rule: "self.source == 'HuggingFace' || !has(self.huggingFace)",
    admits: [{ body: spec(HF) }, { body: spec(CLAIM) }],
    refuses: [
      {
        body: spec(OCI, { huggingFace: HF.huggingFace }),
        problem: 'spec: spec.huggingFace must be absent unless spec.source is HuggingFace.',
      },
    ],
  },
  {
    rule: "self.source != 'OCI' || has(self.oci)",
    admits: [{ body: spec(OCI) }, { body: spec(HF) }],
    refuses: [{ body: spec(OCI, { oci: undefined }), problem: 'spec: spec.oci is required when spec.source is OCI.' }],
  },
  {
    rule: "self.source == 'OCI' || !has(self.oci)",
    admits: [{ body: spec(OCI) }, { body: spec(HF) }],
    refuses: [{ body: spec(HF, { oci: OCI.oci }), problem: 'spec: spec.oci must be absent unless spec.source is OCI.' }],
  },
  {
    rule: "self.source != 'PersistentVolumeClaim' || has(self.persistentVolumeClaim)",
    admits: [{ body: spec(CLAIM) }, { body: spec(OCI) }],
    refuses: [
      {
        body: spec(CLAIM, { persistentVolumeClaim: undefined }),
        problem: 'spec: spec.persistentVolumeClaim is required when spec.source is PersistentVolumeClaim.',
      },
    ],
  },
  {
    rule: "self.source == 'PersistentVolumeClaim' || !has(self.persistentVolumeClaim)",
    admits: [{ body: spec(CLAIM) }, { body: spec(HF) }],
    refuses: [
      {
        body: spec(OCI, { persistentVolumeClaim: CLAIM.persistentVolumeClaim }),
        problem: 'spec: spec.persistentVolumeClaim must be absent unless spec.source is PersistentVolumeClaim.',
      },
    ],
  },
  {
    rule: "self.source == 'HuggingFace' || !has(self.authSecret)",
    admits: [{ body: spec(HF, { authSecret: AUTH }) }, { body: spec(OCI) }],
    refuses: [{ body: spec(OCI, { authSecret: AUTH }), problem: 'spec: spec.authSecret applies only to the HuggingFace source.' }],
  },
  {
    rule: "!self.startsWith('-') && !self.contains('@')",
    admits: [{ body: spec(HF) }, { body: spec(HF, { huggingFace: { repo: 'meta-llama/Llama-3.1-8B', sizeGiB: 1 } }) }],
    refuses: [
      {
        body: spec(HF, { huggingFace: { repo: '--local-dir=/etc', sizeGiB: 1 } }),
        problem: 'spec.huggingFace.repo: spec.huggingFace.repo must not start with "-" or contain "@".',
      },
      {
        body: spec(HF, { huggingFace: { repo: 'Qwen/Qwen3@main', sizeGiB: 1 } }),
        problem: 'spec.huggingFace.repo: spec.huggingFace.repo must not start with "-" or contain "@".',
      },
    ],
  },
  {
    rule: "!self.startsWith('-')",
    admits: [{ body: spec(HF, { huggingFace: { repo: 'r', revision: 'main', sizeGiB: 1 } }) }],
    refuses: [
      {
        body: spec(HF, { huggingFace: { repo: 'r', revision: '--force', sizeGiB: 1 } }),
        problem: 'spec.huggingFace.revision: spec.huggingFace.revision must not start with "-".',
      },
    ],
  },
  {
    rule: "!self.startsWith('/') && !self.split('/').exists(s, s == '' || s == '.' || s == '..')",
    admits: [
      { body: spec(OCI, { oci: { ref: 'registry.example.com/models/qwen:v1', subPath: 'weights/v1' } }) },
      { body: spec(CLAIM, { persistentVolumeClaim: { claimName: 'w', subPath: 'a/...b' } }) },
    ],
    refuses: [
      {
        body: spec(OCI, { oci: { ref: 'registry.example.com/models/qwen:v1', subPath: '../etc' } }),
        problem: 'spec.oci.subPath: spec.oci.subPath must be a relative path without empty, "." or ".." segments.',
      },
      {
        body: spec(CLAIM, { persistentVolumeClaim: { claimName: 'w', subPath: '/abs' } }),
        problem:
          'spec.persistentVolumeClaim.subPath: spec.persistentVolumeClaim.subPath must be a relative path without empty, "." or ".." segments.',
      },
    ],
  },
  {
    rule: 'self == oldSelf',
    admits: [
      { body: spec(HF), old: spec(HF) },
      { body: spec(HF, { huggingFace: { repo: 'Qwen/Qwen3-8B', sizeGiB: 40 } }), old: spec(HF) },
    ],
    refuses: [
      { body: spec(HF, { clusterName: 'cluster-b' }), old: spec(HF), problem: 'spec.clusterName: spec.clusterName is immutable.' },
      { body: spec(HF, { cacheName: 'other' }), old: spec(HF), problem: 'spec.cacheName: spec.cacheName is immutable.' },
    ],
  },
  {
    rule: "!self.contains('@') || self.matches('^[^@]+@sha256:[0-9a-f]{64}$')",
    admits: [
      { body: spec(OCI) },
      { body: spec(OCI, { oci: { ref: `registry.example.com/models/qwen@sha256:${digest}` } }) },
      { body: spec(OCI, { oci: { ref: `registry.example.com/models/qwen:v1@sha256:${digest}` } }) },
    ],
    refuses: [
      ...[
        'qwen@sha256:abc',
        `qwen@sha256:${'A'.repeat(64)}`,
        `qwen@sha512:${digest}`,
        `qwen@sha256:${digest}0`,
        `qwen@sha256:${digest}@sha256:${digest}`,
        `@sha256:${digest}`,
      ].map((ref) => ({
        body: spec(OCI, { oci: { ref } }),
        problem: 'spec.oci.ref: spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits, when it names one.',
      })),
    ],
  },
];

describe('the ModelCacheHydration XRD', () => {
  it('follows the package conventions', () => {
    const doc = loadYamlDocuments('package/modelcachehydrations/definition.yaml')[0] as {
      apiVersion: string;
      spec: JsonObject & { versions: JsonObject[] };
    };
    expect(doc.apiVersion).toBe('apiextensions.crossplane.io/v2');
    expect(xrd.kind).toBe('CompositeResourceDefinition');
    expect(xrd.metadata.name).toBe('modelcachehydrations.modelplane.ai');
    expect(doc.spec).toMatchObject({
      group: 'modelplane.ai',
      names: { kind: 'ModelCacheHydration', plural: 'modelcachehydrations', categories: ['crossplane', 'modelplane'] },
      scope: 'Namespaced',
      defaultCompositionRef: { name: 'modelcachehydrations.modelplane.ai' },
    });
    const version = doc.spec.versions[0]!;
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, referenceable: true });
    expect(version['additionalPrinterColumns']).toEqual([
      { name: 'CLUSTER', type: 'string', jsonPath: '.spec.clusterName' },
      { name: 'SOURCE', type: 'string', jsonPath: '.spec.source' },
      { name: 'PHASE', type: 'string', jsonPath: '.status.phase' },
      {
        name: 'PROGRESS',
        type: 'string',
        description: 'HuggingFace; bytes staged as a percent, and whether stalled or verified.',
        jsonPath: '.status.progress.summary',
      },
    ]);
  });

  it('has a Composition with one step naming the function', () => {
    const [composition] = loadYamlDocuments('package/modelcachehydrations/composition.yaml');
    expect(composition).toEqual({
      apiVersion: 'apiextensions.crossplane.io/v1',
      kind: 'Composition',
      metadata: { name: 'modelcachehydrations.modelplane.ai' },
      spec: {
        compositeTypeRef: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCacheHydration' },
        mode: 'Pipeline',
        pipeline: [{ step: 'compose-model-cache-hydration', functionRef: { name: 'modelplane-compose-model-cache-hydration' } }],
      },
    });
  });

  describe.each(RULES)('$rule', ({ admits, refuses }) => {
    it.each(admits)('admits %j', ({ body, old }) => {
      expect(validateXr(xrd, body, old)).toEqual([]);
    });
    it.each(refuses)('refuses %j', ({ body, old, problem }) => {
      expect(validateXr(xrd, body, old)).toEqual([problem]);
    });
  });

  it('has no CEL rule this file does not test', () => {
    const tested = new Set(RULES.map((r) => r.rule));
    const untested = celRules(schema).filter((r) => !tested.has(r.rule));
    expect(untested).toEqual([]);
    // …and the immutability rule sits on both names.
    expect(
      celRules(schema)
        .filter((r) => r.rule === 'self == oldSelf')
        .map((r) => r.path),
    ).toEqual(['spec.clusterName', 'spec.cacheName']);
  });

  it('defaults the token key and keeps the structural bounds', () => {
    expect(validateXr(xrd, spec(HF, { authSecret: { name: 'hf-token' } }))).toEqual([]);
    expect(validateXr(xrd, spec(HF, { source: 'S3' }))).toContain('spec.source: must be one of HuggingFace, OCI, PersistentVolumeClaim');
    expect(validateXr(xrd, spec(HF, { huggingFace: { repo: 'r', sizeGiB: 0 } }))).toEqual(['spec.huggingFace.sizeGiB: must be >= 1']);
    expect(validateXr(xrd, { spec: { source: 'OCI', oci: OCI.oci } })).toEqual([
      'spec.clusterName: Required value',
      'spec.cacheName: Required value',
    ]);
  });

  it.each([
    ['weights', true],
    ['qwen/v1', true],
    ['.hidden/x', true],
    ['...', true],
    ['..', false],
    ['a/../b', false],
    ['./a', false],
    ['/abs', false],
    ['a//b', false],
    ['a/', false],
  ])('subPath %j is admitted: %s (the rule validateMount applies)', (subPath, admitted) => {
    const problems = validateXr(xrd, spec(OCI, { oci: { ref: OCI.oci.ref, subPath } }));
    expect(problems.length === 0).toBe(admitted);
  });

  describe('status', () => {
    const mounts = {
      huggingFace: huggingFaceMount({ claimName: 'modelcache-ml-team-qwen-17db2', repo: 'Qwen/Qwen3-0.6B' }),
      image: ociImageMount({ reference: `r.io/q@sha256:${digest}`, subPath: 'w', imagePullSecrets: ['regcred'] }),
      modelArtifact: ociModelArtifactMount({ reference: `r.io/q@sha256:${digest}` }),
      claim: claimMount({ claimName: 'weights', subPath: 'q' }),
    };
    it.each(Object.entries(mounts))('takes the %s mount', (_name, mount) => {
      const status = { phase: 'Ready', mount: mount as unknown as JsonObject, accessModes: ['ReadOnlyMany'], digest: `sha256:${digest}` };
      expect(validateXr(xrd, { ...spec(OCI), status: { ...status, artifactKind: 'Image', resolvedRef: 'r', staged: 's' } })).toEqual([]);
    });
    it('bounds the contract as the spec does', () => {
      const mount = structuredClone(mounts.claim) as unknown as { volumes: JsonObject[]; env: JsonObject[] };
      mount.volumes = [1, 2, 3, 4, 5].map((i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: 'c' } }));
      mount.env = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ name: `E${i}`, value: 'x' }));
      expect(validateXr(xrd, { ...spec(OCI), status: { mount: mount as unknown as JsonObject } })).toEqual([
        'status.mount.volumes: must have at most 4 items',
        'status.mount.env: must have at most 8 items',
      ]);
      const properties = (node: SchemaNode | undefined) => Object.keys(node?.properties ?? {});
      const status = schema.properties?.['status'];
      expect(properties(status?.properties?.['mount'])).toEqual(['volumes', 'volumeMounts', 'env', 'imagePullSecrets']);
      expect(status?.properties?.['phase']?.enum).toEqual(['Pending', 'Hydrating', 'Ready', 'Failed']);
      expect(status?.properties?.['artifactKind']?.enum).toEqual(['Image', 'ModelArtifact']);
    });
  });
});
