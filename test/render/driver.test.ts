// The render driver against small fake function servers: selector matching,
// the requirements loop (ending early, and its cap of five extra calls),
// pipeline order, Fatal results, the XR/Composition checks, observed resources
// keyed by annotation, and the output render prints.

import { afterEach, describe, expect, it } from 'vitest';
import {
  Severity,
  Status,
  desire,
  fatalResult,
  newResponse,
  normalEvent,
  requireResources,
  selectByLabels,
  selectByName,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  warningEvent,
  type JsonObject,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { startFakeFunction, passThrough, type FakeFunction, type FakeHandler } from '#testing';
import {
  MAX_REQUIREMENTS_ITERATIONS,
  formatYamlStream,
  renderDocuments,
  renderPipeline,
  selectRequired,
  someNames,
  type RenderOptions,
} from './index.js';

const XR: JsonObject = {
  apiVersion: 'example.org/v1alpha1',
  kind: 'XThing',
  metadata: { name: 'thing', namespace: 'team', uid: 'xr-uid', labels: { team: 'ml' } },
  spec: { size: 3 },
};

function composition(...steps: [step: string, fn: string][]): JsonObject {
  return {
    apiVersion: 'apiextensions.crossplane.io/v1',
    kind: 'Composition',
    metadata: { name: 'things.example.org' },
    spec: {
      compositeTypeRef: { apiVersion: 'example.org/v1alpha1', kind: 'XThing' },
      mode: 'Pipeline',
      pipeline: steps.map(([step, fn]) => ({ step, functionRef: { name: fn } })),
    },
  };
}

function developmentFunction(name: string, target: string): JsonObject {
  return {
    apiVersion: 'pkg.crossplane.io/v1',
    kind: 'Function',
    metadata: {
      name,
      annotations: { 'render.crossplane.io/runtime': 'Development', 'render.crossplane.io/runtime-development-target': target },
    },
    spec: { package: `xpkg.example.org/${name}:v0.1.0` },
  };
}

function cluster(name: string, labels: Record<string, string>, extra: JsonObject = {}): JsonObject {
  return { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', metadata: { name, labels }, ...extra };
}

const fakes: FakeFunction[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.stop()));
});

async function fake(handler: FakeHandler): Promise<FakeFunction> {
  const started = await startFakeFunction(handler);
  fakes.push(started);
  return started;
}

/** Render a one- or more-step pipeline whose functions are the given fakes, named fn-1, fn-2, ... */
async function renderWith(
  handlers: FakeHandler[],
  options: Partial<RenderOptions> = {},
): Promise<{ out: Awaited<ReturnType<typeof renderPipeline>>; servers: FakeFunction[] }> {
  const servers = await Promise.all(handlers.map((handler) => fake(handler)));
  const out = await renderPipeline({
    compositeResource: XR,
    composition: composition(...servers.map((_, i): [string, string] => [`step-${i + 1}`, `fn-${i + 1}`])),
    functions: servers.map((server, i) => developmentFunction(`fn-${i + 1}`, server.target)),
    timeoutMs: 10_000,
    ...options,
  });
  return { out, servers };
}

function itemsOf(req: RunFunctionRequest, key: string): JsonObject[] | undefined {
  const set = req.requiredResources[key];
  return set === undefined ? undefined : set.items.map((item) => item.resource as JsonObject);
}

describe('selectRequired: resolving a requirement against the -e objects', () => {
  const objects = [
    cluster('c-2', { tier: 'a100', region: 'us' }),
    cluster('c-1', { tier: 'a100', region: 'eu' }),
    cluster('c-3', { tier: 'h100' }),
    { apiVersion: 'modelplane.ai/v1beta1', kind: 'InferenceCluster', metadata: { name: 'c-1', labels: { tier: 'a100' } } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c-1', namespace: 'team', labels: { tier: 'a100' } } },
  ];
  const names = (found: JsonObject[]) =>
    found.map((o) => `${o['apiVersion'] as string} ${o['kind'] as string}/${(o['metadata'] as JsonObject)['name'] as string}`);

  it.each<[string, Parameters<typeof selectRequired>[1], string[]]>([
    [
      'by name: that object only, of that apiVersion and kind',
      { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'c-1' },
      ['modelplane.ai/v1alpha1 InferenceCluster/c-1'],
    ],
    [
      'by name: nothing when no object of the kind has it',
      { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'c-9' },
      [],
    ],
    [
      'by name: the namespace is ignored',
      { apiVersion: 'v1', kind: 'Secret', matchName: 'c-1', namespace: 'elsewhere' },
      ['v1 Secret/c-1'],
    ],
    [
      'by labels: every object of the kind whose labels include them, in name order',
      { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchLabels: { tier: 'a100' } },
      ['modelplane.ai/v1alpha1 InferenceCluster/c-1', 'modelplane.ai/v1alpha1 InferenceCluster/c-2'],
    ],
    [
      'by labels: all labels must match',
      { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchLabels: { tier: 'a100', region: 'us' } },
      ['modelplane.ai/v1alpha1 InferenceCluster/c-2'],
    ],
    [
      'by labels: an empty map matches every object of the kind',
      { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchLabels: {} },
      [
        'modelplane.ai/v1alpha1 InferenceCluster/c-1',
        'modelplane.ai/v1alpha1 InferenceCluster/c-2',
        'modelplane.ai/v1alpha1 InferenceCluster/c-3',
      ],
    ],
    [
      'by labels: the namespace is ignored',
      { apiVersion: 'v1', kind: 'Secret', matchLabels: {}, namespace: 'elsewhere' },
      ['v1 Secret/c-1'],
    ],
    ['neither name nor labels: nothing', { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster' }, []],
  ])('%s', (_case, selector, want) => {
    expect(names(selectRequired(objects, selector))).toEqual(want);
  });
});

describe('the requirements loop', () => {
  const clusters = [cluster('a', { tier: 'a100' }), cluster('b', { tier: 'h100' })];
  const askForClusters =
    (labels: Record<string, string>): FakeHandler =>
    (req) => {
      const rsp = newResponse(req);
      requireResources(rsp, { clusters: selectByLabels('modelplane.ai/v1alpha1', 'InferenceCluster', labels) });
      return rsp;
    };

  it('calls a function that asks for nothing once', async () => {
    const { out, servers } = await renderWith([passThrough]);
    expect(servers[0]!.requests).toHaveLength(1);
    expect(out.steps).toEqual([{ step: 'step-1', functionName: 'fn-1', calls: 1 }]);
  });

  it('ends on the second call when the requirements repeat, sending what they resolve to', async () => {
    const { servers, out } = await renderWith([askForClusters({ tier: 'a100' })], { requiredResources: clusters });
    const [first, second] = servers[0]!.requests;
    expect(servers[0]!.requests).toHaveLength(2);
    expect(first!.requiredResources).toEqual({});
    expect(itemsOf(second!, 'clusters')).toEqual([clusters[0]]);
    expect(out.requirements['step-1']?.resources['clusters']).toMatchObject({
      kind: 'InferenceCluster',
      matchLabels: { labels: { tier: 'a100' } },
    });
  });

  it('sends a requirement that found nothing as an empty list, not as absent', async () => {
    const { servers } = await renderWith([askForClusters({ tier: 'tpu' })], { requiredResources: clusters });
    expect(itemsOf(servers[0]!.requests[1]!, 'clusters')).toEqual([]);
  });

  it('calls again after an empty requirements message, which differs from none (why requireResources sends none)', async () => {
    const { servers } = await renderWith([
      (req) => {
        const rsp = newResponse(req);
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- the generated type requires the field
        rsp.requirements = { extraResources: {}, resources: {}, schemas: {} };
        return rsp;
      },
    ]);
    expect(servers[0]!.requests).toHaveLength(2);
    const none = await renderWith([
      (req) => {
        const rsp = newResponse(req);
        requireResources(rsp, {});
        return rsp;
      },
    ]);
    expect(none.servers[0]!.requests).toHaveLength(1);
  });

  it('keeps calling while the requirements change, and stops once they repeat', async () => {
    // Asks for a, then b, then b again: three calls.
    const handler: FakeHandler = (req, call) => {
      const rsp = newResponse(req);
      requireResources(rsp, { cluster: selectByName('modelplane.ai/v1alpha1', 'InferenceCluster', call === 1 ? 'a' : 'b') });
      return rsp;
    };
    const { servers } = await renderWith([handler], { requiredResources: clusters });
    expect(servers[0]!.requests.map((req) => itemsOf(req, 'cluster')?.map((c) => (c['metadata'] as JsonObject)['name']))).toEqual([
      undefined,
      ['a'],
      ['b'],
    ]);
  });

  it(`gives up after ${MAX_REQUIREMENTS_ITERATIONS} extra calls when the requirements never settle`, async () => {
    const handler: FakeHandler = (req, call) => {
      const rsp = newResponse(req);
      requireResources(rsp, { cluster: selectByName('modelplane.ai/v1alpha1', 'InferenceCluster', `c-${call}`) });
      return rsp;
    };
    await expect(renderWith([handler])).rejects.toThrow(
      'cannot run pipeline step "step-1": requirements didn\'t stabilize after the maximum number of iterations (5)',
    );
    expect(fakes[0]!.requests).toHaveLength(1 + MAX_REQUIREMENTS_ITERATIONS);
  });

  it('passes the context the function returned to its next call', async () => {
    const handler: FakeHandler = (req, call) => {
      const rsp = newResponse(req);
      rsp.context = { ...(req.context ?? {}), [`call-${call}`]: true };
      requireResources(
        rsp,
        call < 3 ? { [`r-${call}`]: selectByName('v1', 'ConfigMap', 'x') } : { 'r-2': selectByName('v1', 'ConfigMap', 'x') },
      );
      return rsp;
    };
    const { servers, out } = await renderWith([handler], { context: { seed: 1 } });
    expect(servers[0]!.requests.map((req) => req.context)).toEqual([
      { seed: 1 },
      { seed: 1, 'call-1': true },
      { seed: 1, 'call-1': true, 'call-2': true },
    ]);
    expect(out.context).toEqual({
      apiVersion: 'render.crossplane.io/v1beta1',
      kind: 'Context',
      fields: { seed: 1, 'call-1': true, 'call-2': true, 'call-3': true },
    });
  });

  it("keeps a step's bootstrap requirements on every call", async () => {
    const server = await fake(askForClusters({ tier: 'h100' }));
    const comp = composition(['step-1', 'fn-1']);
    ((comp['spec'] as JsonObject)['pipeline'] as JsonObject[])[0]!['requirements'] = {
      requiredResources: [{ requirementName: 'pinned', apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', name: 'a' }],
    };
    await renderPipeline({
      compositeResource: XR,
      composition: comp,
      functions: [developmentFunction('fn-1', server.target)],
      requiredResources: clusters,
    });
    expect(server.requests.map((req) => Object.keys(req.requiredResources).sort())).toEqual([['pinned'], ['clusters', 'pinned']]);
    expect(itemsOf(server.requests[1]!, 'pinned')).toEqual([clusters[0]]);
  });
});

describe('the pipeline', () => {
  it('runs the steps in order, each on the desired state and context the one before returned', async () => {
    const first: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'bucket', { apiVersion: 'example.org/v1', kind: 'Bucket', spec: { from: 'first' } });
      setCompositeStatus(rsp, { first: true });
      rsp.context = { 'example.org/seen': ['first'] };
      normalEvent(rsp, 'Composed', 'first says hello');
      return rsp;
    };
    const second: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'queue', {
        apiVersion: 'example.org/v1',
        kind: 'Queue',
        spec: { sawBucket: Object.hasOwn(req.desired?.resources ?? {}, 'bucket') },
      });
      setCompositeStatus(rsp, { second: true });
      warningEvent(rsp, 'Careful', 'second warns');
      return rsp;
    };
    const { out, servers } = await renderWith([first, second]);
    expect(servers[1]!.requests[0]!.context).toEqual({ 'example.org/seen': ['first'] });
    expect(servers[1]!.requests[0]!.desired?.resources['bucket']?.resource).toEqual({
      apiVersion: 'example.org/v1',
      kind: 'Bucket',
      spec: { from: 'first' },
    });
    expect(out.composedResources.map((r) => r['kind'])).toEqual(['Bucket', 'Queue']);
    expect(out.composedResources[1]!['spec']).toEqual({ sawBucket: true });
    expect(out.compositeResource['status']).toMatchObject({ first: true, second: true });
    expect(out.results).toEqual([
      {
        apiVersion: 'render.crossplane.io/v1beta1',
        kind: 'Result',
        step: 'step-1',
        severity: 'SEVERITY_NORMAL',
        message: 'first says hello',
      },
      { apiVersion: 'render.crossplane.io/v1beta1', kind: 'Result', step: 'step-2', severity: 'SEVERITY_WARNING', message: 'second warns' },
    ]);
  });

  it('sends the first step empty desired state and the observed XR', async () => {
    const { servers } = await renderWith([passThrough]);
    const req = servers[0]!.requests[0]!;
    expect(req.desired).toEqual({ composite: undefined, resources: {} });
    expect(req.observed?.composite?.resource).toEqual(XR);
    expect(req.context).toEqual({});
  });

  it('stops at a Fatal result: no further call, no further step, and the message in the error', async () => {
    const fatal: FakeHandler = (req, call) => {
      const rsp = newResponse(req);
      requireResources(rsp, { changing: selectByName('v1', 'ConfigMap', `cm-${call}`) });
      fatalResult(rsp, 'spec.size must be even');
      return rsp;
    };
    const attempt = renderWith([fatal, passThrough]);
    await expect(attempt).rejects.toThrow('pipeline step "step-1" returned a fatal result: spec.size must be even');
    await attempt.catch((error: unknown) => {
      expect((error as { requirements: Record<string, unknown> }).requirements).toHaveProperty('step-1');
    });
    expect(fakes[0]!.requests).toHaveLength(1);
    expect(fakes[1]!.requests).toHaveLength(0);
  });

  it('names the step and the function when a step references a Function the file lacks', async () => {
    const server = await fake(passThrough);
    const attempt = renderPipeline({
      compositeResource: XR,
      composition: composition(['step-1', 'fn-1'], ['step-2', 'fn-missing']),
      functions: [developmentFunction('fn-1', server.target)],
    });
    await expect(attempt).rejects.toThrow(
      'cannot run pipeline step "step-2": unknown Function "fn-missing" - does it exist in your Functions file?',
    );
  });

  it.each<[string, (comp: JsonObject) => void, string]>([
    [
      'a Composition for another kind',
      (comp) => ((comp['spec'] as JsonObject)['compositeTypeRef'] = { apiVersion: 'example.org/v1alpha1', kind: 'XOther' }),
      "composition's compositeTypeRef.kind (XOther) does not match XR's kind (XThing)",
    ],
    [
      'a Composition for another version',
      (comp) => ((comp['spec'] as JsonObject)['compositeTypeRef'] = { apiVersion: 'example.org/v1', kind: 'XThing' }),
      "composition's compositeTypeRef.apiVersion (example.org/v1) does not match XR's apiVersion (example.org/v1alpha1)",
    ],
    [
      'a Composition not in Pipeline mode',
      (comp) => ((comp['spec'] as JsonObject)['mode'] = 'Resources'),
      'render only supports Composition Function pipelines: Composition "things.example.org" must use spec.mode: Pipeline',
    ],
    [
      'something that is not a Composition',
      (comp) => (comp['kind'] = 'CompositionRevision'),
      'not a composition: CompositionRevision/things.example.org',
    ],
  ])('refuses %s before calling anything', async (_case, breakIt, message) => {
    const server = await fake(passThrough);
    const comp = composition(['step-1', 'fn-1']);
    breakIt(comp);
    await expect(
      renderPipeline({ compositeResource: XR, composition: comp, functions: [developmentFunction('fn-1', server.target)] }),
    ).rejects.toThrow(message);
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a Composition that lacks a label the XR's composition selector asks for", async () => {
    const xr = { ...XR, spec: { crossplane: { compositionSelector: { matchLabels: { provider: 'local' } } } } };
    await expect(renderPipeline({ compositeResource: xr, composition: composition(), functions: [] })).rejects.toThrow(
      'composition "things.example.org" is missing required label "provider"',
    );
  });

  it.each<[string, JsonObject, string]>([
    [
      "the Docker runtime (render's default)",
      { apiVersion: 'pkg.crossplane.io/v1', kind: 'Function', metadata: { name: 'fn-1' } },
      'it uses the Docker runtime',
    ],
    [
      'an unknown runtime',
      {
        apiVersion: 'pkg.crossplane.io/v1',
        kind: 'Function',
        metadata: { name: 'fn-1', annotations: { 'render.crossplane.io/runtime': 'wat' } },
      },
      'unsupported "render.crossplane.io/runtime" annotation value "wat" (unknown runtime)',
    ],
    [
      'something that is not a Function',
      { apiVersion: 'pkg.crossplane.io/v1', kind: 'Provider', metadata: { name: 'p' } },
      'not a function: Provider/p',
    ],
  ])('refuses %s', async (_case, fn, message) => {
    await expect(renderPipeline({ compositeResource: XR, composition: composition(['step-1', 'fn-1']), functions: [fn] })).rejects.toThrow(
      message,
    );
  });

  it('reaches a Function at the target -a sets for every Function', async () => {
    const server = await fake(passThrough);
    await renderPipeline({
      compositeResource: XR,
      composition: composition(['step-1', 'fn-1']),
      functions: [developmentFunction('fn-1', '127.0.0.1:1')],
      functionAnnotations: { 'render.crossplane.io/runtime-development-target': server.target },
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('observed resources', () => {
  const observedBucket: JsonObject = {
    apiVersion: 'example.org/v1',
    kind: 'Bucket',
    metadata: { name: 'thing-x7k2p', namespace: 'team', annotations: { 'crossplane.io/composition-resource-name': 'bucket' } },
    status: { atProvider: { ready: true } },
  };

  it('reach functions keyed by their composition-resource-name annotation', async () => {
    const { servers } = await renderWith([passThrough], { observedResources: [observedBucket] });
    const observed = servers[0]!.requests[0]!.observed?.resources ?? {};
    expect(Object.keys(observed)).toEqual(['bucket']);
    expect(observed['bucket']?.resource).toEqual(observedBucket);
  });

  it('give their name to the desired resource of the same key; new ones get the XR name as generateName', async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'bucket', { apiVersion: 'example.org/v1', kind: 'Bucket', metadata: { generateName: 'ignored-' } });
      desire(rsp, 'queue', { apiVersion: 'example.org/v1', kind: 'Queue' });
      desire(rsp, 'named', { apiVersion: 'example.org/v1', kind: 'Topic', metadata: { name: 'my-topic', namespace: 'other' } });
      return rsp;
    };
    const { out } = await renderWith([handler], { observedResources: [observedBucket] });
    expect(out.composedResources.map((r) => r['metadata'])).toEqual([
      expect.objectContaining({ name: 'thing-x7k2p', namespace: 'team' }),
      expect.objectContaining({ name: 'my-topic', namespace: 'team' }),
      expect.objectContaining({ generateName: 'thing-', namespace: 'team' }),
    ]);
    expect(out.composedResources[0]!['metadata']).not.toHaveProperty('generateName');
  });
});

describe("render's output", () => {
  it('marks each composed resource with its key, the composite label and the XR as controller', async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'bucket', {
        apiVersion: 'example.org/v1',
        kind: 'Bucket',
        metadata: { labels: { mine: 'yes' }, annotations: { note: 'kept' } },
      });
      return rsp;
    };
    const { out } = await renderWith([handler]);
    expect(out.composedResources[0]).toEqual({
      apiVersion: 'example.org/v1',
      kind: 'Bucket',
      metadata: {
        generateName: 'thing-',
        namespace: 'team',
        labels: { mine: 'yes', 'crossplane.io/composite': 'thing' },
        annotations: { note: 'kept', 'crossplane.io/composition-resource-name': 'bucket' },
        ownerReferences: [
          { apiVersion: 'example.org/v1alpha1', kind: 'XThing', name: 'thing', uid: 'xr-uid', controller: true, blockOwnerDeletion: true },
        ],
      },
    });
  });

  it("uses a nested XR's composite label and carries claim labels", async () => {
    const nested = {
      ...XR,
      metadata: {
        name: 'child',
        namespace: 'team',
        labels: { 'crossplane.io/composite': 'root', 'crossplane.io/claim-name': 'c', 'crossplane.io/claim-namespace': 'ns' },
      },
    };
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'bucket', { apiVersion: 'example.org/v1', kind: 'Bucket' });
      return rsp;
    };
    const { out } = await renderWith([handler], { compositeResource: nested });
    expect(out.composedResources[0]!['metadata']).toMatchObject({
      generateName: 'root-',
      labels: { 'crossplane.io/composite': 'root', 'crossplane.io/claim-name': 'c', 'crossplane.io/claim-namespace': 'ns' },
      ownerReferences: [{ name: 'child', uid: '' }],
    });
  });

  it('refuses a composed resource another owner already controls', async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      const ownerReferences = [{ apiVersion: 'v1', kind: 'Other', name: 'boss', uid: 'other-uid', controller: true }];
      desire(rsp, 'bucket', { apiVersion: 'example.org/v1', kind: 'Bucket', metadata: { name: 'b', ownerReferences } });
      return rsp;
    };
    await expect(renderWith([handler])).rejects.toThrow(
      'cannot render composed resource "bucket" metadata: cannot set composite resource "thing" as controller ref of composed resource: b is already controlled by Other boss (UID other-uid)',
    );
  });

  it.each<[string, (rsp: RunFunctionResponse) => void, JsonObject]>([
    [
      'every resource ready',
      (rsp) => {
        desire(rsp, 'a', { kind: 'A' }, true);
      },
      { type: 'Ready', status: 'True', reason: 'Available' },
    ],
    ['nothing composed', () => undefined, { type: 'Ready', status: 'True', reason: 'Available' }],
    [
      'unready resources and no verdict on the XR',
      (rsp) => {
        for (const key of ['d', 'b', 'a', 'c']) desire(rsp, key, { kind: key.toUpperCase() });
        desire(rsp, 'e', { kind: 'E' }, true);
      },
      { type: 'Ready', status: 'False', reason: 'Creating', message: 'Unready resources: a, b, c, and 1 more' },
    ],
    [
      'the XR marked not ready',
      (rsp) => {
        desire(rsp, 'a', { kind: 'A' }, true);
        setCompositeReady(rsp, false);
      },
      { type: 'Ready', status: 'False', reason: 'Creating' },
    ],
    [
      'the XR marked ready, though resources are not',
      (rsp) => {
        desire(rsp, 'a', { kind: 'A' });
        setCompositeReady(rsp, true);
      },
      { type: 'Ready', status: 'True', reason: 'Available' },
    ],
  ])('sets the XR Ready condition as render does with %s', async (_case, compose, ready) => {
    const { out } = await renderWith([
      (req) => {
        const rsp = newResponse(req);
        compose(rsp);
        return rsp;
      },
    ]);
    expect((out.compositeResource['status'] as JsonObject)['conditions']).toEqual([
      { ...ready, lastTransitionTime: '2024-01-01T00:00:00Z' },
    ]);
  });

  it("adds the functions' conditions after Ready, but never a Ready, Synced or Healthy of theirs", async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      setCondition(rsp, { type: 'ArtifactReady', status: false, reason: 'Hydrating', message: 'waiting on cluster-a' });
      setCondition(rsp, { type: 'Ready', status: true, reason: 'Mine' });
      setCondition(rsp, { type: 'Synced', status: false, reason: 'Mine' });
      rsp.conditions.push({ type: 'Odd', status: Status.STATUS_CONDITION_UNSPECIFIED, reason: 'Unsure' });
      return rsp;
    };
    const { out } = await renderWith([handler]);
    expect((out.compositeResource['status'] as JsonObject)['conditions']).toEqual([
      { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2024-01-01T00:00:00Z' },
      {
        type: 'ArtifactReady',
        status: 'False',
        reason: 'Hydrating',
        message: 'waiting on cluster-a',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      },
      { type: 'Odd', status: 'Unknown', reason: 'Unsure', lastTransitionTime: '2024-01-01T00:00:00Z' },
    ]);
  });

  it("lets a later step's condition replace an earlier one of the same type", async () => {
    const says =
      (status: boolean, reason: string): FakeHandler =>
      (req) => {
        const rsp = newResponse(req);
        setCondition(rsp, { type: 'ArtifactReady', status, reason });
        return rsp;
      };
    const { out } = await renderWith([says(false, 'Hydrating'), says(true, 'Staged')]);
    expect((out.compositeResource['status'] as JsonObject)['conditions']).toEqual([
      expect.objectContaining({ type: 'Ready' }),
      expect.objectContaining({ type: 'ArtifactReady', status: 'True', reason: 'Staged' }),
    ]);
  });

  it('prints only the XR identity and status by default, the input metadata and spec with -x', async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      setCompositeStatus(rsp, { summary: { ready: '1/1' } });
      return rsp;
    };
    const plain = await renderWith([handler]);
    expect(Object.keys(plain.out.compositeResource).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'status']);
    expect(plain.out.compositeResource['metadata']).toEqual({ name: 'thing', namespace: 'team' });
    const full = await renderWith([handler], { includeFullXr: true });
    expect(full.out.compositeResource).toMatchObject({ metadata: XR['metadata'], spec: XR['spec'], status: { summary: { ready: '1/1' } } });
  });

  it('prints the XR, the composed resources by key, then results and context when asked, as a YAML stream', async () => {
    const handler: FakeHandler = (req) => {
      const rsp = newResponse(req);
      desire(rsp, 'z-last', { apiVersion: 'v1', kind: 'ConfigMap', data: { on: 'yes' } });
      desire(rsp, 'a-first', { apiVersion: 'v1', kind: 'ConfigMap' });
      rsp.results.push({ severity: Severity.SEVERITY_NORMAL, message: 'hello' });
      return rsp;
    };
    const { out } = await renderWith([handler]);
    expect(renderDocuments(out).map((d) => d['kind'])).toEqual(['XThing', 'ConfigMap', 'ConfigMap']);
    expect(renderDocuments(out, { includeFunctionResults: true, includeContext: true }).map((d) => d['kind'])).toEqual([
      'XThing',
      'ConfigMap',
      'ConfigMap',
      'Result',
      'Context',
    ]);
    const text = formatYamlStream(renderDocuments(out));
    expect(text.startsWith('---\napiVersion: example.org/v1alpha1\nkind: XThing\n')).toBe(true);
    expect(text.split('\n').filter((line) => line === '---')).toHaveLength(3);
    // YAML 1.1 readers (Go's) take unquoted yes/on for booleans: strings stay quoted.
    expect(text).toContain('"on": "yes"');
    expect(text.indexOf('crossplane.io/composition-resource-name: a-first')).toBeLessThan(
      text.indexOf('crossplane.io/composition-resource-name: z-last'),
    );
  });
});

describe('someNames', () => {
  it.each<[string[], string]>([
    [[], ''],
    [['b', 'a'], 'a, b'],
    [['c', 'a', 'b'], 'a, b, and c'],
    [['e', 'd', 'c', 'b', 'a'], 'a, b, c, and 2 more'],
  ])('%j -> %j', (names, want) => {
    expect(someNames(names)).toBe(want);
  });
});
