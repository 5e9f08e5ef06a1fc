// What a finished Job leaves (release.ts): its access and the token Secret are
// handed to the remote Job (an owner reference, no Delete policy, the Secret
// emptied) for one more round, then dropped once the cluster shows the
// reference; a Job still running hands over nothing, so what it used is
// deleted as before.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALL_BUT_DELETE, getIn, getObject, type JsonObject } from '#lib';
import { compositeStatus, desiredResources, inferenceCluster } from '#testing';
import {
  BOUND_CLAIM,
  HF_AUTH,
  NAMES,
  TOKEN_B64,
  hydration,
  jobConditions,
  observe,
  resolved,
  run,
  tokenSecret,
  withStatusFrom,
  type Remote,
} from './support.js';

const JOB_UID = '5f0c8a1e-0000-4000-8000-000000000001';
const ACCESS = ['hydrate-account', 'hydrate-role', 'hydrate-binding'] as const;
const SCOPED = [...ACCESS, 'auth'] as const;

function manifestOf(object: JsonObject): JsonObject {
  return getObject(object, 'spec', 'forProvider', 'manifest')!;
}

/** The remote Job in `state`, as provider-kubernetes mirrors it: with the uid the cluster gave it (none when null). */
function remoteJob(desired: JsonObject, state: keyof typeof jobConditions, uid: string | null = JOB_UID): Remote {
  const metadata = { ...(manifestOf(desired)['metadata'] as JsonObject), ...(uid === null ? {} : { uid }) };
  return { status: structuredClone(jobConditions[state]), fields: { metadata }, ready: state === 'complete' };
}

/** Every Object of the HuggingFace first pass, the claim Bound and the Job in `state`. */
async function staging(state: keyof typeof jobConditions, uid: string | null = JOB_UID): Promise<Record<string, JsonObject>> {
  const first = desiredResources(await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret() })));
  const observed: Record<string, JsonObject> = {};
  for (const [key, object] of Object.entries(first)) {
    if (key === 'pvc') observed[key] = observe(object, BOUND_CLAIM);
    else if (key === 'hydrate') observed[key] = observe(object, remoteJob(object, state, uid));
    else observed[key] = observe(object, { ready: true });
  }
  return observed;
}

const OWNER = { apiVersion: 'batch/v1', kind: 'Job', name: NAMES.job, uid: JOB_UID };

/**
 * The next reconcile's observed Objects: `keys` as the last response desired them, the cluster showing
 * what they ask for; the Job's own Object gone (dropped, orphaned, in the round that gave them to it).
 */
function applied(observed: Record<string, JsonObject>, desired: Record<string, JsonObject>, keys: readonly string[]) {
  const next = { ...observed };
  delete next['hydrate'];
  for (const key of keys) next[key] = observe(desired[key]!, { ready: true });
  return next;
}

describe('a finished Job takes its access and the token with it', () => {
  it('first gives each to the Job once it completes: owned by it on the cluster, the token taken out, still deletable', async () => {
    const observed = await staging('complete');
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret(), observed }));
    const desired = desiredResources(rsp);
    // The Job itself is dropped in this round (orphaned: its TTL removes it).
    expect(Object.keys(desired)).toEqual(['pvc', ...SCOPED]);
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    for (const key of SCOPED) {
      const before = manifestOf(observed[key]!);
      const after = manifestOf(desired[key]!);
      // Everything as composed before, plus the owner reference; the Secret without its data.
      const kept = { ...before };
      delete kept['data'];
      expect(after, key).toEqual({ ...kept, metadata: { ...(before['metadata'] as JsonObject), ownerReferences: [OWNER] } });
      expect(getIn(desired[key], 'spec', 'providerConfigRef'), key).toEqual(getIn(observed[key], 'spec', 'providerConfigRef'));
      // Until the cluster shows the Job owning it, a delete of the cache still deletes it.
      expect(getIn(desired[key], 'spec', 'managementPolicies'), key).toBeUndefined();
    }
    // The token was there before, and is in no desired resource now: it leaves the cluster in this round.
    expect(getIn(observed['auth'], 'spec', 'forProvider', 'manifest', 'data')).toEqual({ HF_TOKEN: TOKEN_B64 });
    expect(JSON.stringify(rsp.desired?.resources)).not.toContain(TOKEN_B64);
  });

  it('then drops the Delete policy of each the cluster shows owned by the Job, then lets it go', async () => {
    const observed = await staging('complete');
    const first = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret(), observed }));
    const owning = desiredResources(first);
    // From here the XR is Ready (its last status) and the Job's Object is gone: the Objects name the Job.
    const ready = withStatusFrom(hydration(HF_AUTH), first);
    const orphaning = desiredResources(
      await run(resolved({ xr: ready, secret: tokenSecret(), observed: applied(observed, owning, SCOPED) })),
    );
    expect(Object.keys(orphaning)).toEqual(['pvc', ...SCOPED]);
    for (const key of SCOPED) {
      expect(getIn(orphaning[key], 'spec', 'managementPolicies'), key).toEqual(ALL_BUT_DELETE);
      expect(manifestOf(orphaning[key]!), key).toEqual(manifestOf(owning[key]!));
    }
    const cases: { name: string; orphaned: readonly string[]; desired: string[] }[] = [
      { name: 'all four orphaned', orphaned: SCOPED, desired: ['pvc'] },
      { name: 'only the token Secret orphaned', orphaned: ['auth'], desired: ['pvc', ...ACCESS] },
      { name: 'only the access orphaned', orphaned: ACCESS, desired: ['pvc', 'auth'] },
      { name: 'none yet', orphaned: [], desired: ['pvc', ...SCOPED] },
    ];
    for (const c of cases) {
      const next = applied(applied(observed, owning, SCOPED), orphaning, c.orphaned);
      const rsp = await run(resolved({ xr: ready, secret: tokenSecret(), observed: next }));
      expect(Object.keys(desiredResources(rsp)), c.name).toEqual(c.desired);
      expect(compositeStatus(rsp)['phase'], c.name).toBe('Ready');
    }
  });

  it('keeps the Delete policy while the cluster does not show the Job owning it, or the Object still asks for the token', async () => {
    const observed = await staging('complete');
    const first = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret(), observed }));
    const owning = desiredResources(first);
    // The role: its Object updated, the cluster not yet (no owner reference). The Secret: still asking for the token.
    const next = applied(observed, owning, ['hydrate-account', 'hydrate-binding']);
    next['hydrate-role'] = observe(owning['hydrate-role']!, { ready: true, fields: { metadata: { name: NAMES.job } } });
    const withToken = structuredClone(owning['auth']!);
    (getObject(withToken, 'spec', 'forProvider', 'manifest') as JsonObject)['data'] = { HF_TOKEN: TOKEN_B64 };
    next['auth'] = observe(withToken, { ready: true });
    const xr = withStatusFrom(hydration(HF_AUTH), first);
    const desired = desiredResources(await run(resolved({ xr, secret: tokenSecret(), observed: next })));
    expect(Object.keys(desired)).toEqual(['pvc', ...SCOPED]);
    expect(getIn(desired['hydrate-account'], 'spec', 'managementPolicies')).toEqual(ALL_BUT_DELETE);
    expect(getIn(desired['hydrate-role'], 'spec', 'managementPolicies')).toBeUndefined();
    expect(getIn(desired['auth'], 'spec', 'managementPolicies')).toBeUndefined();
    expect(getIn(desired['auth'], 'spec', 'forProvider', 'manifest', 'data')).toBeUndefined();
  });

  it('hands them to a Job whose attempts are spent (Failed), and the failure stays latched', async () => {
    const observed = await staging('failed');
    const xr = hydration(HF_AUTH, { attempts: 3, attemptsFor: 'Qwen/Qwen3-0.6B@main' });
    const rsp = await run(resolved({ xr, secret: tokenSecret(), observed }));
    expect(compositeStatus(rsp)['phase']).toBe('Failed');
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['pvc', ...SCOPED]);
    for (const key of SCOPED)
      expect(getIn(desired[key], 'spec', 'forProvider', 'manifest', 'metadata', 'ownerReferences'), key).toEqual([OWNER]);
  });

  it('deletes them as before when the cluster has not reported the Job\u2019s uid', async () => {
    const observed = await staging('complete', null);
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret(), observed }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
  });

  it('hands nothing to a Job still running: a token taken away mid-download leaves the cluster at once', async () => {
    const observed = await staging('running');
    const rsp = await run(resolved({ xr: hydration(HF_AUTH), secret: tokenSecret({}), observed }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
    expect(compositeStatus(rsp)['phase']).toBe('Hydrating');
  });
});

describe('the OCI resolver takes its access with it', () => {
  const REF = 'registry.example.com/models/qwen:v1';
  const CLUSTER = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', imageVolumes: true });
  const OCI: JsonObject = { source: 'OCI', oci: { ref: REF } };
  const IMAGE = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${'a'.repeat(64)}`, size: 2 },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${'b'.repeat(64)}`, size: 3 }],
  });
  const DIGEST = `sha256:${createHash('sha256').update(IMAGE).digest('hex')}`;

  it('hands the resolver\u2019s ServiceAccount, Role and RoleBinding to the finished resolver; the result ConfigMap stays', async () => {
    const first = desiredResources(await run(resolved({ xr: hydration(OCI), cluster: CLUSTER })));
    const observed: Record<string, JsonObject> = {};
    for (const [key, object] of Object.entries(first)) {
      if (key === 'resolve') observed[key] = observe(object, remoteJob(object, 'complete'));
      else if (key === 'resolve-result')
        observed[key] = observe(object, { fields: { data: { ref: REF, digest: DIGEST, manifest: IMAGE } }, ready: true });
      else observed[key] = observe(object, { ready: true });
    }
    const rsp = await run(resolved({ xr: hydration(OCI), cluster: CLUSTER, observed }));
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['resolve-result', 'resolve-account', 'resolve-role', 'resolve-binding']);
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: getIn(manifestOf(first['resolve']!), 'metadata', 'name'), uid: JOB_UID };
    for (const key of ['resolve-account', 'resolve-role', 'resolve-binding']) {
      expect(getIn(desired[key], 'spec', 'forProvider', 'manifest', 'metadata', 'ownerReferences'), key).toEqual([owner]);
      expect(getIn(desired[key], 'spec', 'managementPolicies'), key).toBeUndefined();
    }
    expect(getIn(desired['resolve-result'], 'spec', 'managementPolicies')).toEqual(['Observe', 'Create', 'Delete']);
  });
});
