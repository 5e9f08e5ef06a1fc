// examples/model-cache/<stage>/, run as `crossplane render` runs them: the XR
// as observed composite, observed.yaml keyed by each object's
// composition-resource-name annotation, and required.yaml matched against the
// function's requirements (by kind, then name or labels; render ignores a
// selector's namespace). Each stage shows what it claims to, and each later
// stage starts from exactly what the function answered in the one before.

import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateMount, type JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  inProcessClient,
  loadXrd,
  loadYamlDocuments,
  validateXr,
  type TestRequest,
  type TestResource,
  type TestResponse,
  type TestSelector,
} from '#testing';
import { compose } from '../src/fn.js';
import { expectWellFormed } from './fixtures.js';

const client = inProcessClient('compose-model-cache', compose);
const DIR = 'examples/model-cache';
const STAGES = readdirSync(DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function docs(stage: string, file: string): JsonObject[] {
  const path = `${DIR}/${stage}/${file}`;
  return existsSync(path) ? (loadYamlDocuments(path) as JsonObject[]) : [];
}

function matches(doc: JsonObject, selector: TestSelector): boolean {
  if (doc['apiVersion'] !== selector.apiVersion || doc['kind'] !== selector.kind) return false;
  const metadata = (doc['metadata'] ?? {}) as JsonObject;
  if (selector.matchName !== undefined) return metadata['name'] === selector.matchName;
  const labels = (metadata['labels'] ?? {}) as Record<string, string>;
  return Object.entries(selector.matchLabels?.labels ?? {}).every(([key, value]) => labels[key] === value);
}

/** Both calls of the render loop; the second answer is what render prints. */
async function render(stage: string): Promise<TestResponse> {
  const [xr] = docs(stage, 'xr.yaml');
  const observed: Record<string, TestResource> = {};
  for (const doc of docs(stage, 'observed.yaml')) {
    const annotations = ((doc['metadata'] as JsonObject)['annotations'] ?? {}) as Record<string, string>;
    const key = annotations['crossplane.io/composition-resource-name'];
    expect(key, 'every observed object names its composition resource').toBeDefined();
    observed[key!] = { resource: doc };
  }
  const base: TestRequest = { meta: { tag: 'test' }, observed: { composite: { resource: xr! }, resources: observed } };
  const first = await client.run(base);
  const required = docs(stage, 'required.yaml');
  const requiredResources: TestRequest['requiredResources'] = {};
  for (const [key, selector] of Object.entries(first.requirements?.resources ?? {})) {
    requiredResources[key] = { items: required.filter((doc) => matches(doc, selector)).map((resource) => ({ resource })) };
  }
  const rsp = await client.run({ ...base, requiredResources });
  expectWellFormed(rsp);
  expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
  expect(rsp.requirements?.resources).toEqual(first.requirements?.resources);
  return rsp;
}

const messages = (rsp: TestResponse) => rsp.results.map((r) => `${r.severity === 'SEVERITY_WARNING' ? 'Warning' : 'Normal'}: ${r.message}`);

describe('examples/model-cache', () => {
  it('covers every stage folder', () => {
    expect(STAGES).toEqual([
      'failed',
      'first-compose',
      'hydrating',
      'oci-first-compose',
      'oci-ready',
      'pvc-first-compose',
      'pvc-ready',
      'ready',
    ]);
  });

  it.each<[string, number, string, string[], boolean]>([
    ['first-compose', 3, 'Hydrating', ['Normal: Staging Qwen/Qwen3-0.6B to 3 clusters: eu-west-a100, us-east-a100, us-west-a100'], false],
    ['hydrating', 3, 'Partial', [], false],
    ['ready', 3, 'Staged', ['Normal: Artifact staged on all 3 clusters'], true],
    [
      'failed',
      3,
      'HydrationFailed',
      [
        'Warning: Staging failed on us-west-a100: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
      ],
      false,
    ],
    [
      'oci-first-compose',
      2,
      'Hydrating',
      ['Normal: Staging us-docker.pkg.dev/acme-ml/models/qwen3-0.6b:v1 to 2 clusters: us-east-a100, us-west-a100'],
      false,
    ],
    ['oci-ready', 2, 'Staged', ['Normal: Artifact staged on all 2 clusters'], true],
    ['pvc-first-compose', 3, 'Hydrating', ['Normal: Staging qwen-weights to 3 clusters: eu-west-a100, us-east-a100, us-west-a100'], false],
    ['pvc-ready', 3, 'Staged', ['Normal: Artifact staged on all 3 clusters'], true],
  ])('%s: %i children, ArtifactReady %s', async (stage, children, reason, events, ready) => {
    const rsp = await render(stage);
    expect(Object.keys(desiredResources(rsp))).toHaveLength(children);
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe(reason);
    expect(messages(rsp)).toEqual(events);
    expect(rsp.desired?.composite?.ready).toBe(ready ? 'READY_TRUE' : 'READY_FALSE');
  });

  it('names the failed cluster in ArtifactReady', async () => {
    expect(condition(await render('failed'), 'ArtifactReady')?.message).toBe(
      'us-west-a100: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    );
  });

  it.each<[string, string]>([
    ['first-compose', 'hydrating'],
    ['hydrating', 'ready'],
    ['hydrating', 'failed'],
    ['oci-first-compose', 'oci-ready'],
    ['pvc-first-compose', 'pvc-ready'],
  ])('%s → %s: the later stage starts from what the function answered, and observes the children it stamped', async (before, after) => {
    const rsp = await render(before);
    const [xr] = docs(after, 'xr.yaml');
    const status = xr!['status'] as JsonObject;
    expect({ summary: status['summary'], clusters: status['clusters'] }).toEqual(compositeStatus(rsp));
    const written = (status['conditions'] as JsonObject[]).filter((c) => c['type'] === 'ClustersMatched' || c['type'] === 'ArtifactReady');
    expect(written).toEqual(
      rsp.conditions.map((c) => ({
        type: c.type,
        status: c.status === 'STATUS_CONDITION_TRUE' ? 'True' : 'False',
        reason: c.reason,
        message: c.message,
      })),
    );
    const desired = desiredResources(rsp);
    for (const doc of docs(after, 'observed.yaml')) {
      const metadata = doc['metadata'] as JsonObject;
      const key = (metadata['annotations'] as Record<string, string>)['crossplane.io/composition-resource-name']!;
      expect(desired[key]?.['spec'], key).toEqual(doc['spec']);
      expect(desired[key]?.['metadata'], key).toEqual({
        name: metadata['name'],
        namespace: metadata['namespace'],
        labels: metadata['labels'],
      });
    }
  });

  it('has XRs the XRD admits, status included', () => {
    const xrd = loadXrd('package/modelcaches/definition.yaml');
    for (const stage of STAGES) expect(validateXr(xrd, docs(stage, 'xr.yaml')[0]!), stage).toEqual([]);
  });

  it('publishes only contracts the library accepts', () => {
    for (const stage of ['hydrating', 'ready', 'failed', 'oci-ready', 'pvc-ready']) {
      for (const doc of docs(stage, 'observed.yaml')) {
        const mount = (doc['status'] as JsonObject)['mount'];
        if (mount !== undefined)
          expect(validateMount(mount), `${stage}/${(doc['metadata'] as JsonObject)['name'] as string}`).toMatchObject({ ok: true });
      }
    }
  });
});
