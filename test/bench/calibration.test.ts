// The benchmark's realistic requests against the requests a real Crossplane
// sent (bench/captured/, captured on the local control plane by
// test/e2e/capture.e2e.ts): every field the API server, Crossplane and
// provider-kubernetes put on a resource is in the built request too, and each
// kind of resource is within 2× of its captured size. So `make bench` times
// requests shaped like Crossplane's, and a builder that drifts from them fails
// here, not in a benchmark nobody reads.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';
import { Ready, Severity, type JsonObject } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { CAPTURED_FUNCTIONS, calibrate, capturedJson } from '../../bench/calibration.js';
import { HANDLERS } from '../support/handlers.js';
import { compareShapes, shapeOf } from '../../bench/shape.js';

const capture = (fn: string): JsonObject =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'bench', 'captured', `${fn}.json`), 'utf8')) as JsonObject;

describe.each(CAPTURED_FUNCTIONS)("%s: the benchmark's realistic request against a captured one", (fn) => {
  const captured = capture(fn);

  it('holds no credential', () => {
    expect(JSON.stringify(captured)).not.toMatch(/hf_e2e_not_a_real_token|aGZfZTJlX25vdF9hX3JlYWxfdG9rZW4/);
  });

  it('has every field Crossplane sends', () => {
    expect(calibrate(fn, captured).missing).toEqual([]);
  });

  it('has each kind of resource within 2× of its captured size', () => {
    const off = calibrate(fn, captured).sizes.filter((s) => s.ratio < 0.5 || s.ratio > 2);
    expect(off).toEqual([]);
  });

  // The capture is a steady state, like the scenario it calibrates: the function answers it at rest, as it did live.
  it('is answered at rest by the function, with no warning or fatal result', () => {
    const rsp = HANDLERS[fn](RunFunctionRequest.fromJSON(captured));
    expect(rsp.results.filter((r) => r.severity !== Severity.SEVERITY_NORMAL)).toEqual([]);
    if (fn === 'compose-model-replica') expect(rsp.conditions.find((c) => c.type === 'ModelReady')?.reason).toBe('Serving');
    else expect(rsp.desired?.composite?.ready).toBe(Ready.READY_TRUE);
  });
});

describe('a capture as it is kept', () => {
  it("keeps no Secret's data, no Secret's kubectl last-applied copy and no connection detail, by key only", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'hf-token',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"HF_TOKEN":"hf_clear"}}' },
      },
      data: { HF_TOKEN: Buffer.from('hf_clear').toString('base64') },
    };
    const object = { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind: 'Object', spec: { forProvider: { manifest: secret } } };
    const request = RunFunctionRequest.fromPartial({
      observed: { resources: { token: { resource: object, connectionDetails: { password: Buffer.from('hf_clear') } } } },
      requiredResources: { 'auth-secret': { items: [{ resource: secret }] } },
    });
    const kept = JSON.stringify(capturedJson(request));
    expect(kept).not.toContain('hf_clear');
    expect(kept).not.toContain(Buffer.from('hf_clear').toString('base64'));
    expect(kept).toContain('"HF_TOKEN"');
    expect(kept).toContain('"password"');
  });
});

describe('the shape comparison', () => {
  const object = (metadata: JsonObject): JsonObject => ({
    observed: {
      composite: { resource: { apiVersion: 'v1', kind: 'X', metadata, spec: { crossplane: { compositionRef: { name: 'c' } } } } },
    },
  });

  it('finds a metadata field the built request lacks, and nothing when it has it', () => {
    const captured = shapeOf(object({ name: 'a', uid: 'u', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }] }));
    const lacking = shapeOf(object({ name: 'b', managedFields: [{ manager: 'n', fieldsV1: { 'f:other': {} } }] }));
    expect(compareShapes(captured, lacking)[0]!.missing).toEqual(['metadata.uid']);
    const whole = shapeOf(object({ name: 'b', uid: 'v', managedFields: [{ manager: 'n', fieldsV1: {} }] }));
    expect(compareShapes(captured, whole)[0]!.missing).toEqual([]);
  });

  it("takes an owner annotation under another owner's hash as the same field, and finds it missing when there is none", () => {
    const remote = (annotations: JsonObject): JsonObject => ({
      observed: {
        resources: {
          a: {
            resource: {
              kind: 'Object',
              spec: { forProvider: { manifest: { kind: 'Service', metadata: { name: 's', annotations } } } },
            },
          },
        },
      },
    });
    const captured = shapeOf(remote({ 'modelplane.ai/owner-b7a1d8baea6b': 'ModelReplica qwen-chat in namespace e2e-capture' }));
    const other = shapeOf(remote({ 'modelplane.ai/owner-7256f269e93c': 'ModelReplica qwen-chat-7d2e4 in namespace ml-team' }));
    expect(compareShapes(captured, other)[0]!.missing).toEqual([]);
    expect(compareShapes(captured, shapeOf(remote({ other: 'x' })))[0]!.missing).toEqual([
      'spec.forProvider.manifest.metadata.annotations.modelplane.ai/owner-<hash>',
    ]);
  });

  it('names a kind the built request does not carry at all', () => {
    const captured = shapeOf({ requiredResources: { c: { items: [{ resource: { kind: 'InferenceCluster', metadata: {} } }] } } });
    expect(compareShapes(captured, new Map())).toEqual([{ kind: 'required InferenceCluster', missing: ['(the kind itself)'] }]);
  });
});
