// A ModelCacheHydration changing parent (docs/design/fleet.md, "Upgrading in
// place"): the old one, told to orphan on delete, composes every Object
// without Delete and says so only once every Object it observes agrees; the
// new one, given the old one's status to inherit, reads it as its own last
// status until it has one, and adopts what is on the cluster by name.

import { describe, expect, it } from 'vitest';
import { ALL_BUT_DELETE, JOB_POLICIES, huggingFaceMount, toJson, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, inferenceCluster, type TestResource, type TestResponse } from '#testing';
import { BOUND_CLAIM, CLUSTER_A, HF, NAMES, REPO, hydration, observe, observeAll, resolved, results, run } from './support.js';

const ORPHAN = { 'modelplane.ai/orphan-on-delete': 'true' };
const COMMIT = 'c'.repeat(40);
/** A Ready copy's mount pins the commit it staged. */
const HF_MOUNT = toJson(huggingFaceMount({ claimName: NAMES.pvc, repo: REPO, revision: COMMIT }));

function annotated(xr: TestResource, annotations: Record<string, string>): TestResource {
  const body = structuredClone(xr.resource);
  (body['metadata'] as JsonObject)['annotations'] = annotations;
  return { resource: body };
}

const policies = (rsp: TestResponse) =>
  Object.fromEntries(
    Object.entries(desiredResources(rsp)).map(([key, object]) => [key, (object['spec'] as JsonObject)['managementPolicies']]),
  );

/** The status a Ready HuggingFace hydration had, as its parent hands it on. */
const READY_STATUS: JsonObject = {
  phase: 'Ready',
  mount: HF_MOUNT,
  staged: REPO,
  sizeGiB: 20,
  attempts: 1,
  attemptsFor: REPO,
  verified: true,
  commit: COMMIT,
};

describe('orphan on delete', () => {
  it('composes every Object without Delete, keeping the policies that had none, and says so only once they are observed so', async () => {
    const xr = annotated(hydration(HF), ORPHAN);
    const first = await run(resolved({ xr }));
    expect(policies(first)).toEqual({
      pvc: ALL_BUT_DELETE,
      'hydrate-account': ALL_BUT_DELETE,
      'hydrate-role': ALL_BUT_DELETE,
      'hydrate-binding': ALL_BUT_DELETE,
      hydrate: JOB_POLICIES,
    });
    // Nothing observed yet: nothing can delete.
    expect(compositeStatus(first)['orphanOnDelete']).toBe(true);

    // Observed as a cache that composed them before the hand-over: default policies, able to delete.
    const before = await run(resolved({ xr: hydration(HF) }));
    const observedBefore = observeAll(before, (key) => (key === 'pvc' ? BOUND_CLAIM : undefined));
    const turning = await run(resolved({ xr, observed: observedBefore }));
    expect(compositeStatus(turning)['orphanOnDelete']).toBe(false);
    expect(Object.values(policies(turning)).every((p) => Array.isArray(p) && !(p as string[]).includes('Delete'))).toBe(true);

    // Once Crossplane applied that, every observed Object agrees.
    const observedAfter = observeAll(turning, (key) => (key === 'pvc' ? BOUND_CLAIM : undefined));
    const done = await run(resolved({ xr, observed: observedAfter }));
    expect(compositeStatus(done)['orphanOnDelete']).toBe(true);
  });

  it('says false after the hand-over is called off, until every Object can delete again, and nothing after that', async () => {
    const orphaned = await run(resolved({ xr: annotated(hydration(HF), ORPHAN) }));
    const observed = observeAll(orphaned, (key) => (key === 'pvc' ? BOUND_CLAIM : undefined));
    const calledOff = await run(resolved({ xr: hydration(HF), observed }));
    expect(compositeStatus(calledOff)['orphanOnDelete']).toBe(false);
    expect(policies(calledOff)['pvc']).toBeUndefined(); // the default again, Delete included
    const restored = await run(
      resolved({ xr: hydration(HF), observed: observeAll(calledOff, (key) => (key === 'pvc' ? BOUND_CLAIM : undefined)) }),
    );
    expect(compositeStatus(restored)).not.toHaveProperty('orphanOnDelete');
  });

  it('orphans what a hold keeps as observed too', async () => {
    const before = await run(resolved({ xr: hydration(HF) }));
    const observed = observeAll(before, (key) => (key === 'pvc' ? BOUND_CLAIM : undefined));
    const held = await run(resolved({ xr: annotated(hydration(HF), ORPHAN), cluster: null, observed }));
    expect(condition(held, 'ArtifactReady')?.reason).toBe('ClusterNotFound');
    expect(Object.values(policies(held)).every((p) => Array.isArray(p) && !(p as string[]).includes('Delete'))).toBe(true);
  });
});

describe('a hydration that inherits a status', () => {
  it('is Ready at once with the inherited mount, adopting the claim by name, composing no Job, telling nothing new', async () => {
    const rsp = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: READY_STATUS }) }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(((desiredResources(rsp)['pvc']!['spec'] as JsonObject)['forProvider'] as JsonObject)['manifest']).toMatchObject({
      metadata: { name: NAMES.pvc },
    });
    expect(compositeStatus(rsp)).toMatchObject({
      phase: 'Ready',
      mount: HF_MOUNT,
      staged: REPO,
      sizeGiB: 20,
      verified: true,
      commit: COMMIT,
    });
    expect(results(rsp)).toEqual([]); // no "Staging", no "is ready": it was Ready, and is
  });

  it('stays Ready while its claim’s Object exists but provider-kubernetes has not reported the claim yet', async () => {
    const first = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: READY_STATUS }) }));
    const own = { ...(first.desired?.composite?.resource['status'] as JsonObject) };
    const observed = { pvc: observe(desiredResources(first)['pvc']!) }; // no atProvider yet
    const rsp = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: READY_STATUS }, own), observed }));
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
  });

  it('reads its own status once it has one, whatever it inherits', async () => {
    const rsp = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: READY_STATUS }, { phase: 'Pending', message: 'x' }) }));
    expect(compositeStatus(rsp)['phase']).toBe('Pending');
    expect(Object.keys(desiredResources(rsp))).toContain('hydrate');
  });

  it('falls back as any Ready cluster does when the adopted claim is reported lost (not Bound)', async () => {
    const first = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: READY_STATUS }) }));
    const own = first.desired?.composite?.resource['status'] as JsonObject;
    const observed = { pvc: observe(desiredResources(first)['pvc']!, { status: { phase: 'Pending' }, ready: false }) };
    const rsp = await run(resolved({ xr: hydration(HF, own), observed }));
    expect(compositeStatus(rsp)['phase']).toBe('Pending');
  });

  it('keeps an OCI digest it inherits: no resolver runs, the tag is not read again', async () => {
    const digest = `sha256:${'d'.repeat(64)}`;
    const ref = 'registry.example.com/models/qwen:v1';
    const inherited = { phase: 'Ready', resolvedRef: ref, digest, artifactKind: 'ModelArtifact', staged: ref };
    const rsp = await run(resolved({ xr: hydration({ source: 'OCI', oci: { ref }, inheritedStatus: inherited }) }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['resolve-result']);
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', digest, artifactKind: 'ModelArtifact' });
  });

  it('keeps a claim source Ready until the claim is reported', async () => {
    const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' });
    const inherited = {
      phase: 'Ready',
      staged: 'claim qwen-weights',
      accessModes: ['ReadOnlyMany'],
      mount: { volumes: [], volumeMounts: [], env: [] },
    };
    const rsp = await run(
      resolved({
        xr: hydration({
          source: 'PersistentVolumeClaim',
          persistentVolumeClaim: { claimName: 'qwen-weights' },
          inheritedStatus: inherited,
        }),
        cluster,
      }),
    );
    expect(compositeStatus(rsp)).toMatchObject({ phase: 'Ready', accessModes: ['ReadOnlyMany'] });
  });

  it('refuses an inherited status that is not an object, naming the field', async () => {
    const rsp = await run(resolved({ xr: hydration({ ...HF, inheritedStatus: 'Ready' }), cluster: CLUSTER_A }));
    expect(rsp.results.find((r) => r.severity === 'SEVERITY_FATAL')?.message).toContain('spec.inheritedStatus must be an object');
  });
});
