// Every render example under examples/<xr>/<stage>/, rendered through the
// built function servers (on ephemeral ports) with the real `crossplane render`
// and compared with its checked-in expected.yaml (what `make render-check`
// does). An example without expected.yaml fails, saying how to write one.
//
// The expected output pins what each stage renders. What it can't pin is
// whether the inputs tell a true story, so each example is also held to:
// - its inputs are in the formats render reads, and every XR in them (the
//   stage's own, and any in -e or -o) is one its XRD admits, status included;
// - every mount contract in its inputs is one the library would publish;
// - each function asked for everything at once (two calls at most: counted
//   from the servers' `RunFunction` log lines, one per call, while render
//   runs one example at a time) and no render holds a null or a NaN;
// - what it observes is what the function composes: for a stage that
//   continues an earlier one (CHAINS), its XR carries the status and
//   conditions the earlier render wrote, and it observes exactly what that
//   render composed; for any other stage with observed resources, each is
//   what the function composes for this XR when nothing is composed yet.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asArray, compareNames, getIn, getObject, getString, isObject, validateMount, type JsonObject } from '#lib';
import { REPO_ROOT, badValues, loadXrd, parseLine, validateXr, type Xrd } from '#testing';
import { cliVersion, comparableAcrossClis, isSplitCli } from './cli.js';

const SPLIT_CLI = isSplitCli(cliVersion());
import {
  ANNOTATION,
  compositionFor,
  compositionForExample,
  findCompositions,
  findExamples,
  formatYamlStream,
  loadCompositeResource,
  missingExpectedMessage,
  parseYamlStream,
  readYamlStream,
  renderWithCrossplane,
  startExampleServers,
  type CrossplaneRender,
  type CrossplaneRenderOptions,
  type Example,
  type ExampleServers,
} from './index.js';
import { LABEL_CLAIM_NAME, LABEL_CLAIM_NAMESPACE, LABEL_COMPOSITE } from './metadata.js';

const examples = findExamples(REPO_ROOT);
const byName = new Map(examples.map((example) => [example.name, example]));

/**
 * Stages that continue an earlier stage of the same XR: [earlier, later]. A
 * later stage has one earlier stage at most.
 */
const CHAINS: [earlier: string, later: string][] = [
  ['model-cache/first-compose', 'model-cache/hydrating'],
  ['model-cache/hydrating', 'model-cache/ready'],
  ['model-cache/hydrating', 'model-cache/failed'],
  ['model-cache/first-compose', 'model-cache/progress'],
  ['model-cache/first-compose', 'model-cache/verified'],
  ['model-cache/first-compose', 'model-cache/commit-skew'],
  ['model-cache/oci-first-compose', 'model-cache/oci-ready'],
  ['model-cache/pvc-first-compose', 'model-cache/pvc-ready'],
  ['model-cache/upgrade-orphan', 'model-cache/upgrade-list'],
  ['model-cache/upgrade-list', 'model-cache/upgrade-release'],
  ['model-cache-shard/first-compose', 'model-cache-shard/hydrating'],
  ['model-cache-shard/hydrating', 'model-cache-shard/kept'],
  ['model-cache-shard/hydrating', 'model-cache-shard/dropped'],
  ['model-cache-hydration/huggingface-first-compose', 'model-cache-hydration/huggingface-hydrating'],
  ['model-cache-hydration/huggingface-hydrating', 'model-cache-hydration/huggingface-ready'],
  ['model-cache-hydration/huggingface-hydrating', 'model-cache-hydration/huggingface-failed'],
  ['model-cache-hydration/oci-first-compose', 'model-cache-hydration/oci-resolving'],
  ['model-cache-hydration/oci-resolving', 'model-cache-hydration/oci-ready-image'],
  ['model-cache-hydration/oci-resolving', 'model-cache-hydration/oci-failed-resolver'],
  ['model-cache-hydration/oci-resolving', 'model-cache-hydration/oci-failed-unsupported'],
  ['model-cache-hydration/persistentvolumeclaim-claim-missing', 'model-cache-hydration/persistentvolumeclaim-ready'],
  ['model-replica/cache-ready', 'model-replica/cache-flapped'],
];
const earlierOf = new Map(CHAINS.map(([earlier, later]) => [later, earlier]));

/** The XRD of each XR kind in package/. */
const XRDS = new Map<string, Xrd>();
for (const { file } of findCompositions(REPO_ROOT)) {
  const xrd = loadXrd(file.replace(/composition\.yaml$/, 'definition.yaml'));
  XRDS.set(xrd.spec.names.kind, xrd);
}

function keyOf(doc: JsonObject): string | undefined {
  return getString(doc, 'metadata', 'annotations', ANNOTATION.compositionResourceName);
}

/** The composed resources of a render, by key. */
function composedOf(output: CrossplaneRender): Map<string, JsonObject> {
  return new Map(output.composedResources.map((doc) => [keyOf(doc)!, doc]));
}

/** The labels a function set on a composed resource: what render adds (the composite and claim labels) left out. */
function functionLabels(doc: JsonObject): Record<string, unknown> {
  const added = new Set([LABEL_COMPOSITE, LABEL_CLAIM_NAME, LABEL_CLAIM_NAMESPACE]);
  return Object.fromEntries(Object.entries(getObject(doc, 'metadata', 'labels') ?? {}).filter(([label]) => !added.has(label)));
}

/** An observed resource is what was composed: the same spec, the name it asked for (if it named itself), its labels. */
function expectObservedAsComposed(observed: JsonObject, composed: JsonObject, where: string): void {
  expect(observed['spec'], `${where}: spec`).toEqual(composed['spec']);
  const name = getString(composed, 'metadata', 'name');
  // A name the function left to Crossplane (generateName) is random under the v2.3+ CLI.
  const generated = getString(composed, 'metadata', 'generateName') !== undefined;
  if (name !== undefined && !(SPLIT_CLI && generated)) expect(getString(observed, 'metadata', 'name'), `${where}: name`).toBe(name);
  expect(getObject(observed, 'metadata', 'labels') ?? {}, `${where}: labels`).toMatchObject(functionLabels(composed));
}

function conditionsOf(object: unknown): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  for (const raw of asArray(getIn(object, 'status', 'conditions'))) {
    // When it changed is the control plane's business, not the function's.
    if (isObject(raw))
      out.set(getString(raw, 'type') ?? '', Object.fromEntries(Object.entries(raw).filter(([field]) => field !== 'lastTransitionTime')));
  }
  return out;
}

function withoutConditions(status: unknown): JsonObject {
  return Object.fromEntries(Object.entries(isObject(status) ? status : {}).filter(([field]) => field !== 'conditions'));
}

describe('render examples', () => {
  if (examples.length === 0) {
    it('has none yet: this starts comparing renders as soon as an examples/<xr>/<stage>/ folder exists', () => {
      expect(findExamples(REPO_ROOT)).toEqual([]);
    });
    return;
  }

  let servers: ExampleServers;
  interface Rendered {
    output: CrossplaneRender;
    /** Function name -> how many RunFunction calls its server answered during this render. */
    calls: Map<string, number>;
  }
  // One render at a time, so the calls a server logs while it runs are this render's.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  /** The calls a server answered since its line `from`: its log has one `RunFunction` line per call (or `RunFunction failed`, `refused`). */
  const CALL_MESSAGES = new Set(['RunFunction', 'RunFunction failed', 'RunFunction refused']);
  const callLines = (server: { lines: string[] }, from: number): number =>
    server.lines.slice(from).filter((line) => CALL_MESSAGES.has(parseLine(line)?.['msg'] as string)).length;
  const renderCounted = (example: Example, options: CrossplaneRenderOptions): Promise<Rendered> =>
    serially(async () => {
      const before = new Map(Object.entries(servers.servers).map(([name, server]) => [name, server.lines.length]));
      const output = await renderWithCrossplane(REPO_ROOT, example, { functions: servers.functions, ...options });
      // A server logs a call before it answers it; let the last lines in.
      await new Promise((resolve) => setImmediate(resolve));
      const calls = new Map(Object.entries(servers.servers).map(([name, server]) => [name, callLines(server, before.get(name)!)]));
      return { output, calls };
    });
  const renders = new Map<string, Promise<Rendered>>();
  /** Each example rendered once (with -r, as expected.yaml holds it), however many tests read it. */
  const render = (example: Example): Promise<Rendered> => {
    let found = renders.get(example.name);
    if (!found) {
      found = renderCounted(example, { results: true });
      renders.set(example.name, found);
    }
    return found;
  };
  beforeAll(async () => {
    servers = await startExampleServers(REPO_ROOT, { ephemeralPorts: true });
  });
  afterAll(async () => {
    await servers.stop();
  });

  it('chains only stages that exist, each later stage to one earlier stage of the same XR', () => {
    for (const [earlier, later] of CHAINS) {
      expect(byName.has(earlier), earlier).toBe(true);
      expect(byName.get(later)?.observed, `${later} continues ${earlier}, so it observes what that composed`).toBeDefined();
      expect(earlier.split('/')[0]).toBe(later.split('/')[0]);
    }
    expect(earlierOf.size).toBe(CHAINS.length);
  });

  describe.each(examples.map((example) => [example.name, example] as const))('%s', (_name, example) => {
    const inputs = (): JsonObject[] => [
      ...(example.required ? readYamlStream(example.required) : []),
      ...(example.observed ? readYamlStream(example.observed) : []),
    ];

    it('has an XR with a Composition in package/, and inputs in the formats render reads', () => {
      expect(() => compositionForExample(REPO_ROOT, example)).not.toThrow();
      if (example.required) expect(readYamlStream(example.required).length).toBeGreaterThan(0);
      if (example.observed) {
        const keys = readYamlStream(example.observed).map(keyOf);
        expect(keys, 'every observed resource is annotated crossplane.io/composition-resource-name').not.toContain(undefined);
        expect(new Set(keys).size, 'observed resources have distinct keys').toBe(keys.length);
      }
    });

    it("uses the packaged Composition, or its own that differs from it only in its steps' input", () => {
      const own = compositionForExample(REPO_ROOT, example);
      const packaged = compositionFor(loadCompositeResource(example.xr), findCompositions(REPO_ROOT), REPO_ROOT);
      if (own.file === packaged.file) return;
      const withoutInput = (file: string): unknown => {
        const [doc] = readYamlStream(file);
        const pipeline = getIn(doc, 'spec', 'pipeline');
        for (const step of asArray(pipeline)) if (step && typeof step === 'object') delete (step as JsonObject)['input'];
        return doc;
      };
      expect(withoutInput(own.file)).toEqual(withoutInput(packaged.file));
    });

    it('holds only XRs their XRDs admit, status included, and only mount contracts the library accepts', () => {
      for (const doc of [loadCompositeResource(example.xr), ...inputs()]) {
        const kind = getString(doc, 'kind') ?? '';
        const where = `${kind} ${getString(doc, 'metadata', 'name') ?? ''}`;
        const xrd = XRDS.get(kind);
        if (xrd) expect(validateXr(xrd, doc), where).toEqual([]);
        const mounts = [getIn(doc, 'status', 'mount'), ...asArray(getIn(doc, 'status', 'clusters')).map((entry) => getIn(entry, 'mount'))];
        for (const mount of mounts.filter((m) => m !== undefined)) expect(validateMount(mount), where).toMatchObject({ ok: true });
      }
    });

    it('renders as its expected.yaml says', async () => {
      const rendered = (await render(example)).output.documents;
      let expectedText: string;
      try {
        expectedText = readFileSync(example.expected, 'utf8');
      } catch {
        expect.fail(missingExpectedMessage(REPO_ROOT, example));
      }
      // Compared as data, printed one way: key order and quoting in the file don't matter.
      const expected = parseYamlStream(expectedText, example.expected);
      // The v2.3+ CLI renders through core's reconciler: compared on what both generations hold (test/render/cli.ts).
      if (SPLIT_CLI) expect(formatYamlStream(comparableAcrossClis(rendered))).toBe(formatYamlStream(comparableAcrossClis(expected)));
      else expect(formatYamlStream(rendered)).toBe(formatYamlStream(expected));
    });

    it('asks for everything at once (two calls a step at most), and renders no null or NaN', async () => {
      const { output, calls } = await render(example);
      const { composition } = compositionForExample(REPO_ROOT, example);
      const steps = new Map<string, number>();
      for (const step of composition.pipeline) steps.set(step.functionName, (steps.get(step.functionName) ?? 0) + 1);
      for (const [fn, count] of steps) {
        expect(calls.get(fn), `${fn}: at least one call per step`).toBeGreaterThanOrEqual(count);
        expect(calls.get(fn), fn).toBeLessThanOrEqual(2 * count);
      }
      // No other function was called.
      for (const [fn, count] of calls) if (!steps.has(fn)) expect(count, fn).toBe(0);
      expect(badValues(output.documents)).toEqual([]);
    });

    const earlier = earlierOf.get(example.name);
    if (earlier !== undefined) {
      it(`continues ${earlier}: the status it wrote, and what it composed`, async () => {
        const before = (await render(byName.get(earlier)!)).output;
        const xr = loadCompositeResource(example.xr);
        expect(withoutConditions(getObject(xr, 'status'))).toEqual(withoutConditions(getObject(before.compositeResource, 'status')));
        const wrote = conditionsOf(before.compositeResource);
        for (const [type, condition] of conditionsOf(xr)) {
          if (wrote.has(type)) expect(condition, type).toEqual(wrote.get(type));
        }
        const composed = composedOf(before);
        const observed = readYamlStream(example.observed!);
        expect(observed.map((doc) => keyOf(doc)!).sort(compareNames)).toEqual([...composed.keys()].sort(compareNames));
        for (const doc of observed) expectObservedAsComposed(doc, composed.get(keyOf(doc)!)!, keyOf(doc)!);
      });
    } else if (example.observed) {
      it('observes what the function composes for this XR', async () => {
        const observed = readYamlStream(example.observed!);
        let composed = composedOf((await renderCounted(example, { observed: false })).output);
        // Resources of a layout the function composes afresh no more (a ModelCache's children from before shards,
        // handed over in place) are held to what it desires for them instead.
        if (!observed.some((doc) => composed.has(keyOf(doc)!))) composed = composedOf((await render(example)).output);
        const checked = observed.filter((doc) => composed.has(keyOf(doc)!));
        expect(checked.length, 'at least one observed resource is one the function composes').toBeGreaterThan(0);
        for (const doc of checked) expectObservedAsComposed(doc, composed.get(keyOf(doc)!)!, keyOf(doc)!);
      });
    }
  });
});
