// The ModelCache XRD and Composition: the API server's view. Every CEL rule is
// shown admitting what it must and refusing what it must, with its message,
// and a test checks no rule in the XRD goes unexercised.

import { describe, expect, it } from 'vitest';
import { cacheNames, claimMount, huggingFaceMount, ociImageMount, ociModelArtifactMount, toJson, type JsonObject } from '#lib';
import { celRules, loadXrd, loadYamlDocuments, validateXr, withDefaults, xrdSchema } from '#testing';

const xrd = loadXrd('package/modelcaches/definition.yaml');
const schema = xrdSchema(xrd);
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const TIER = { 'modelplane.ai/tier': 'a100' };

const HF: JsonObject = {
  source: 'HuggingFace',
  huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 },
  clusterSelector: { matchLabels: TIER },
};
const OCI: JsonObject = { source: 'OCI', oci: { ref: 'us-docker.pkg.dev/acme/models/qwen:v1' }, clusterSelector: { matchLabels: TIER } };
const CLAIM: JsonObject = {
  source: 'PersistentVolumeClaim',
  persistentVolumeClaim: { claimName: 'qwen-weights' },
  clusterSelector: { matchLabels: TIER },
};

/** The spec without a field (a key set to undefined would still be a key). */
function without(spec: JsonObject, field: string): JsonObject {
  return Object.fromEntries(Object.entries(spec).filter(([key]) => key !== field));
}

const body = (spec: JsonObject, status?: JsonObject): JsonObject => ({
  apiVersion: 'modelplane.ai/v1alpha1',
  kind: 'ModelCache',
  metadata: { name: 'qwen', namespace: 'ml-team' },
  spec,
  ...(status ? { status } : {}),
});

describe('ModelCache XRD: admits', () => {
  it.each<[string, JsonObject]>([
    ['HuggingFace, minimal', HF],
    [
      'HuggingFace with revision and authSecret',
      {
        ...HF,
        huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'main', sizeGiB: 100000, authSecret: { name: 'hf-token', key: 'token.v2' } },
      },
    ],
    ['OCI by tag', OCI],
    ['OCI by digest', { ...OCI, oci: { ref: `reg.io/m/qwen@${DIGEST}` } }],
    ['OCI by tag and digest', { ...OCI, oci: { ref: `reg.io/m/qwen:v1@${DIGEST}` } }],
    [
      'OCI with pull secrets and a nested subPath',
      { ...OCI, oci: { ref: 'reg.io/m:v1', imagePullSecrets: [{ name: 'regcred' }], subPath: 'a/b.c/d' } },
    ],
    ['PersistentVolumeClaim', CLAIM],
    ['PersistentVolumeClaim with a subPath', { ...CLAIM, persistentVolumeClaim: { claimName: 'qwen-weights', subPath: 'qwen' } }],
    [
      'a selector on expressions only',
      { ...HF, clusterSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] } },
    ],
    [
      'a selector on labels and every operator',
      {
        ...HF,
        clusterSelector: {
          matchLabels: TIER,
          matchExpressions: [
            { key: 'a', operator: 'In', values: ['x'] },
            { key: 'b', operator: 'NotIn', values: ['y'] },
            { key: 'c', operator: 'Exists' },
            { key: 'd', operator: 'DoesNotExist', values: [] },
          ],
        },
      },
    ],
  ])('%s', (_name, spec) => {
    expect(validateXr(xrd, body(spec))).toEqual([]);
  });

  it('defaults authSecret.key to HF_TOKEN', () => {
    const withKey = withDefaults(
      schema,
      body({ ...HF, huggingFace: { repo: 'r', sizeGiB: 1, authSecret: { name: 'hf-token' } } }),
    ) as JsonObject;
    expect(((withKey['spec'] as JsonObject)['huggingFace'] as JsonObject)['authSecret']).toEqual({ name: 'hf-token', key: 'HF_TOKEN' });
  });
});

// Every refusal by a CEL rule: the rule's path and message, exactly as the API server reports it.
const CEL_REFUSALS: [string, JsonObject, string][] = [
  ['HuggingFace without huggingFace', without(HF, 'huggingFace'), 'spec: spec.huggingFace is required when spec.source is HuggingFace.'],
  ['OCI without oci', without(OCI, 'oci'), 'spec: spec.oci is required when spec.source is OCI.'],
  [
    'PersistentVolumeClaim without persistentVolumeClaim',
    without(CLAIM, 'persistentVolumeClaim'),
    'spec: spec.persistentVolumeClaim is required when spec.source is PersistentVolumeClaim.',
  ],
  [
    'OCI with a huggingFace sibling too',
    { ...OCI, huggingFace: { repo: 'r', sizeGiB: 1 } },
    'spec: spec.huggingFace must be absent unless spec.source is HuggingFace.',
  ],
  [
    'an include pattern starting with "-"',
    { ...HF, huggingFace: { repo: 'r', include: ['-x'] } },
    'spec.huggingFace.include[0]: a pattern must not start with "-".',
  ],
  [
    'an exclude pattern starting with "-"',
    { ...HF, huggingFace: { repo: 'r', exclude: ['-x'] } },
    'spec.huggingFace.exclude[0]: a pattern must not start with "-".',
  ],
  ['HuggingFace with an oci sibling too', { ...HF, oci: { ref: 'r:v1' } }, 'spec: spec.oci must be absent unless spec.source is OCI.'],
  [
    'OCI with a persistentVolumeClaim sibling too',
    { ...OCI, persistentVolumeClaim: { claimName: 'c' } },
    'spec: spec.persistentVolumeClaim must be absent unless spec.source is PersistentVolumeClaim.',
  ],
  [
    'an empty selector',
    { ...HF, clusterSelector: {} },
    'spec.clusterSelector: spec.clusterSelector must select on at least one label or expression; an empty selector would stage the model on every cluster.',
  ],
  [
    'a selector with empty labels and expressions',
    { ...HF, clusterSelector: { matchLabels: {}, matchExpressions: [] } },
    'spec.clusterSelector: spec.clusterSelector must select on at least one label or expression; an empty selector would stage the model on every cluster.',
  ],
  [
    'In without values',
    { ...HF, clusterSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
    'spec.clusterSelector.matchExpressions[0]: values must be set for the In and NotIn operators, and empty for Exists and DoesNotExist.',
  ],
  [
    'NotIn with empty values',
    { ...HF, clusterSelector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] } },
    'spec.clusterSelector.matchExpressions[0]: values must be set for the In and NotIn operators, and empty for Exists and DoesNotExist.',
  ],
  [
    'Exists with values',
    { ...HF, clusterSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } },
    'spec.clusterSelector.matchExpressions[0]: values must be set for the In and NotIn operators, and empty for Exists and DoesNotExist.',
  ],
  [
    'a truncated digest',
    { ...OCI, oci: { ref: 'reg.io/m@sha256:abc' } },
    'spec.oci.ref: spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits, when it names one.',
  ],
  [
    'an upper-case digest',
    { ...OCI, oci: { ref: `reg.io/m@${DIGEST.toUpperCase()}` } },
    'spec.oci.ref: spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits, when it names one.',
  ],
  [
    'a digest of another algorithm',
    { ...OCI, oci: { ref: `reg.io/m@sha512:${'a'.repeat(64)}` } },
    'spec.oci.ref: spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits, when it names one.',
  ],
  [
    'two digests',
    { ...OCI, oci: { ref: `reg.io/m@${DIGEST}@${DIGEST}` } },
    'spec.oci.ref: spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits, when it names one.',
  ],
  [
    'a repo that reads as an option',
    { ...HF, huggingFace: { repo: '--local-dir=/etc', sizeGiB: 1 } },
    'spec.huggingFace.repo: spec.huggingFace.repo must not start with "-" or contain "@".',
  ],
  [
    'a repo with a revision folded in',
    { ...HF, huggingFace: { repo: 'Qwen/Qwen3@main', sizeGiB: 1 } },
    'spec.huggingFace.repo: spec.huggingFace.repo must not start with "-" or contain "@".',
  ],
  [
    'a revision that reads as an option',
    { ...HF, huggingFace: { repo: 'r', revision: '-x', sizeGiB: 1 } },
    'spec.huggingFace.revision: spec.huggingFace.revision must not start with "-".',
  ],
  [
    'an absolute OCI subPath',
    { ...OCI, oci: { ref: 'r:v1', subPath: '/etc' } },
    'spec.oci.subPath: spec.oci.subPath must be a relative path without empty, "." or ".." segments.',
  ],
  [
    'an OCI subPath climbing out',
    { ...OCI, oci: { ref: 'r:v1', subPath: 'a/../../etc' } },
    'spec.oci.subPath: spec.oci.subPath must be a relative path without empty, "." or ".." segments.',
  ],
  [
    'a claim subPath with an empty segment',
    { ...CLAIM, persistentVolumeClaim: { claimName: 'c', subPath: 'a//b' } },
    'spec.persistentVolumeClaim.subPath: spec.persistentVolumeClaim.subPath must be a relative path without empty, "." or ".." segments.',
  ],
  [
    'a claim subPath of "."',
    { ...CLAIM, persistentVolumeClaim: { claimName: 'c', subPath: '.' } },
    'spec.persistentVolumeClaim.subPath: spec.persistentVolumeClaim.subPath must be a relative path without empty, "." or ".." segments.',
  ],
];

describe('ModelCache XRD: CEL rules refuse, with their messages', () => {
  it.each(CEL_REFUSALS)('%s', (_name, spec, problem) => {
    expect(validateXr(xrd, body(spec))).toEqual([problem]);
  });

  it('exercises every CEL rule in the XRD', () => {
    const refused = new Set(CEL_REFUSALS.map(([, spec]) => validateXr(xrd, body(spec))).flat());
    const rules = celRules(schema);
    expect(rules.length).toBe(15);
    for (const rule of rules) {
      const path = rule.path.replace(/\[\]/g, '[0]');
      expect([...refused], `${rule.path}: ${rule.rule}`).toContain(`${path}: ${rule.message}`);
    }
  });
});

describe('ModelCache XRD: the structural schema refuses', () => {
  it.each<[string, JsonObject, string]>([
    ['no source', without(HF, 'source'), 'spec.source: Required value'],
    ['an unknown source', { ...HF, source: 'S3' }, 'spec.source: must be one of HuggingFace, OCI, PersistentVolumeClaim'],
    ['no clusterSelector (a cache must name its footprint)', without(HF, 'clusterSelector'), 'spec.clusterSelector: Required value'],
    ['sizeGiB 0', { ...HF, huggingFace: { repo: 'r', sizeGiB: 0 } }, 'spec.huggingFace.sizeGiB: must be >= 1'],
    ['sizeGiB above 100000', { ...HF, huggingFace: { repo: 'r', sizeGiB: 100001 } }, 'spec.huggingFace.sizeGiB: must be <= 100000'],
    ['a fractional sizeGiB', { ...HF, huggingFace: { repo: 'r', sizeGiB: 1.5 } }, 'spec.huggingFace.sizeGiB: must be of type integer'],
    [
      'an empty include pattern',
      { ...HF, huggingFace: { repo: 'r', include: [''] } },
      'spec.huggingFace.include[0]: must be at least 1 characters',
    ],
    [
      '33 exclude patterns',
      { ...HF, huggingFace: { repo: 'r', exclude: Array.from({ length: 33 }, (_, i) => `p${i}`) } },
      'spec.huggingFace.exclude: must have at most 32 items',
    ],
    ['an empty repo', { ...HF, huggingFace: { repo: '', sizeGiB: 1 } }, 'spec.huggingFace.repo: must be at least 1 characters'],
    [
      'an authSecret without a name',
      { ...HF, huggingFace: { repo: 'r', sizeGiB: 1, authSecret: {} } },
      'spec.huggingFace.authSecret.name: Required value',
    ],
    [
      'a token key with a space',
      { ...HF, huggingFace: { repo: 'r', sizeGiB: 1, authSecret: { name: 's', key: 'a b' } } },
      'spec.huggingFace.authSecret.key: must match ^[-._a-zA-Z0-9]+$',
    ],
    ['an OCI reference with a space', { ...OCI, oci: { ref: 'reg.io/m :v1' } }, 'spec.oci.ref: must match ^\\S+$'],
    [
      'nine pull secrets',
      { ...OCI, oci: { ref: 'r:v1', imagePullSecrets: Array.from({ length: 9 }, (_, i) => ({ name: `s${i}` })) } },
      'spec.oci.imagePullSecrets: must have at most 8 items',
    ],
    ['a claim without a name', { ...CLAIM, persistentVolumeClaim: {} }, 'spec.persistentVolumeClaim.claimName: Required value'],
    [
      'an unknown operator',
      { ...HF, clusterSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } },
      'spec.clusterSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist',
    ],
  ])('%s', (_name, spec, problem) => {
    expect(validateXr(xrd, body(spec))).toContain(problem);
  });
});

describe('ModelCache XRD: status', () => {
  const digest = `sha256:${'b'.repeat(64)}`;
  it('admits the roll-up of every source, with each contract as the library builds it', () => {
    const status: JsonObject = {
      summary: { ready: '4/5' },
      clusters: [
        {
          name: 'a',
          phase: 'Ready',
          mount: toJson(huggingFaceMount({ claimName: cacheNames('ml-team', 'qwen').pvc, repo: 'Qwen/Qwen3-0.6B' })),
        },
        {
          name: 'b',
          phase: 'Ready',
          mount: toJson(ociImageMount({ reference: `reg.io/m@${digest}`, subPath: 'w', imagePullSecrets: ['regcred'] })),
          digest,
          artifactKind: 'Image',
        },
        {
          name: 'c',
          phase: 'Ready',
          mount: toJson(ociModelArtifactMount({ reference: `reg.io/m@${digest}` })),
          digest,
          artifactKind: 'ModelArtifact',
        },
        { name: 'd', phase: 'Ready', mount: toJson(claimMount({ claimName: 'qwen-weights' })), accessModes: ['ReadOnlyMany'] },
        { name: 'e', phase: 'Failed', message: 'hydration Job failed' },
      ],
      conditions: [{ type: 'ArtifactReady', status: 'False', reason: 'Partial', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    };
    expect(validateXr(xrd, body(HF, status))).toEqual([]);
  });

  it.each<[string, JsonObject, string]>([
    [
      'an unknown phase',
      { clusters: [{ name: 'a', phase: 'Done' }] },
      'status.clusters[0].phase: must be one of Pending, Hydrating, Ready, Failed',
    ],
    ['an entry without a name', { clusters: [{ phase: 'Ready' }] }, 'status.clusters[0].name: Required value'],
    [
      'an unknown artifact kind',
      { clusters: [{ name: 'a', artifactKind: 'Helm' }] },
      'status.clusters[0].artifactKind: must be one of Image, ModelArtifact',
    ],
    [
      'five volumes in a contract',
      {
        clusters: [{ name: 'a', mount: { volumes: Array.from({ length: 5 }, (_, i) => ({ name: `v${i}` })), volumeMounts: [], env: [] } }],
      },
      'status.clusters[0].mount.volumes: must have at most 4 items',
    ],
  ])('refuses %s', (_name, status, problem) => {
    expect(validateXr(xrd, body(HF, status))).toContain(problem);
  });
});

describe('ModelCache package', () => {
  it('is a namespaced v2 XRD named for its plural, with short name mc, categories, its printer columns and its Composition', () => {
    const doc = loadYamlDocuments('package/modelcaches/definition.yaml')[0] as JsonObject;
    expect(doc['apiVersion']).toBe('apiextensions.crossplane.io/v2');
    expect(doc['kind']).toBe('CompositeResourceDefinition');
    expect(xrd.metadata.name).toBe('modelcaches.modelplane.ai');
    const spec = doc['spec'] as JsonObject;
    expect(spec['group']).toBe('modelplane.ai');
    expect(spec['scope']).toBe('Namespaced');
    expect(spec['names']).toMatchObject({
      kind: 'ModelCache',
      plural: 'modelcaches',
      shortNames: ['mc'],
      categories: ['crossplane', 'modelplane'],
    });
    expect(spec['defaultCompositionRef']).toEqual({ name: 'modelcaches.modelplane.ai' });
    const [version] = spec['versions'] as JsonObject[];
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, referenceable: true });
    // Crossplane v2 appends SYNCED, READY (the Ready condition), COMPOSITION and AGE to every XR's columns;
    // declaring any of those names here would print it twice (make e2e reads the real table).
    expect((version!['additionalPrinterColumns'] as JsonObject[]).map((c) => [c['name'], c['jsonPath']])).toEqual([
      ['SOURCE', '.spec.source'],
      ['STAGED', '.status.summary.ready'],
      ['PROGRESS', '.status.summary.progress'],
    ]);
  });

  it('has a Pipeline Composition with one step calling modelplane-compose-model-cache', () => {
    const docs = loadYamlDocuments('package/modelcaches/composition.yaml');
    expect(docs).toEqual([
      {
        apiVersion: 'apiextensions.crossplane.io/v1',
        kind: 'Composition',
        metadata: { name: 'modelcaches.modelplane.ai' },
        spec: {
          compositeTypeRef: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache' },
          mode: 'Pipeline',
          pipeline: [{ step: 'compose-model-cache', functionRef: { name: 'modelplane-compose-model-cache' } }],
        },
      },
    ]);
  });
});
