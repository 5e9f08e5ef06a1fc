// docs/reference/hydrationsettings.md is written by hand: here it is held to
// the input CRDs the Function packages ship, and the CRDs to the parser, so
// none of the three can drift from the others; and upstream's validator
// refuses, before apply, the unknown fields the functions refuse.

import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGED_ACCESS_MODES, WORKLOAD_NAMESPACE_MODES, defaultClusterSettings, parseHydrationSettings, type JsonObject } from '#lib';
import { REPO_ROOT, loadYamlDocuments, validateXr, xrdSchema, type SchemaNode, type Xrd } from '#testing';
import { requireTool, runTool } from '../support/tools.js';
import { validateCommand } from '../render/cli.js';
import { INPUT_SCHEMA, fieldPath, fullInput, objectLevels, typo } from '../hardening/support/settings-input.js';

const PAGE = readFileSync(join(REPO_ROOT, 'docs', 'reference', 'hydrationsettings.md'), 'utf8');
const HYDRATION_CRD = loadYamlDocuments(
  'functions/compose-model-cache-hydration/package/input/fn.modelplane.ai_hydrationsettings.yaml',
)[0] as Xrd;
const REPLICA_CRD = loadYamlDocuments('functions/compose-model-replica/package/input/fn.modelplane.ai_replicasettings.yaml')[0] as Xrd;

/** Every field path of the schema, as the page writes them (list items as `[]`). */
function fieldPaths(schema: SchemaNode, path = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const at = path === '' ? name : `${path}.${name}`;
    out.push(at, ...fieldPaths(child, at));
  }
  if (schema.items?.properties) out.push(...fieldPaths(schema.items, `${path}[]`));
  return out;
}

/** Whether the field at `path` is an object with fields of its own (not a leaf). */
function hasFields(schema: SchemaNode, path: string): boolean {
  let node: SchemaNode | undefined = schema;
  for (const part of path.split('.')) {
    const list = part.endsWith('[]');
    node = node?.properties?.[list ? part.slice(0, -2) : part];
    if (list) node = node?.items;
  }
  return node?.properties !== undefined || node?.items?.properties !== undefined;
}

/** The input of each settings example's Composition. */
function exampleInputs(): [string, JsonObject][] {
  const dir = join(REPO_ROOT, 'examples', 'model-cache-hydration');
  return readdirSync(dir)
    .filter((stage) => stage.startsWith('settings-'))
    .map((stage) => {
      const [composition] = loadYamlDocuments(join(dir, stage, 'composition.yaml')) as JsonObject[];
      const input = (composition!['spec'] as { pipeline: { input: JsonObject }[] }).pipeline[0]!.input;
      return [stage, input];
    });
}

describe('the HydrationSettings reference page', () => {
  it('documents every field of the input CRD', () => {
    const schema = xrdSchema(HYDRATION_CRD);
    const leaves = fieldPaths(schema).filter((p) => p !== 'metadata' && !hasFields(schema, p));
    expect(leaves.length).toBeGreaterThan(20);
    for (const path of leaves) {
      // A leaf has its own row, or one of its parents below the top level does (tolerations[].key: jobs.tolerations);
      // the overrides repeat the top-level groups, and one row covers them.
      const prefixes = [
        path,
        ...path
          .split('.')
          .map((_, i, parts) => parts.slice(0, i).join('.'))
          .filter((p) => p.includes('.')),
      ].flatMap((p) => [p, p.replace(/\[\]$/, '')]);
      const covered = path.startsWith('clusters[].') && !path.startsWith('clusters[].clusterSelector') ? ['clusters[].images'] : prefixes;
      expect(
        covered.some((p) => PAGE.includes(`| \`${p}\``)),
        path,
      ).toBe(true);
    }
  });

  it("states today's defaults", () => {
    const defaults = defaultClusterSettings();
    for (const value of [defaults.images.hydration, defaults.images.resolver, defaults.images.publisher]) expect(PAGE).toContain(value);
    expect(PAGE).toContain(`| \`${String(defaults.jobs.ttlSecondsAfterFinished)}\``);
    expect(PAGE).toContain(`| \`${String(defaults.jobs.backoffLimit)}\``);
  });

  it('lists every settings example', () => {
    for (const [stage] of exampleInputs()) expect(PAGE, stage).toContain(`\`${stage}\``);
  });
});

describe('the input CRDs', () => {
  it('offer the enums the parser accepts', () => {
    const schema = xrdSchema(HYDRATION_CRD);
    expect(schema.properties?.['workloadNamespace']?.enum).toEqual([...WORKLOAD_NAMESPACE_MODES]);
    expect(xrdSchema(REPLICA_CRD).properties?.['workloadNamespace']?.enum).toEqual([...WORKLOAD_NAMESPACE_MODES]);
    expect(schema.properties?.['storage']?.properties?.['accessMode']?.enum).toEqual([...STAGED_ACCESS_MODES]);
  });

  it.each(exampleInputs())('admit the input of %s, which the function parses', (_stage, input) => {
    expect(validateXr(HYDRATION_CRD, input)).toEqual([]);
    expect(() => parseHydrationSettings(input)).not.toThrow();
  });

  it("pass upstream's validator (crossplane beta validate), which admits every example's input and refuses bad ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hydrationsettings-'));
    try {
      const named = (name: string, input: JsonObject): string =>
        JSON.stringify({ ...input, metadata: { name, namespace: 'crossplane-system' } });
      const bad = {
        apiVersion: HYDRATION_CRD.spec.group + '/v1alpha1',
        kind: 'HydrationSettings',
        storage: { accessMode: 'ReadOnlyMany' },
      };
      writeFileSync(
        join(dir, 'good.yaml'),
        exampleInputs()
          .map(([stage, input]) => named(stage, input))
          .join('\n---\n'),
      );
      writeFileSync(join(dir, 'bad.yaml'), named('bad', bad));
      const crds = join(REPO_ROOT, 'functions', 'compose-model-cache-hydration', 'package', 'input');
      const validate = (file: string) =>
        runTool(requireTool('CROSSPLANE'), [...validateCommand(), crds, join(dir, file), '--cache-dir', requireTool('VALIDATE_CACHE')]);
      const good = await validate('good.yaml');
      expect(good.code, good.stdout + good.stderr).toBe(0);
      expect(good.stdout + good.stderr).toContain(`${exampleInputs().length} success cases, 0 failure cases`);
      const refused = await validate('bad.yaml');
      expect(refused.code).not.toBe(0);
      expect(refused.stdout + refused.stderr).toContain('storage.accessMode: Unsupported value: "ReadOnlyMany"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('unknown fields (issue 29): crossplane beta validate refuses what the functions refuse', () => {
  /** Each function's input with one misspelled field at each object level of its CRD. */
  const misspelled = (name: 'compose-model-cache-hydration' | 'compose-model-replica') =>
    objectLevels(INPUT_SCHEMA[name]!, fullInput(name)!).map(({ path, known }, i) => {
      const field = known.filter((k) => k !== 'apiVersion' && k !== 'kind')[0]!;
      const wrong = typo(field, known, i);
      const input = fullInput(name)!;
      let node = input as Record<string | number, unknown>;
      for (const key of path) node = node[key] as Record<string | number, unknown>;
      node[wrong] = 'x';
      return { path: [...path, wrong], wrong, input };
    });

  it.each(['compose-model-cache-hydration', 'compose-model-replica'] as const)(
    '%s: a misspelled field at every level, in the settings and in a Composition step, is an unknown field',
    async (name) => {
      const dir = mkdtempSync(join(tmpdir(), 'settings-unknown-'));
      try {
        const cases = misspelled(name);
        const crds = join(REPO_ROOT, 'functions', name, 'package', 'input');
        const docs = cases.flatMap(({ input }, i) => [
          { ...input, metadata: { name: `case-${i}`, namespace: 'crossplane-system' } },
          {
            apiVersion: 'apiextensions.crossplane.io/v1',
            kind: 'Composition',
            metadata: { name: `case-${i}` },
            spec: {
              compositeTypeRef: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCacheHydration' },
              mode: 'Pipeline',
              pipeline: [{ step: 'compose', functionRef: { name: 'fn' }, input }],
            },
          },
        ]);
        writeFileSync(join(dir, 'cases.yaml'), docs.map((doc) => JSON.stringify(doc)).join('\n---\n'));
        const run = await runTool(requireTool('CROSSPLANE'), [
          ...validateCommand(),
          crds,
          join(dir, 'cases.yaml'),
          '--cache-dir',
          requireTool('VALIDATE_CACHE'),
        ]);
        const output = run.stdout + run.stderr;
        expect(run.code, output).not.toBe(0);
        for (const { path, wrong } of cases) {
          const at = fieldPath(path).replace(/^input\./, '');
          // Once for the settings document, once for the same input inside the Composition's step.
          expect(output.split(`${at}: Invalid value: "${wrong}": unknown field: "${wrong}"`).length - 1, `${at}\n${output}`).toBe(2);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('no object of the input CRDs admits unknown fields (no x-kubernetes-preserve-unknown-fields)', () => {
    for (const crd of [HYDRATION_CRD, REPLICA_CRD]) expect(JSON.stringify(crd)).not.toContain('x-kubernetes-preserve-unknown-fields');
  });
});

describe('the errors the page shows', () => {
  const hydration = (fields: JsonObject): JsonObject => ({ apiVersion: 'fn.modelplane.ai/v1alpha1', kind: 'HydrationSettings', ...fields });
  const inputs: JsonObject[] = [
    hydration({ network: { httpsProxy: 'socks5://me:hunter2@proxy:1080' } }),
    hydration({ network: { httpProxy: 'http://me:hunter2@proxy:3128' } }),
    hydration({ network: { hfEndpoint: 'https://hf.corp.example/?token=hunter2' } }),
    hydration({ install: { indexUrl: "https://pypi.corp.example/'$(id)'" } }),
    hydration({ network: { hfEndpiont: 'https://hf-mirror.corp.example' } }),
    hydration({
      clusters: [{ clusterSelector: { matchLabels: { a: 'b' } }, jobs: { tolerations: [{ operator: 'Exists', efect: 'NoSchedule' }] } }],
    }),
    hydration({ network: { mirror: 'https://hf-mirror.corp.example' } }),
  ];
  it.each(inputs.map((input) => [JSON.stringify(input).slice(60, 140), input] as const))('are what the parser says: %s', (_what, input) => {
    let message = '';
    try {
      parseHydrationSettings(input);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('hunter2');
    expect(PAGE).toContain(message);
  });
});
