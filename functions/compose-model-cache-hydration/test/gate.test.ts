// The cluster gate: an absent or unprovisioned cluster holds the hydration at
// Pending, composes nothing new, and keeps every observed Object exactly as
// observed, so a cluster that is briefly unreadable deletes nothing.

import { describe, expect, it } from 'vitest';
import { keepObservedObject, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, inferenceCluster } from '#testing';
import { HF, HF_AUTH, hydration, jobRemote, observe, readiness, resolved, results, run, tokenSecret } from './support.js';

const OCI = { source: 'OCI', oci: { ref: 'registry.example.com/models/qwen:v1' } };
const DIGEST = `sha256:${'a'.repeat(64)}`;

async function observedAfterFirstPass(spec: JsonObject): Promise<Record<string, JsonObject>> {
  const desired = desiredResources(await run(resolved({ xr: hydration(spec), secret: spec === HF_AUTH ? tokenSecret() : undefined })));
  const observed: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(desired)) {
    observed[key] = observe(
      object,
      key === 'hydrate' || key === 'resolve' ? jobRemote('running') : { status: { phase: 'Bound' }, ready: true },
    );
  }
  return observed;
}

describe.each([
  ['absent', null, 'InferenceCluster cluster-a not found', 'ClusterNotFound'],
  [
    'not provisioned',
    inferenceCluster('cluster-a', { storageClassName: 'modelplane-rwx' }),
    'waiting for cluster cluster-a to be provisioned',
    'ClusterNotProvisioned',
  ],
])('a cluster that is %s', (_name, cluster, message, reason) => {
  it.each([
    ['HuggingFace', HF_AUTH],
    ['OCI', OCI],
    ['PersistentVolumeClaim', { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'weights' } }],
  ])('holds %s at Pending and keeps every observed Object as observed', async (_source, spec) => {
    const observed = await observedAfterFirstPass(spec);
    expect(Object.keys(observed).length).toBeGreaterThan(0);
    const rsp = await run(resolved({ xr: hydration(spec), cluster, secret: spec === HF_AUTH ? tokenSecret() : undefined, observed }));
    const expected: Record<string, JsonObject> = {};
    for (const [key, object] of Object.entries(observed)) expected[key] = keepObservedObject(object);
    expect(desiredResources(rsp)).toEqual(expected);
    // Each kept Object is ready as observed; nothing new is composed.
    for (const [key, ready] of Object.entries(readiness(rsp))) {
      expect(ready).toBe(key === 'hydrate' || key === 'resolve' ? 'READY_UNSPECIFIED' : 'READY_TRUE');
    }
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason, message });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
    expect(results(rsp)).toEqual([]);
  });

  it('composes nothing on a first pass', async () => {
    const rsp = await run(resolved({ xr: hydration(HF), cluster }));
    expect(desiredResources(rsp)).toEqual({});
    expect(compositeStatus(rsp)).toEqual({ phase: 'Pending', message });
  });

  it('keeps an OCI digest latched through the hold', async () => {
    const latched = { phase: 'Ready', resolvedRef: 'registry.example.com/models/qwen:v1', digest: DIGEST, artifactKind: 'Image' };
    const rsp = await run(resolved({ xr: hydration(OCI, latched), cluster }));
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message,
      resolvedRef: 'registry.example.com/models/qwen:v1',
      digest: DIGEST,
      artifactKind: 'Image',
    });
  });

  it('withdraws the mount of a Ready cluster, quietly', async () => {
    const rsp = await run(resolved({ xr: hydration(HF, { phase: 'Ready', staged: 'Qwen/Qwen3-0.6B', mount: { volumes: [] } }), cluster }));
    expect(compositeStatus(rsp)['mount']).toBeUndefined();
    expect(compositeStatus(rsp)['staged']).toBeUndefined();
    expect(results(rsp)).toEqual([]);
  });
});
