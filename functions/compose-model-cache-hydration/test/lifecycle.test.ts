// Pending → Ready for each source, through gRPC against the built server, as
// Crossplane drives it: each reconcile is a first call (requirements only) and
// a second with them resolved; what the function desired is observed on the
// next reconcile, as a simulated workload cluster reports it, and the XR
// carries the status the function wrote last time.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  inferenceCluster,
  items,
  request,
  serveForFile,
  type TestResource,
  type TestResponse,
} from '#testing';
import {
  HF_AUTH,
  REPO,
  TOKEN_B64,
  hydration,
  jobRemote,
  observeAll,
  results,
  run,
  tokenSecret,
  withStatusFrom,
  type Remote,
} from './support.js';

const served = serveForFile('compose-model-cache-hydration');

/** The workload cluster at one moment: what it reports for each desired key (undefined: nothing there yet). */
type ClusterState = (key: string, desired: JsonObject) => Remote | undefined;

class Lifecycle {
  /** The last answer: what the function desires, which Crossplane applies before the next reconcile. */
  private last: TestResponse | undefined;
  constructor(
    private xr: TestResource,
    private readonly required: Record<string, JsonObject | null>,
  ) {}

  /** One reconcile, observing what was last desired as the cluster reports it now; returns the second call's response. */
  async reconcile(cluster: ClusterState, required: Record<string, JsonObject | null> = this.required): Promise<TestResponse> {
    const resources: Record<string, TestResource> = {};
    for (const [key, body] of Object.entries(this.last ? observeAll(this.last, cluster) : {})) resources[key] = { resource: body };
    const observed = { composite: this.xr, resources };
    const first = await run(request({ observed }), served.client);
    expect(first.desired?.resources ?? {}).toEqual({});
    expect(Object.keys(first.requirements?.resources ?? {}).sort()).toEqual(Object.keys(required).sort());

    const requiredResources = Object.fromEntries(
      Object.entries(required).map(([key, body]) => [key, body === null ? items() : items(body)]),
    );
    const rsp = await run(request({ observed, requiredResources }), served.client);
    this.last = rsp;
    this.xr = withStatusFrom(this.xr, rsp);
    return rsp;
  }
}

const phaseOf = (rsp: TestResponse) => compositeStatus(rsp)['phase'];
const keysOf = (rsp: TestResponse) => Object.keys(desiredResources(rsp));
const nothingYet: ClusterState = () => undefined;

describe('HuggingFace, through gRPC', () => {
  it('Pending → Hydrating → Ready, then stays Ready after the Job’s TTL and a rotated token', async () => {
    const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', storageClassName: 'modelplane-rwx' });
    const life = new Lifecycle(hydration(HF_AUTH), { cluster, 'auth-secret': tokenSecret() });
    const world =
      (pvc: string | undefined, job: 'running' | 'complete' | undefined): ClusterState =>
      (key) => {
        if (key === 'pvc') return pvc ? { status: { phase: pvc }, ready: pvc === 'Bound' } : undefined;
        if (key === 'hydrate') return job ? jobRemote(job) : undefined;
        return { ready: true };
      };

    const r1 = await life.reconcile(world(undefined, undefined));
    expect([phaseOf(r1), keysOf(r1)]).toEqual([
      'Pending',
      ['pvc', 'hydrate-account', 'hydrate-role', 'hydrate-binding', 'auth', 'hydrate'],
    ]);
    expect(results(r1)).toEqual([['SEVERITY_NORMAL', `Staging ${REPO}@main on cluster-a`]]);

    const r2 = await life.reconcile(world('Pending', 'running'));
    expect([phaseOf(r2), condition(r2, 'ArtifactReady')?.reason, results(r2)]).toEqual(['Pending', 'Pending', []]);

    const r3 = await life.reconcile(world('Bound', 'running'));
    expect([phaseOf(r3), keysOf(r3), r3.desired?.composite?.ready]).toEqual([
      'Hydrating',
      ['pvc', 'hydrate-account', 'hydrate-role', 'hydrate-binding', 'auth', 'hydrate'],
      'READY_FALSE',
    ]);

    const r4 = await life.reconcile(world('Bound', 'complete'));
    expect([phaseOf(r4), keysOf(r4), r4.desired?.composite?.ready]).toEqual(['Ready', ['pvc'], 'READY_TRUE']);
    expect(compositeStatus(r4)['mount']).toMatchObject({
      env: [
        { name: 'HF_HUB_CACHE' },
        { name: 'HF_HUB_OFFLINE', value: '1' },
        { name: 'MODELPLANE_MODEL', value: REPO },
        { name: 'MODELPLANE_MODEL_REVISION', value: 'main' },
      ],
    });
    expect(results(r4)).toEqual([['SEVERITY_NORMAL', `${REPO}@main is ready on cluster-a`]]);
    expect(JSON.stringify(r4)).not.toContain(TOKEN_B64);

    // The Job is gone (its TTL), and the token was rotated away: still Ready, quietly.
    const r5 = await life.reconcile(world('Bound', undefined), { cluster, 'auth-secret': tokenSecret({}) });
    expect([phaseOf(r5), keysOf(r5), results(r5), condition(r5, 'ArtifactReady')?.reason]).toEqual(['Ready', ['pvc'], [], 'Staged']);
  });
});

describe('OCI, through gRPC', () => {
  it('Pending → Ready once the resolver has written its result; a tag that moves later changes nothing', async () => {
    const ref = 'registry.example.com/models/qwen:v1';
    const manifest = (layer: string) =>
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json' },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layer }],
      });
    const digestOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
    const v1 = manifest('first');
    const v1Moved = manifest('second');
    const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', imageVolumes: true });
    const life = new Lifecycle(hydration({ source: 'OCI', oci: { ref } }), { cluster });
    const world =
      (job: 'running' | 'complete' | undefined, text: string | undefined): ClusterState =>
      (key) => {
        if (key === 'resolve') return job ? jobRemote(job) : undefined;
        if (key === 'resolve-result') return { fields: text ? { data: { ref, digest: digestOf(text), manifest: text } } : {}, ready: true };
        return { ready: true };
      };

    const r1 = await life.reconcile(nothingYet);
    expect([phaseOf(r1), keysOf(r1)]).toEqual([
      'Pending',
      ['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve'],
    ]);
    expect(results(r1)).toEqual([['SEVERITY_NORMAL', `Resolving ${ref} on cluster-a`]]);

    const r2 = await life.reconcile(world('running', undefined));
    expect([phaseOf(r2), compositeStatus(r2)['message']]).toEqual(['Pending', `resolving ${ref} on cluster-a`]);

    const r3 = await life.reconcile(world('complete', v1));
    expect([phaseOf(r3), keysOf(r3), r3.desired?.composite?.ready]).toEqual(['Ready', ['resolve-result'], 'READY_TRUE']);
    expect(compositeStatus(r3)).toMatchObject({ digest: digestOf(v1), artifactKind: 'Image', resolvedRef: ref });

    const r4 = await life.reconcile(world(undefined, v1Moved));
    expect([phaseOf(r4), compositeStatus(r4)['digest'], results(r4)]).toEqual(['Ready', digestOf(v1), []]);
    expect(JSON.stringify(compositeStatus(r4)['mount'])).toContain(`registry.example.com/models/qwen@${digestOf(v1)}`);
  });
});

describe('PersistentVolumeClaim, through gRPC', () => {
  it('absent → created → Bound: Pending until the claim binds, then Ready', async () => {
    const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' });
    const life = new Lifecycle(hydration({ source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights' } }), {
      cluster,
    });
    const claim =
      (phase: string | undefined): ClusterState =>
      () =>
        phase ? { status: { phase, accessModes: ['ReadOnlyMany'] }, ready: phase === 'Bound' } : undefined;

    const r1 = await life.reconcile(nothingYet);
    expect([phaseOf(r1), keysOf(r1)]).toEqual(['Pending', ['claim']]);
    expect(results(r1)).toEqual([['SEVERITY_NORMAL', 'Mounting claim qwen-weights on cluster-a']]);
    const r2 = await life.reconcile(claim(undefined));
    expect([phaseOf(r2), condition(r2, 'ArtifactReady')?.reason, results(r2)]).toEqual(['Pending', 'ClaimNotFound', []]);
    const r3 = await life.reconcile(claim('Pending'));
    expect([phaseOf(r3), condition(r3, 'ArtifactReady')?.reason, compositeStatus(r3)['accessModes']]).toEqual([
      'Pending',
      'ClaimNotBound',
      ['ReadOnlyMany'],
    ]);
    const r5 = await life.reconcile(claim('Bound'));
    expect([phaseOf(r5), r5.desired?.composite?.ready, compositeStatus(r5)['accessModes']]).toEqual([
      'Ready',
      'READY_TRUE',
      ['ReadOnlyMany'],
    ]);
    expect(results(r5)).toEqual([['SEVERITY_NORMAL', 'claim qwen-weights is ready on cluster-a']]);
  });
});
