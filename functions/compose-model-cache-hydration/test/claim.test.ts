// PersistentVolumeClaim (issue 4): the user's claim, observed only; Pending
// while absent or unbound (never Failed: it may come later), Ready when Bound,
// its access modes published for consumers.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, inferenceCluster } from '#testing';
import { hydration, observe, readiness, resolved, results, run } from './support.js';

const SPEC: JsonObject = { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights' } };
// No storage class, no image volumes: a claim needs neither.
const CLUSTER = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' });

async function desiredClaim(spec: JsonObject = SPEC): Promise<JsonObject> {
  return desiredResources(await run(resolved({ xr: hydration(spec), cluster: CLUSTER })))['claim']!;
}

function claimRemote(phase: string | undefined, accessModes: string[] = ['ReadOnlyMany']) {
  const status: JsonObject = { accessModes };
  if (phase) status['phase'] = phase;
  return { fields: { spec: { accessModes } }, status, ready: phase === 'Bound' };
}

describe('PersistentVolumeClaim source', () => {
  it('observes the claim and never manages it', async () => {
    const rsp = await run(resolved({ xr: hydration(SPEC), cluster: CLUSTER }));
    expect(desiredResources(rsp)).toEqual({
      claim: {
        apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
        kind: 'Object',
        metadata: { annotations: { 'crossplane.io/external-name': 'qwen-weights' } },
        spec: {
          forProvider: {
            manifest: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'qwen-weights', namespace: 'default' } },
          },
          providerConfigRef: { kind: 'ClusterProviderConfig', name: 'cluster-a-pc' },
          readiness: { policy: 'DeriveFromCelQuery', celQuery: 'object.status.phase == "Bound"' },
          managementPolicies: ['Observe'],
        },
      },
    });
    expect(results(rsp)).toEqual([['SEVERITY_NORMAL', 'Mounting claim qwen-weights on cluster-a']]);
  });

  it('claim absent → created → Bound: Pending, Pending, Ready, never Failed', async () => {
    const object = await desiredClaim();
    const absent = await run(resolved({ xr: hydration(SPEC), cluster: CLUSTER, observed: { claim: observe(object) } }));
    expect(compositeStatus(absent)).toEqual({
      phase: 'Pending',
      message: 'claim qwen-weights not found in namespace default on cluster-a',
    });
    expect(condition(absent, 'ArtifactReady')?.reason).toBe('ClaimNotFound');
    expect(results(absent)).toEqual([]);

    const created = await run(
      resolved({
        xr: hydration(SPEC, compositeStatus(absent)),
        cluster: CLUSTER,
        observed: { claim: observe(object, claimRemote('Pending')) },
      }),
    );
    expect(compositeStatus(created)).toEqual({
      phase: 'Pending',
      message: 'claim qwen-weights in namespace default on cluster-a is Pending',
      accessModes: ['ReadOnlyMany'],
    });
    expect(condition(created, 'ArtifactReady')?.reason).toBe('ClaimNotBound');
    expect(readiness(created)).toEqual({ claim: 'READY_UNSPECIFIED' });

    const bound = await run(
      resolved({
        xr: hydration(SPEC, compositeStatus(created)),
        cluster: CLUSTER,
        observed: { claim: observe(object, claimRemote('Bound')) },
      }),
    );
    expect(compositeStatus(bound)).toEqual({
      phase: 'Ready',
      mount: {
        volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'qwen-weights', readOnly: true } }],
        volumeMounts: [{ name: 'model-cache', mountPath: '/mnt/models', readOnly: true }],
        env: [{ name: 'MODELPLANE_MODEL', value: '/mnt/models' }],
      },
      accessModes: ['ReadOnlyMany'],
      staged: 'claim qwen-weights',
    });
    expect(condition(bound, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
    expect(readiness(bound)).toEqual({ claim: 'READY_TRUE' });
    expect(bound.desired?.composite?.ready).toBe('READY_TRUE');
    expect(results(bound)).toEqual([['SEVERITY_NORMAL', 'claim qwen-weights is ready on cluster-a']]);
  });

  it('a ReadWriteOnce claim is Ready and says only single-node replicas can mount it', async () => {
    const object = await desiredClaim();
    const rsp = await run(
      resolved({ xr: hydration(SPEC), cluster: CLUSTER, observed: { claim: observe(object, claimRemote('Bound', ['ReadWriteOnce'])) } }),
    );
    expect(compositeStatus(rsp)).toMatchObject({
      phase: 'Ready',
      accessModes: ['ReadWriteOnce'],
      message: 'claim qwen-weights is ReadWriteOnce: only single-node replicas can mount it',
    });
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({
      status: 'STATUS_CONDITION_TRUE',
      message: 'claim qwen-weights is ReadWriteOnce: only single-node replicas can mount it',
    });
  });

  it('a claim that was lost after Ready goes back to Pending', async () => {
    const object = await desiredClaim();
    const rsp = await run(
      resolved({
        xr: hydration(SPEC, { phase: 'Ready' }),
        cluster: CLUSTER,
        observed: { claim: observe(object, claimRemote('Lost', ['ReadWriteMany'])) },
      }),
    );
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: 'claim qwen-weights in namespace default on cluster-a is Lost',
      accessModes: ['ReadWriteMany'],
    });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('subPath: only that directory, where MODELPLANE_MODEL points', async () => {
    const spec = { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights', subPath: 'qwen/v1' } };
    const object = await desiredClaim(spec);
    const rsp = await run(resolved({ xr: hydration(spec), cluster: CLUSTER, observed: { claim: observe(object, claimRemote('Bound')) } }));
    const mount = compositeStatus(rsp)['mount'] as JsonObject;
    expect(mount['volumeMounts']).toEqual([{ name: 'model-cache', mountPath: '/mnt/models/qwen/v1', subPath: 'qwen/v1', readOnly: true }]);
    expect(mount['env']).toEqual([{ name: 'MODELPLANE_MODEL', value: '/mnt/models/qwen/v1' }]);
  });
});
