// The examples in examples/model-replica, run as `crossplane render` runs them:
// the XR, then the required resources (-e) matched to the function's
// requirements by kind and name (render ignores the namespace), and the
// observed resources (-o) keyed by their composition-resource-name
// annotation. Each stage must do what its name says.

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getString, type JsonObject } from '#lib';
import { condition, desiredResources, loadYamlDocuments, request, type TestRequest, type TestResource } from '#testing';
import { manifest, podTemplates, engineOf, run } from './support.js';

const DIR = 'examples/model-replica';

function load(stage: string): { xr: TestResource; required: JsonObject[]; observed: Record<string, TestResource> } {
  const [xr] = loadYamlDocuments(`${DIR}/${stage}/xr.yaml`) as JsonObject[];
  const required = existsSync(`${DIR}/${stage}/required.yaml`) ? (loadYamlDocuments(`${DIR}/${stage}/required.yaml`) as JsonObject[]) : [];
  const observed: Record<string, TestResource> = {};
  if (existsSync(`${DIR}/${stage}/observed.yaml`)) {
    for (const doc of loadYamlDocuments(`${DIR}/${stage}/observed.yaml`) as JsonObject[]) {
      const key = getString(doc, 'metadata', 'annotations', 'crossplane.io/composition-resource-name');
      expect(key, 'every observed object names its composition resource').toBeDefined();
      observed[key!] = { resource: doc };
    }
  }
  return { xr: { resource: xr! }, required, observed };
}

/** Render's loop: call, resolve the requirements from the -e documents, call again until they settle. */
async function render(stage: string) {
  const { xr, required, observed } = load(stage);
  const base: TestRequest = request({ observed: { composite: xr, resources: observed } });
  const first = await run(base);
  const resolved: NonNullable<TestRequest['requiredResources']> = {};
  for (const [key, selector] of Object.entries(first.requirements?.resources ?? {})) {
    const found = required.filter(
      (doc) =>
        doc['apiVersion'] === selector.apiVersion &&
        doc['kind'] === selector.kind &&
        getString(doc, 'metadata', 'name') === selector.matchName,
    );
    resolved[key] = { items: found.map((resource) => ({ resource })) };
  }
  const rsp = await run({ ...base, requiredResources: resolved });
  expect(rsp.requirements).toEqual(first.requirements);
  return rsp;
}

const engines = (keys: string[]) => keys.filter((k) => k.startsWith('model-serving-'));

describe('examples/model-replica', () => {
  it.each<[string, string, string[]]>([
    ['hydrating', 'Hydrating', []],
    ['cache-ready', 'Deploying', ['model-serving-main']],
    ['cache-failed', 'HydrationFailed', []],
    ['cache-flapped', 'Hydrating', ['model-serving-main']],
    ['gang-hydrating', 'Hydrating', []],
    ['gang-cache-ready', 'Deploying', ['model-serving-main']],
    ['gang-cache-failed', 'HydrationFailed', []],
  ])('%s: ModelAccepted %s', async (stage, reason, workloads) => {
    const rsp = await render(stage);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    expect(condition(rsp, 'ModelAccepted')?.reason).toBe(reason);
    expect(engines(Object.keys(desiredResources(rsp)))).toEqual(workloads);
    expect(desiredResources(rsp)).toHaveProperty('model-cache-usage');
  });

  it('cache-ready: the engine reads the cache as the ModelCache publishes it', async () => {
    const rsp = await render('cache-ready');
    const engine = engineOf(podTemplates(manifest(rsp, 'model-serving-main'))[0]!.template);
    expect(engine['args']).toEqual(['--model=$(MODELPLANE_MODEL)', '--served-model-name=qwen']);
    expect(engine['env']).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-8B' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
    ]);
  });

  it('cache-flapped: everything observed is kept, and nothing else is composed', async () => {
    const rsp = await render('cache-flapped');
    const { observed } = load('cache-flapped');
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(Object.keys(observed).sort());
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('gang-cache-ready: leader and worker both mount the artifact, with a writable HOME', async () => {
    const rsp = await render('gang-cache-ready');
    for (const { template } of podTemplates(manifest(rsp, 'model-serving-main'))) {
      expect((engineOf(template)['volumeMounts'] as JsonObject[]).map((m) => m['mountPath'])).toEqual([
        '/dev/shm',
        '/mnt/models/weights',
        '/modelplane-home',
      ]);
    }
  });
});
