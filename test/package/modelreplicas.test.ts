// The ModelReplica XRD and Composition: the package conventions, upstream's
// structural schema, and every CEL rule on objects it must admit and objects
// it must refuse (with its message), evaluated as the API server would.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { celRules, loadXrd, loadYamlDocuments, validateXr, xrdSchema } from '#testing';

const xrd = loadXrd('package/modelreplicas/definition.yaml');
const schema = xrdSchema(xrd);

const GPU = { name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 1, selectors: [{ cel: 'device.driver == "gpu.nvidia.com"' }] };
const container = (over: JsonObject = {}): JsonObject => ({
  name: 'engine',
  image: 'vllm/vllm-openai:latest',
  args: ['--model=$(MODELPLANE_MODEL)'],
  ...over,
});
const member = (over: JsonObject = {}): JsonObject => ({
  role: 'Standalone',
  nodePoolName: 'frontier',
  deviceRequests: [GPU],
  template: { spec: { containers: [container()] } },
  ...over,
});
const claimless = (over: JsonObject = {}): JsonObject => {
  const out = member(over);
  delete out['deviceRequests'];
  return out;
};
const leader = (over: JsonObject = {}) => member({ role: 'Leader', ...over });
const worker = (over: JsonObject = {}) => member({ role: 'Worker', worker: { nodes: 2 }, ...over });
const engine = (over: JsonObject = {}): JsonObject => ({ name: 'main', members: [member()], ...over });
const body = (spec: JsonObject = {}): JsonObject => ({
  spec: { clusterName: 'cluster-a', modelCacheRef: { name: 'qwen' }, engines: [engine()], ...spec },
});
const withMetadata = (metadata: JsonObject): JsonObject =>
  body({ engines: [engine({ members: [member({ template: { metadata, spec: { containers: [container()] } } })] })] });
const pd = (engines: JsonObject[]): JsonObject => body({ serving: { mode: 'PrefillDecode' }, engines });
const phased = (name: string, phase: string): JsonObject => engine({ name, phase });

interface RuleCase {
  message: string;
  admits: [string, JsonObject][];
  refuses: [string, JsonObject][];
}

const RULES: RuleCase[] = [
  {
    message: 'PrefillDecode serving requires exactly two engines (one Prefill, one Decode)',
    admits: [
      ['no serving block, one engine', body()],
      [
        'Unified with three engines',
        body({ serving: { mode: 'Unified' }, engines: [engine({ name: 'a' }), engine({ name: 'b' }), engine({ name: 'c' })] }),
      ],
      ['PrefillDecode with a Prefill and a Decode engine', pd([phased('p', 'Prefill'), phased('d', 'Decode')])],
    ],
    refuses: [['PrefillDecode with one engine', pd([phased('p', 'Prefill')])]],
  },
  {
    message: 'PrefillDecode serving requires exactly one engine with phase Prefill',
    admits: [['one Prefill and one Decode', pd([phased('p', 'Prefill'), phased('d', 'Decode')])]],
    refuses: [['two Decode engines', pd([phased('a', 'Decode'), phased('b', 'Decode')])]],
  },
  {
    message: 'PrefillDecode serving requires exactly one engine with phase Decode',
    admits: [['one Prefill and one Decode', pd([phased('p', 'Prefill'), phased('d', 'Decode')])]],
    refuses: [['two Prefill engines', pd([phased('a', 'Prefill'), phased('b', 'Prefill')])]],
  },
  {
    message: 'engine phase may only be set when serving.mode is PrefillDecode',
    admits: [['no phase without PrefillDecode', body({ serving: { mode: 'Unified' } })]],
    refuses: [
      ['a phase under Unified', body({ serving: { mode: 'Unified' }, engines: [phased('main', 'Prefill')] })],
      ['a phase with no serving block', body({ engines: [phased('main', 'Decode')] })],
    ],
  },
  {
    message: 'an engine must be either a single Standalone member or one Leader and one Worker member',
    admits: [
      ['a single Standalone member', body()],
      [
        'a single member with the role defaulted',
        body({
          engines: [
            engine({ members: [{ nodePoolName: 'frontier', deviceRequests: [GPU], template: { spec: { containers: [container()] } } }] }),
          ],
        }),
      ],
      ['a Leader and a Worker', body({ engines: [engine({ members: [leader(), worker()] })] })],
      ['a Worker listed before its Leader', body({ engines: [engine({ members: [worker(), leader()] })] })],
    ],
    refuses: [
      ['a Leader alone', body({ engines: [engine({ members: [leader()] })] })],
      ['a Worker alone', body({ engines: [engine({ members: [worker()] })] })],
      ['two Leaders', body({ engines: [engine({ members: [leader(), leader()] })] })],
      ['a Standalone and a Worker', body({ engines: [engine({ members: [member(), worker()] })] })],
      ['two Standalone members', body({ engines: [engine({ members: [member(), member()] })] })],
    ],
  },
  {
    message: 'at least one member of an engine must carry deviceRequests',
    admits: [
      ['a claimless leader with a claiming worker', body({ engines: [engine({ members: [claimless({ role: 'Leader' }), worker()] })] })],
    ],
    refuses: [['no member claims devices', body({ engines: [engine({ members: [claimless()] })] })]],
  },
  {
    message: 'worker may only be set on a Worker member',
    admits: [['worker on a Worker', body({ engines: [engine({ members: [leader(), worker()] })] })]],
    refuses: [
      ['worker on a Standalone member', body({ engines: [engine({ members: [member({ worker: { nodes: 2 } })] })] })],
      ['worker on a Leader', body({ engines: [engine({ members: [leader({ worker: { nodes: 2 } }), worker()] })] })],
    ],
  },
  {
    message: 'member template.metadata.labels keys must not use the reserved modelplane.ai/ prefix',
    admits: [['a user label', withMetadata({ labels: { 'example.com/team': 'ml' } })]],
    refuses: [['the serving label', withMetadata({ labels: { 'modelplane.ai/serving': 'r' } })]],
  },
  {
    message: 'member template.metadata.labels keys must be valid Kubernetes label keys',
    admits: [
      ['a prefixed key', withMetadata({ labels: { 'example.com/team': 'ml' } })],
      ['a plain key', withMetadata({ labels: { team: 'ml' } })],
    ],
    refuses: [
      ['a key with a space', withMetadata({ labels: { 'my team': 'ml' } })],
      ['an upper-case prefix', withMetadata({ labels: { 'Example.com/team': 'ml' } })],
    ],
  },
  {
    message: 'member template.metadata.labels key prefixes must be DNS subdomains of at most 253 characters',
    admits: [['a short prefix', withMetadata({ labels: { 'example.com/team': 'ml' } })]],
    refuses: [
      [
        'a prefix over 253 characters',
        withMetadata({ labels: { [`${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.abcdefghijklm/team`]: 'ml' } }),
      ],
    ],
  },
  {
    message: 'member template.metadata.labels values must be valid Kubernetes label values',
    admits: [
      ['a value', withMetadata({ labels: { team: 'ml-infra_1.0' } })],
      ['an empty value', withMetadata({ labels: { team: '' } })],
    ],
    refuses: [['a value ending in a dash', withMetadata({ labels: { team: 'ml-' } })]],
  },
  {
    message: 'member template.metadata.annotations keys must be valid Kubernetes annotation keys',
    admits: [['a prefixed key', withMetadata({ annotations: { 'example.com/config': 'any value at all: {"x": 1}' } })]],
    refuses: [['a key with a slash at the end', withMetadata({ annotations: { 'example.com/': 'x' } })]],
  },
  {
    message: 'member template.metadata.annotations key prefixes must be DNS subdomains of at most 253 characters',
    admits: [['a short prefix', withMetadata({ annotations: { 'example.com/config': 'x' } })]],
    refuses: [
      [
        'a prefix over 253 characters',
        withMetadata({
          annotations: { [`${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.abcdefghijklm/config`]: 'x' },
        }),
      ],
    ],
  },
  {
    message: "the single container must be named 'engine'",
    admits: [['a container named engine', body()]],
    refuses: [
      [
        'a container named vllm',
        body({ engines: [engine({ members: [member({ template: { spec: { containers: [container({ name: 'vllm' })] } } })] })] }),
      ],
    ],
  },
];

describe('ModelReplica XRD', () => {
  it('follows the package conventions', () => {
    const doc = loadYamlDocuments('package/modelreplicas/definition.yaml')[0] as JsonObject;
    expect(doc).toMatchObject({
      apiVersion: 'apiextensions.crossplane.io/v2',
      kind: 'CompositeResourceDefinition',
      metadata: { name: 'modelreplicas.modelplane.ai' },
      spec: {
        group: 'modelplane.ai',
        names: { kind: 'ModelReplica', plural: 'modelreplicas', shortNames: ['mr'], categories: ['crossplane', 'modelplane'] },
        scope: 'Namespaced',
        defaultCompositionRef: { name: 'modelreplicas.modelplane.ai' },
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            referenceable: true,
            additionalPrinterColumns: [{ name: 'CLUSTER', type: 'string', jsonPath: '.spec.clusterName' }],
          },
        ],
      },
    });
  });

  it('admits upstream’s replica fixtures as they are', () => {
    expect(validateXr(xrd, body())).toEqual([]);
    expect(
      validateXr(xrd, { spec: { clusterName: 'cluster-a', engines: [engine({ members: [leader(), worker()], copies: 2 })] } }),
    ).toEqual([]);
  });

  it('applies the defaults: role Standalone, copies 1, count 1, serving Unified', () => {
    const problems = validateXr(xrd, {
      spec: {
        clusterName: 'c',
        serving: {},
        engines: [
          {
            name: 'main',
            members: [
              {
                nodePoolName: 'p',
                deviceRequests: [{ name: 'gpu', deviceClassName: 'g' }],
                template: { spec: { containers: [{ name: 'engine', image: 'i' }] } },
              },
            ],
          },
        ],
      },
    });
    expect(problems).toEqual([]);
  });

  it.each<[string, JsonObject, string]>([
    ['no clusterName', { spec: { engines: [engine()] } }, 'spec.clusterName: Required value'],
    ['no engines', { spec: { clusterName: 'c', engines: [] } }, 'spec.engines: must have at least 1 items'],
    [
      'nine engines',
      body({ engines: Array.from({ length: 9 }, (_, i) => engine({ name: `e${i}` })) }),
      'spec.engines: must have at most 8 items',
    ],
    ['copies 65', body({ engines: [engine({ copies: 65 })] }), 'spec.engines[0].copies: must be <= 64'],
    [
      'three members',
      body({ engines: [engine({ members: [leader(), worker(), worker()] })] }),
      'spec.engines[0].members: must have at most 2 items',
    ],
    [
      'an unknown role',
      body({ engines: [engine({ members: [member({ role: 'Head' })] })] }),
      'spec.engines[0].members[0].role: must be one of Standalone, Leader, Worker',
    ],
    [
      'an empty deviceRequests list',
      body({ engines: [engine({ members: [member({ deviceRequests: [] })] })] }),
      'spec.engines[0].members[0].deviceRequests: must have at least 1 items',
    ],
    [
      'an empty selector',
      body({ engines: [engine({ members: [member({ deviceRequests: [{ ...GPU, selectors: [{}] }] })] })] }),
      'spec.engines[0].members[0].deviceRequests[0].selectors[0]: must have at least 1 properties',
    ],
    [
      'worker nodes 64',
      body({ engines: [engine({ members: [leader(), worker({ worker: { nodes: 64 } })] })] }),
      'spec.engines[0].members[1].worker.nodes: must be <= 63',
    ],
    [
      'two containers',
      body({
        engines: [engine({ members: [member({ template: { spec: { containers: [container(), container({ name: 'side' })] } } })] })],
      }),
      'spec.engines[0].members[0].template.spec.containers: must have at most 1 items',
    ],
    ['an unknown serving mode', body({ serving: { mode: 'Split' } }), 'spec.serving.mode: must be one of Unified, PrefillDecode'],
    ['a cache ref without a name', body({ modelCacheRef: {} }), 'spec.modelCacheRef.name: Required value'],
  ])('refuses by structure: %s', (_name, value, problem) => {
    expect(validateXr(xrd, value)).toContain(problem);
  });

  describe.each(RULES)('CEL: $message', ({ message, admits, refuses }) => {
    it.each(admits)('admits %s', (_name, value) => {
      expect(validateXr(xrd, value)).toEqual([]);
    });
    it.each(refuses)('refuses %s', (_name, value) => {
      expect(validateXr(xrd, value).some((p) => p.endsWith(`: ${message}`))).toBe(true);
    });
  });

  it('every CEL rule in the XRD is exercised above', () => {
    const rules = celRules(schema);
    expect(rules).toHaveLength(14);
    expect(rules.map((r) => r.message).sort()).toEqual(RULES.map((r) => r.message).sort());
  });
});

describe('ModelReplica Composition', () => {
  it('runs compose-model-replica as its one pipeline step', () => {
    const docs = loadYamlDocuments('package/modelreplicas/composition.yaml');
    expect(docs).toEqual([
      {
        apiVersion: 'apiextensions.crossplane.io/v1',
        kind: 'Composition',
        metadata: { name: 'modelreplicas.modelplane.ai' },
        spec: {
          compositeTypeRef: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelReplica' },
          mode: 'Pipeline',
          pipeline: [{ step: 'compose-model-replica', functionRef: { name: 'modelplane-compose-model-replica' } }],
        },
      },
    ]);
  });
});
