// Upstream's own validator over every example, offline: `crossplane beta
// validate` (the pinned CLI of tools/versions.env, its cache pre-filled with
// Crossplane's CRDs by tools/build.sh) checks, against the XRDs in package/
// and the real CRDs of Crossplane and provider-kubernetes (its namespaced
// kubernetes.m.crossplane.io kinds, the ones our functions compose):
// - each example's XR, status included, every ModelCache,
//   ModelCacheHydration or ModelReplica in its required.yaml, and everything
//   in its observed.yaml (XRs, provider-kubernetes Objects, Usages);
// - everything its render composes (rendered with -x: validate needs the
//   XR's spec), the XR included: ModelCacheHydrations, Objects, Usages.
// Structural schema, enums, bounds, patterns and every CEL rule are the API
// server's own code here. A rule it refuses is a bug in the product.
//
// Documents of kinds no schema here covers (the Secrets and InferenceClusters
// examples feed render) are left out; every kind render composes must be one
// it covers.

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asArray, getString, type JsonObject } from '#lib';
import { REPO_ROOT } from '#testing';
import { requireTool, runTool, toolPaths } from '../support/tools.js';
import { validateCommand } from './cli.js';
import {
  PACKAGE_DIR,
  findExamples,
  formatYamlStream,
  isRenderOutput,
  readYamlStream,
  renderWithCrossplane,
  startExampleServers,
  type ExampleServers,
} from './index.js';

const examples = findExamples(REPO_ROOT);

/** Our XR kinds: the ones validated among an example's required resources. */
const XR_KINDS = ['ModelCache', 'ModelCacheHydration', 'ModelReplica'];
/** The only kinds in the examples that no schema here covers: inputs to render, never composed. */
const UNCOVERED = ['v1/Secret', 'modelplane.ai/v1alpha1/InferenceCluster'];

/** The XRDs of package/<plural>/definition.yaml. */
function definitionFiles(): string[] {
  return readdirSync(join(REPO_ROOT, PACKAGE_DIR), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(REPO_ROOT, PACKAGE_DIR, entry.name, 'definition.yaml'));
}

/** The CRDs validate reads for provider-kubernetes: the namespaced kinds (v2), not the cluster-scoped legacy ones. */
function providerKubernetesCrds(): string[] {
  const dir = requireTool('PROVIDER_KUBERNETES_CRDS');
  return readdirSync(dir)
    .filter((name) => name.startsWith('kubernetes.m.crossplane.io_') && name.endsWith('.yaml'))
    .map((name) => join(dir, name));
}

/** `<apiVersion>/<kind>` of every version of every XRD or CRD in these files. */
function schemaKinds(files: readonly string[]): Set<string> {
  const kinds = new Set<string>();
  for (const file of files) {
    for (const doc of readYamlStream(file)) {
      const group = getString(doc, 'spec', 'group');
      const kind = getString(doc, 'spec', 'names', 'kind');
      for (const version of asArray((doc['spec'] as JsonObject | undefined)?.['versions']))
        kinds.add(`${group ?? ''}/${getString(version, 'name') ?? ''}/${kind ?? ''}`);
    }
  }
  return kinds;
}

const typeOf = (doc: JsonObject): string => `${getString(doc, 'apiVersion') ?? ''}/${getString(doc, 'kind') ?? ''}`;

/** Put the XRDs (under distinct names) and provider-kubernetes' CRDs in one extensions directory. */
function writeExtensions(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const file of definitionFiles()) copyFileSync(file, join(dir, `${basename(dirname(file))}.yaml`));
  for (const file of providerKubernetesCrds()) copyFileSync(file, join(dir, basename(file)));
}

interface Validation {
  code: number | null;
  output: string;
  /** The `[x]` lines: each a resource that failed, and why. */
  failures: string[];
  /** From the summary line: Total N resources: M missing schemas, S success cases, F failure cases. */
  total: number | undefined;
  missing: number | undefined;
}

async function validate(extensions: string, resources: string): Promise<Validation> {
  const run = await runTool(requireTool('CROSSPLANE'), [
    ...validateCommand(),
    extensions,
    resources,
    '--cache-dir',
    requireTool('VALIDATE_CACHE'),
    '--error-on-missing-schemas',
  ]);
  const output = `${run.stdout}${run.stderr}`;
  const summary = /Total (\d+) resources: (\d+) missing schemas, (\d+) success cases, (\d+) failure cases/.exec(output);
  return {
    code: run.code,
    output,
    failures: output.split('\n').filter((line) => line.startsWith('[x]')),
    total: summary ? Number(summary[1]) : undefined,
    missing: summary ? Number(summary[2]) : undefined,
  };
}

describe('crossplane beta validate: every example and every render, offline', () => {
  let servers: ExampleServers;
  let scratch: string;
  let extensions: string;
  beforeAll(async () => {
    servers = await startExampleServers(REPO_ROOT, { ephemeralPorts: true });
    scratch = mkdtempSync(join(tmpdir(), 'validate-examples-'));
    extensions = join(scratch, 'extensions');
    writeExtensions(extensions);
  });
  afterAll(async () => {
    await servers.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('has schemas for our XRs, provider-kubernetes Objects and Crossplane Usages', () => {
    const kinds = schemaKinds([...definitionFiles(), ...providerKubernetesCrds()]);
    const crossplane = schemaKinds(readdirSync(requireTool('CROSSPLANE_CRDS')).map((name) => join(toolPaths().CROSSPLANE_CRDS, name)));
    for (const kind of XR_KINDS) expect(kinds, kind).toContain(`modelplane.ai/v1alpha1/${kind}`);
    expect(kinds).toContain('kubernetes.m.crossplane.io/v1alpha1/Object');
    expect(crossplane).toContain('protection.crossplane.io/v1beta1/Usage');
  });

  it(
    'admits every example XR, every XR it requires, everything it observes, and everything every render prints',
    { timeout: 120_000 },
    async () => {
      const covered = new Set([
        ...schemaKinds([...definitionFiles(), ...providerKubernetesCrds()]),
        ...schemaKinds(readdirSync(requireTool('CROSSPLANE_CRDS')).map((name) => join(toolPaths().CROSSPLANE_CRDS, name))),
      ]);
      const resources = join(scratch, 'resources');
      mkdirSync(resources);
      let written = 0;
      const left = new Set<string>();
      const kept = new Set<string>();
      for (const example of examples) {
        // The XR with its status, the XRs among its required resources, and everything it observes (composed
        // resources as the API server would hold them: XRs, Objects, Usages).
        const inputs = [
          ...readYamlStream(example.xr),
          ...(example.required ? readYamlStream(example.required).filter((doc) => XR_KINDS.includes(getString(doc, 'kind') ?? '')) : []),
          ...(example.observed ? readYamlStream(example.observed) : []),
        ];
        const render = await renderWithCrossplane(REPO_ROOT, example, { functions: servers.functions, fullXr: true, results: true });
        const rendered = render.documents.filter((doc) => !isRenderOutput(doc));
        expect(render.documents.length - rendered.length, `${example.name}: only Results are render's own`).toBe(render.results.length);
        const docs: JsonObject[] = [];
        for (const doc of [...inputs, ...rendered]) {
          if (covered.has(typeOf(doc))) {
            docs.push(doc);
            kept.add(typeOf(doc));
          } else {
            left.add(typeOf(doc));
          }
        }
        // Every document render composed is one validate can check.
        for (const doc of rendered) expect(covered.has(typeOf(doc)), `${example.name}: ${typeOf(doc)} has a schema here`).toBe(true);
        writeFileSync(join(resources, `${example.name.replace('/', '--')}.yaml`), formatYamlStream(docs));
        written += docs.length;
      }
      for (const type of left) expect(UNCOVERED, `${type} is left out of validation`).toContain(type);
      expect([...kept].sort()).toEqual(
        expect.arrayContaining([
          'kubernetes.m.crossplane.io/v1alpha1/Object',
          'modelplane.ai/v1alpha1/ModelCache',
          'modelplane.ai/v1alpha1/ModelCacheHydration',
          'modelplane.ai/v1alpha1/ModelReplica',
          'protection.crossplane.io/v1beta1/Usage',
        ]),
      );

      const result = await validate(extensions, resources);
      expect(result.failures, result.output).toEqual([]);
      expect(result.code, result.output).toBe(0);
      expect(result.missing, result.output).toBe(0);
      expect(result.total, result.output).toBe(written);
    },
  );

  it('fails an XR with an unknown field, in its spec or deeper (issue 29): no XRD lets one through', async () => {
    // A misspelled field at the top of each kind's spec and one level down; the API server would prune
    // (and kubectl warn about) what validate reports here, so it never reaches a function unnoticed.
    const typos: [file: string, path: string[], wrong: string][] = [
      ['examples/model-cache/first-compose/xr.yaml', ['spec'], 'clusterSelecter'],
      ['examples/model-cache/first-compose/xr.yaml', ['spec', 'huggingFace'], 'revison'],
      ['examples/model-cache-hydration/huggingface-first-compose/xr.yaml', ['spec'], 'clustername'],
      ['examples/model-cache-hydration/huggingface-first-compose/xr.yaml', ['spec', 'authSecret'], 'nmae'],
      ['examples/model-cache-shard/first-compose/xr.yaml', ['spec'], 'sources'],
      ['examples/model-replica/cache-ready/xr.yaml', ['spec'], 'modelCacheRfe'],
      ['examples/model-replica/cache-ready/xr.yaml', ['spec', 'modelCacheRef'], 'namee'],
    ];
    const resources = join(scratch, 'unknown');
    mkdirSync(resources);
    typos.forEach(([file, path, wrong], i) => {
      const [xr] = readYamlStream(join(REPO_ROOT, file));
      let node = xr!;
      for (const key of path) node = node[key] as JsonObject;
      node[wrong] = 'x';
      writeFileSync(join(resources, `xr-${i}.yaml`), formatYamlStream([xr!]));
    });
    const result = await validate(extensions, resources);
    expect(result.code, result.output).not.toBe(0);
    expect(result.total, result.output).toBe(typos.length);
    for (const [, path, wrong] of typos) {
      const at = [...path, wrong].join('.');
      expect(result.output, at).toContain(`${at}: Invalid value: "${wrong}": unknown field: "${wrong}"`);
    }
  });

  it('has no spec in any XRD that keeps unknown fields (x-kubernetes-preserve-unknown-fields)', () => {
    for (const file of definitionFiles()) {
      for (const doc of readYamlStream(file)) {
        for (const version of asArray((doc['spec'] as JsonObject | undefined)?.['versions'])) {
          const spec = (((version as JsonObject)['schema'] as JsonObject)['openAPIV3Schema'] as JsonObject)['properties'] as JsonObject;
          expect(JSON.stringify(spec['spec']), file).not.toContain('x-kubernetes-preserve-unknown-fields');
        }
      }
    }
  });

  it('fails, with the rule its message names, an XR that breaks a CEL rule of its XRD', async () => {
    // package/modelcaches/definition.yaml: self.source != 'HuggingFace' || has(self.huggingFace)
    const [xr] = readYamlStream(join(REPO_ROOT, 'examples/model-cache/first-compose/xr.yaml'));
    const spec = { ...(xr!['spec'] as JsonObject) };
    delete spec['huggingFace'];
    expect(spec['source']).toBe('HuggingFace');
    const resources = join(scratch, 'broken');
    mkdirSync(resources);
    writeFileSync(join(resources, 'xr.yaml'), formatYamlStream([{ ...xr!, spec }]));
    const result = await validate(extensions, resources);
    expect(result.code, result.output).not.toBe(0);
    expect(result.failures.length, result.output).toBe(1);
    expect(result.failures[0]).toContain('spec.huggingFace is required when spec.source is HuggingFace.');
    expect(result.total, result.output).toBe(1);
  });
});
