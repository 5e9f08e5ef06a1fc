// Every example stage, run as crossplane render would run it: the XR, the
// required resources matched to the function's requirements as render matches
// them, the observed resources by their composition-resource-name annotation.

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isObject, type JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  items,
  loadYamlDocuments,
  request,
  type TestResponse,
  type TestSelector,
} from '#testing';
import { run } from './support.js';

const ROOT = 'examples/model-cache-hydration';

const STAGES: [stage: string, phase: string, reason: string, keys: string[]][] = [
  ['huggingface-first-compose', 'Pending', 'Pending', ['pvc', 'auth', 'hydrate']],
  ['huggingface-hydrating', 'Hydrating', 'Hydrating', ['pvc', 'auth', 'hydrate']],
  ['huggingface-ready', 'Ready', 'Staged', ['pvc']],
  ['huggingface-failed', 'Failed', 'HydrationFailed', ['pvc', 'auth', 'hydrate']],
  ['huggingface-auth-secret-missing', 'Pending', 'AuthSecretMissing', ['pvc']],
  ['oci-first-compose', 'Pending', 'Pending', ['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve']],
  ['oci-resolving', 'Pending', 'Pending', ['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve']],
  ['oci-ready-image', 'Ready', 'Staged', ['resolve-result']],
  ['oci-ready-model-artifact', 'Ready', 'Staged', ['resolve-result']],
  ['oci-failed-unsupported', 'Failed', 'UnsupportedArtifact', ['resolve-result']],
  ['oci-failed-resolver', 'Failed', 'HydrationFailed', ['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve']],
  ['persistentvolumeclaim-claim-missing', 'Pending', 'ClaimNotFound', ['claim']],
  ['persistentvolumeclaim-ready', 'Ready', 'Staged', ['claim']],
];

function documents(stage: string, file: string): JsonObject[] {
  const path = `${ROOT}/${stage}/${file}`;
  return existsSync(path) ? loadYamlDocuments(path).filter(isObject) : [];
}

/** render -e: each requirement gets the supplied objects its selector matches (render ignores the namespace). */
function matching(selector: TestSelector, supplied: JsonObject[]): JsonObject[] {
  return supplied.filter((o) => {
    const metadata = o['metadata'] as JsonObject;
    if (o['apiVersion'] !== selector.apiVersion || o['kind'] !== selector.kind) return false;
    if (selector.matchName !== undefined) return metadata['name'] === selector.matchName;
    const labels = (metadata['labels'] ?? {}) as Record<string, string>;
    return Object.entries(selector.matchLabels?.labels ?? {}).every(([k, v]) => labels[k] === v);
  });
}

async function render(stage: string, withObserved = true): Promise<TestResponse> {
  const [xr] = documents(stage, 'xr.yaml');
  const required = documents(stage, 'required.yaml');
  const resources: Record<string, { resource: JsonObject }> = {};
  if (withObserved) {
    for (const object of documents(stage, 'observed.yaml')) {
      const key = ((object['metadata'] as JsonObject)['annotations'] as Record<string, string>)['crossplane.io/composition-resource-name']!;
      resources[key] = { resource: object };
    }
  }
  const observed = { composite: { resource: xr! }, resources };
  const first = await run(request({ observed }));
  const requiredResources = Object.fromEntries(
    Object.entries(first.requirements?.resources ?? {}).map(([key, selector]) => [key, items(...matching(selector, required))]),
  );
  return run(request({ observed, requiredResources }));
}

describe.each(STAGES)('%s', (stage, phase, reason, keys) => {
  it(`is ${phase} (${reason}), composing ${keys.join(', ')}`, async () => {
    const rsp = await render(stage);
    expect(compositeStatus(rsp)['phase']).toBe(phase);
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe(reason);
    expect(Object.keys(desiredResources(rsp))).toEqual(keys);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    if (phase === 'Ready') expect(compositeStatus(rsp)['mount']).toBeDefined();
  });

  it('observes exactly what the function desires for this XR', async () => {
    const observed = documents(stage, 'observed.yaml');
    const desired = desiredResources(await render(stage, false));
    for (const object of observed) {
      const key = ((object['metadata'] as JsonObject)['annotations'] as Record<string, string>)['crossplane.io/composition-resource-name']!;
      expect(object['spec'], key).toEqual(desired[key]?.['spec']);
    }
  });
});
