// The HuggingFace mount contract keeps engines off the hub, through gRPC
// against the built server: once Ready it publishes HF_HUB_OFFLINE=1 and the
// revision it staged, so an engine reads exactly the staged snapshot and never
// downloads into the shared claim at serve time.

import { describe, expect, it } from 'vitest';
import { validateMount, type JsonObject } from '#lib';
import { compositeStatus, desiredResources, serveForFile, type TestResponse } from '#testing';
import { HF, hydration, jobRemote, observe, resolved, run } from './support.js';

const served = serveForFile('compose-model-cache-hydration');

/** First reconcile (PVC and Job desired), then the PVC Bound and the Job complete: the Ready answer. */
async function staged(spec: JsonObject): Promise<TestResponse> {
  const first = desiredResources(await run(resolved({ xr: hydration(spec) }), served.client));
  const observed = {
    pvc: observe(first['pvc']!, { status: { phase: 'Bound' }, ready: true }),
    hydrate: observe(first['hydrate']!, jobRemote('complete')),
  };
  return run(resolved({ xr: hydration(spec), observed }), served.client);
}

const envOf = (rsp: TestResponse) => (compositeStatus(rsp)['mount'] as JsonObject)['env'];

describe('HuggingFace contract: offline, pinned to the staged revision', () => {
  it('a pinned commit is published as MODELPLANE_MODEL_REVISION, with HF_HUB_OFFLINE=1', async () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    const spec = { ...HF, huggingFace: { ...(HF['huggingFace'] as JsonObject), revision: commit } };
    const rsp = await staged(spec);
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    expect(envOf(rsp)).toEqual([
      { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
      { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'MODELPLANE_MODEL_REVISION', value: commit },
    ]);
    expect(validateMount(compositeStatus(rsp)['mount']).ok).toBe(true);
  });

  it('no revision asked: the hub default that `hf download` staged, main', async () => {
    const rsp = await staged(HF);
    expect(envOf(rsp)).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: 'main' });
    expect(envOf(rsp)).toContainEqual({ name: 'HF_HUB_OFFLINE', value: '1' });
  });
});
