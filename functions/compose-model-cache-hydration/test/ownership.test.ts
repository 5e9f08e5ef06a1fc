// Issue 13, point 5, through gRPC: every team's objects share `default` on a
// workload cluster, so what a cache stages is labelled with the namespace it
// was staged for, and a PersistentVolumeClaim-source cache of another
// namespace can't mount it. A platform's own claim stays usable by anyone.

import { describe, expect, it } from 'vitest';
import { cacheNames, type JsonObject } from '#lib';
import { composite, compositeStatus, condition, desiredResources, inferenceCluster, manifestOf, serveForFile } from '#testing';
import { HF, hydration, observe, resolved, run } from './support.js';

const served = serveForFile('compose-model-cache-hydration');
const CLUSTER = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', storageClassName: 'modelplane-rwx' });
/** The claim team-a's HuggingFace cache "qwen" staged. */
const TEAM_A_CLAIM = cacheNames('team-a', 'qwen').pvc;

function claimCache(namespace: string, claimName: string) {
  return composite('ModelCacheHydration', namespace, 'modelcache-x-cluster-a', {
    clusterName: 'cluster-a',
    cacheName: 'mine',
    source: 'PersistentVolumeClaim',
    persistentVolumeClaim: { claimName },
  });
}

/** One reconcile of `xr` observing a Bound claim with these labels. */
async function mountAttempt(xr: ReturnType<typeof claimCache>, claimName: string, labels?: Record<string, string>) {
  const first = await run(resolved({ xr, cluster: CLUSTER }), served.client);
  const metadata: JsonObject = { name: claimName, namespace: 'default' };
  if (labels) metadata['labels'] = labels;
  const claim = observe(desiredResources(first)['claim']!, {
    fields: { metadata, spec: { accessModes: ['ReadWriteMany'] } },
    status: { phase: 'Bound', accessModes: ['ReadWriteMany'] },
    ready: true,
  });
  return run(resolved({ xr, cluster: CLUSTER, observed: { claim } }), served.client);
}

describe('staged claims belong to their namespace', () => {
  it('labels what a HuggingFace cache stages with its namespace (the PVC keeps its name)', async () => {
    const rsp = await run(resolved({ xr: hydration(HF), cluster: CLUSTER }), served.client);
    const pvc = manifestOf(desiredResources(rsp)['pvc']) as { metadata: JsonObject };
    expect(pvc.metadata).toEqual({
      name: cacheNames('ml-team', 'qwen').pvc,
      namespace: 'default',
      labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/namespace': 'ml-team' },
      annotations: { 'modelplane.ai/owner-6f168f982eb9': 'ModelCache qwen in namespace ml-team' },
    });
  });

  it('refuses a claim staged for team-a as the source of a cache in team-b, naming the owner', async () => {
    const rsp = await mountAttempt(claimCache('team-b', TEAM_A_CLAIM), TEAM_A_CLAIM, {
      'modelplane.ai/modelcache': 'qwen',
      'modelplane.ai/namespace': 'team-a',
    });
    expect([compositeStatus(rsp)['phase'], condition(rsp, 'ArtifactReady')?.reason, compositeStatus(rsp)['mount']]).toEqual([
      'Failed',
      'ClaimOwnedElsewhere',
      undefined,
    ]);
    expect(compositeStatus(rsp)['message']).toContain('staged for namespace team-a');
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('a claim staged before the namespace label: its owner is told by its name, so only that namespace mounts it', async () => {
    const legacy = { 'modelplane.ai/modelcache': 'qwen' };
    const other = await mountAttempt(claimCache('team-b', TEAM_A_CLAIM), TEAM_A_CLAIM, legacy);
    expect([compositeStatus(other)['phase'], condition(other, 'ArtifactReady')?.reason]).toEqual(['Failed', 'ClaimOwnedElsewhere']);
    const own = await mountAttempt(claimCache('team-a', TEAM_A_CLAIM), TEAM_A_CLAIM, legacy);
    expect([compositeStatus(own)['phase'], condition(own, 'ArtifactReady')?.reason]).toEqual(['Ready', 'Staged']);
  });

  it('the same namespace, and a platform-provisioned claim from anywhere, stay usable', async () => {
    const own = await mountAttempt(claimCache('team-a', TEAM_A_CLAIM), TEAM_A_CLAIM, {
      'modelplane.ai/modelcache': 'qwen',
      'modelplane.ai/namespace': 'team-a',
    });
    expect(compositeStatus(own)['phase']).toBe('Ready');
    const platform = await mountAttempt(claimCache('team-b', 'shared-weights'), 'shared-weights', { app: 'weights' });
    expect(compositeStatus(platform)['phase']).toBe('Ready');
  });
});
