// Progress, verification, the resolved commit, file selection and the claim
// size, as the function reads them back from the download's report on its
// Job (hydrate.py writes it; provider-kubernetes observes it). The function
// stays pure: everything here is what a request carries.

import { describe, expect, it } from 'vitest';
import { InputError, parseModelSource, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, manifestOf, type TestResource, type TestResponse } from '#testing';
import { artifactOf } from '../src/huggingface.js';
import { bytes, duration, parseReport, percentOf, progressOf } from '../src/progress.js';
import {
  BOUND_CLAIM,
  HF as HF_20,
  HF_AUTH as HF_AUTH_20,
  REPO,
  TOKEN,
  TOKEN_B64,
  hydration,
  jobRemote,
  observe,
  resolved,
  run,
  tokenSecret,
  type World,
} from './support.js';

// The reports below are of 100 GiB of files: a claim of 120 GiB holds them (a report of more than its claim is refused).
const SIZE_GIB = 120;
const HF: JsonObject = { ...HF_20, huggingFace: { ...(HF_20['huggingFace'] as JsonObject), sizeGiB: SIZE_GIB } };
const HF_AUTH: JsonObject = { ...HF_AUTH_20, huggingFace: { ...(HF_AUTH_20['huggingFace'] as JsonObject), sizeGiB: SIZE_GIB } };

const JOB = 'modelcache-ml-team-qwen-hydrate-256ec';
const SIZER = 'modelcache-ml-team-qwen-size-0415e';
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const GIB = 1024 ** 3;

function report(fields: JsonObject): JsonObject {
  return {
    state: 'Downloading',
    commit: COMMIT,
    bytesDone: 0,
    bytesTotal: 100 * GIB,
    filesDone: 0,
    filesTotal: 40,
    requiredGiB: 112,
    ...fields,
  };
}

/** The desired Job, observed in `state`, carrying `progress` as the script writes it. */
function reportedJob(desired: JsonObject, state: 'running' | 'complete' | 'failed', progress?: JsonObject | string): JsonObject {
  const metadata = structuredClone(manifestOf(desired)['metadata']) as JsonObject & { annotations: Record<string, string> };
  if (progress !== undefined) {
    metadata.annotations['modelplane.ai/progress'] = typeof progress === 'string' ? progress : JSON.stringify(progress);
  }
  return observe(desired, { ...jobRemote(state), fields: { metadata } });
}

async function firstPass(spec: JsonObject, world: Partial<World> = {}): Promise<Record<string, JsonObject>> {
  return desiredResources(await run(resolved({ xr: hydration(spec), ...world })));
}

async function withReport(
  spec: JsonObject,
  state: 'running' | 'complete' | 'failed',
  progress?: JsonObject | string,
  status?: JsonObject,
): Promise<TestResponse> {
  const world: Partial<World> = spec['authSecret'] === undefined ? {} : { secret: tokenSecret() };
  const first = await firstPass(spec, world);
  return run(
    resolved({
      ...world,
      xr: hydration(spec, status),
      observed: { pvc: observe(first['pvc']!, BOUND_CLAIM), hydrate: reportedJob(first['hydrate']!, state, progress) },
    }),
  );
}

describe('progress while staging', () => {
  it.each([
    [0, 0, '0%', '0% (0 bytes of 100.0 GiB, 0 of 40 files)'],
    [37 * GIB, 12, '37%', '37% (37.0 GiB of 100.0 GiB, 12 of 40 files)'],
    [100 * GIB - 1, 39, '99%', '99% (99.9 GiB of 100.0 GiB, 39 of 40 files)'],
  ])('reports %s bytes done as a percent in status and message', async (done, files, summary, described) => {
    const rsp = await withReport(HF, 'running', report({ bytesDone: done, filesDone: files }));
    const status = compositeStatus(rsp);
    expect(status['phase']).toBe('Hydrating');
    expect(status['progress']).toEqual({
      percent: Number(summary.replace('%', '')),
      bytesDone: done,
      bytesTotal: 100 * GIB,
      filesDone: files,
      filesTotal: 40,
      summary,
    });
    expect(status['commit']).toBe(COMMIT);
    expect(status['message']).toBe(`downloading ${REPO} to PVC modelcache-ml-team-qwen-17db2 on cluster-a: ${described}`);
  });

  it('says a stalled download is stalled, and for how long', async () => {
    const rsp = await withReport(HF, 'running', report({ bytesDone: 37 * GIB, filesDone: 12, stalledSeconds: 900 }));
    expect(compositeStatus(rsp)['message']).toMatch(/: 37% \(37\.0 GiB of 100\.0 GiB, 12 of 40 files\); stalled: no new byte for 15m$/);
    expect((compositeStatus(rsp)['progress'] as JsonObject)['summary']).toBe('37%, stalled 15m');
  });

  it('says when the download is being verified', async () => {
    const rsp = await withReport(HF, 'running', report({ state: 'Verifying', bytesDone: 100 * GIB, filesDone: 40 }));
    expect(compositeStatus(rsp)['message']).toBe(`verifying ${REPO} on cluster-a against the hub: 40 files, 100.0 GiB at commit ${COMMIT}`);
    expect((compositeStatus(rsp)['progress'] as JsonObject)['summary']).toBe('100%, verifying');
  });

  it.each([
    ['not JSON', '{'],
    ['an unknown state', JSON.stringify(report({ state: 'Done' }))],
    ['more bytes done than in total', JSON.stringify(report({ bytesDone: 101 * GIB }))],
    ['a negative count', JSON.stringify(report({ filesDone: -1 }))],
    ['a commit that is not 40 hex digits', JSON.stringify(report({ commit: 'main' }))],
    ['a fractional count', JSON.stringify(report({ bytesDone: 1.5 }))],
  ])('shows no progress from a report with %s (a pod wrote it: it is checked)', async (_what, raw) => {
    const rsp = await withReport(HF, 'running', raw);
    expect(compositeStatus(rsp)).not.toHaveProperty('progress');
    expect(compositeStatus(rsp)['message']).toBe(`downloading ${REPO} to PVC modelcache-ml-team-qwen-17db2 on cluster-a`);
  });
});

describe('verified before Ready, and the commit it resolved to', () => {
  const verified = report({ state: 'Verified', bytesDone: 100 * GIB, filesDone: 40 });

  it('records verified, the totals at 100% and the commit, and pins the mount to the commit', async () => {
    const rsp = await withReport(HF_AUTH, 'complete', verified);
    const status = compositeStatus(rsp);
    expect(status['phase']).toBe('Ready');
    expect(status['verified']).toBe(true);
    expect(status['commit']).toBe(COMMIT);
    expect(status['progress']).toEqual({
      percent: 100,
      bytesDone: 100 * GIB,
      bytesTotal: 100 * GIB,
      filesDone: 40,
      filesTotal: 40,
      summary: '100%, verified',
    });
    // spec.huggingFace.revision is the branch "main"; engines load the commit it resolved to.
    expect((status['mount'] as { env: JsonObject[] }).env).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: COMMIT });
  });

  it('keeps all of it latched once the Job is gone (its TTL)', async () => {
    const ready = await withReport(HF, 'complete', verified);
    const first = await firstPass(HF);
    const later = await run(
      resolved({ xr: hydration(HF, compositeStatus(ready)), observed: { pvc: observe(first['pvc']!, BOUND_CLAIM) } }),
    );
    const status = compositeStatus(later);
    expect([status['phase'], status['verified'], status['commit'], status['progress']]).toEqual([
      'Ready',
      true,
      COMMIT,
      compositeStatus(ready)['progress'],
    ]);
    expect(status['mount']).toEqual(compositeStatus(ready)['mount']);
  });

  it('fails with the file that did not match, in the script’s words, beside the Job’s reason', async () => {
    const message = 'verification failed: model-00003-of-00040.safetensors: sha256 ab12, the hub says cd34';
    const rsp = await withReport(HF, 'failed', { state: 'Failed', message });
    expect(compositeStatus(rsp)['phase']).toBe('Failed');
    expect(compositeStatus(rsp)['message']).toContain(
      `failed (attempt 1 of 3): ${message} (BackoffLimitExceeded: Job has reached the specified backoff limit)`,
    );
    expect(condition(rsp, 'ArtifactReady')?.reason).toBe('HydrationFailed');
  });
});

describe('the reporter’s access: least privilege', () => {
  it('is a ServiceAccount the Job runs as, and a Role that can get and patch only the hydration and sizing Jobs', async () => {
    const desired = await firstPass(HF);
    const role = manifestOf(desired['hydrate-role']);
    expect(role['rules']).toEqual([{ apiGroups: ['batch'], resources: ['jobs'], resourceNames: [JOB, SIZER], verbs: ['get', 'patch'] }]);
    expect(manifestOf(desired['hydrate-binding'])).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: JOB },
      subjects: [{ kind: 'ServiceAccount', name: JOB, namespace: 'default' }],
    });
    expect(manifestOf(desired['hydrate-account'])).toMatchObject({ kind: 'ServiceAccount', metadata: { name: JOB } });
    expect(manifestOf(desired['hydrate'])).toMatchObject({ spec: { template: { spec: { serviceAccountName: JOB } } } });
  });

  it('goes with the Job once Ready', async () => {
    const rsp = await withReport(HF, 'complete', report({ state: 'Verified', bytesDone: 100 * GIB, filesDone: 40 }));
    expect(Object.keys(desiredResources(rsp))).toEqual(['pvc']);
  });
});

describe('file selection', () => {
  const selected = {
    source: 'HuggingFace',
    huggingFace: { repo: REPO, sizeGiB: 20, include: ['*.safetensors', '*.json'], exclude: ['original/*'] },
  };

  it('is part of what identifies the artifact: the Job, its marker and Ready answer to the selection', async () => {
    const artifact = `${REPO} include=["*.json","*.safetensors"] exclude=["original/*"]`;
    expect(artifactOf({ repo: REPO, include: ['*.safetensors', '*.json'], exclude: ['original/*'] })).toBe(artifact);
    const desired = await firstPass(selected);
    expect(manifestOf(desired['hydrate'])).toMatchObject({ metadata: { annotations: { 'modelplane.ai/artifact': artifact } } });
    // Ready for the whole repo is not Ready for a selection of it: it stages anew.
    const first = await firstPass(HF);
    const rsp = await run(
      resolved({ xr: hydration(selected, { phase: 'Ready', staged: REPO }), observed: { pvc: observe(first['pvc']!, BOUND_CLAIM) } }),
    );
    expect(compositeStatus(rsp)['phase']).toBe('Hydrating');
  });

  it('never reads two different selections alike', () => {
    expect(artifactOf({ repo: REPO, include: ['a,b'] })).not.toBe(artifactOf({ repo: REPO, include: ['a', 'b'] }));
    expect(artifactOf({ repo: REPO, include: ['a'] })).not.toBe(artifactOf({ repo: REPO, exclude: ['a'] }));
    expect(artifactOf({ repo: REPO, include: ['b', 'a', 'a'] })).toBe(artifactOf({ repo: REPO, include: ['a', 'b'] }));
  });

  it.each([
    [{ include: [''] }, 'spec.huggingFace.include[0]', 'must not be empty'],
    [{ include: ['-rf'] }, 'spec.huggingFace.include[0]', 'must not start with "-"'],
    [{ exclude: ['a\0b'] }, 'spec.huggingFace.exclude[0]', 'must not contain a NUL character'],
    [{ include: Array.from({ length: 33 }, (_, i) => `${i}`) }, 'spec.huggingFace.include', 'must have at most 32 items'],
    [{ include: '*.json' }, 'spec.huggingFace.include', 'must be a list'],
  ])('refuses %j naming the field', (fields, field, problem) => {
    const parse = () => parseModelSource({ source: 'HuggingFace', huggingFace: { repo: REPO, ...fields } }, 'spec');
    expect(parse).toThrow(InputError);
    expect(parse).toThrow(field);
    expect(parse).toThrow(problem);
  });
});

describe('sizeGiB resolved on the workload cluster', () => {
  const unsized = { source: 'HuggingFace', huggingFace: { repo: REPO } };

  it('runs only the sizing Job first: no claim, nothing downloaded', async () => {
    const rsp = await run(resolved({ xr: hydration(unsized) }));
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['hydrate-account', 'hydrate-role', 'hydrate-binding', 'size']);
    const job = manifestOf(desired['size']) as {
      metadata: JsonObject;
      spec: { template: { spec: { volumes?: unknown[]; containers: JsonObject[] } } };
    };
    expect(job.metadata['name']).toBe(SIZER);
    expect(job.spec.template.spec.volumes ?? []).toEqual([]);
    expect(job.spec.template.spec.containers[0]!['command']).toEqual(['python3', '/opt/modelplane/hydrate.py', REPO, '--size-only']);
    expect(compositeStatus(rsp)).toEqual({
      phase: 'Pending',
      message: `sizing the claim for ${REPO} on cluster-a from the hub's listing of the selected files (spec.huggingFace.sizeGiB is not set)`,
    });
  });

  it('claims what the sizing Job reported, and latches it', async () => {
    const first = await firstPass(unsized);
    const sized = reportedJob(first['size']!, 'complete', report({ state: 'Sized' }));
    const rsp = await run(resolved({ xr: hydration(unsized), observed: { size: sized } }));
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)).toEqual(['pvc', 'hydrate-account', 'hydrate-role', 'hydrate-binding', 'hydrate']);
    expect(manifestOf(desired['pvc'])).toMatchObject({ spec: { resources: { requests: { storage: '112Gi' } } } });
    expect(compositeStatus(rsp)['sizeGiB']).toBe(112);
    // The sizing Job is gone by the next reconcile; the size stays.
    const next = await run(resolved({ xr: hydration(unsized, compositeStatus(rsp)) }));
    expect(manifestOf(desiredResources(next)['pvc'])).toMatchObject({ spec: { resources: { requests: { storage: '112Gi' } } } });
    expect(JSON.stringify(desiredResources(next)['hydrate'])).toContain('--size-gib=112');
  });

  it('fails when the sizing Job fails, saying why', async () => {
    const first = await firstPass(unsized);
    const failed = reportedJob(first['size']!, 'failed', { state: 'Failed', message: 'RepositoryNotFoundError: 404' });
    const rsp = await run(resolved({ xr: hydration(unsized), observed: { size: failed } }));
    expect(compositeStatus(rsp)['phase']).toBe('Failed');
    expect(compositeStatus(rsp)['message']).toContain(`sizing Job ${SIZER} on cluster-a failed: RepositoryNotFoundError: 404`);
  });

  it('takes an explicit sizeGiB as given and runs no sizing Job (the download refuses files that do not fit it)', async () => {
    const desired = await firstPass(HF);
    expect(desired).not.toHaveProperty('size');
    expect(JSON.stringify(desired['hydrate'])).toContain(`--size-gib=${SIZE_GIB}`);
  });
});

describe('the token stays in the workload Secret', () => {
  it('is in no status, condition, event or Job field, at any stage, even when a report quotes it', async () => {
    const secret = { secret: tokenSecret() };
    const first = await firstPass(HF_AUTH, secret);
    const responses: TestResponse[] = [];
    for (const [state, progress] of [
      ['running', report({ bytesDone: GIB })],
      ['failed', { state: 'Failed', message: `HTTP 401 for ${TOKEN}` }],
      ['complete', report({ state: 'Verified', bytesDone: 100 * GIB, filesDone: 40 })],
    ] as const) {
      responses.push(
        await run(
          resolved({
            xr: hydration(HF_AUTH),
            ...secret,
            observed: { pvc: observe(first['pvc']!, BOUND_CLAIM), hydrate: reportedJob(first['hydrate']!, state, progress) },
          }),
        ),
      );
    }
    for (const rsp of responses) {
      const shown = JSON.stringify({ status: compositeStatus(rsp), conditions: rsp.conditions, results: rsp.results });
      expect(shown).not.toContain(TOKEN_B64);
      expect(shown).not.toContain(TOKEN);
      const job = JSON.stringify(desiredResources(rsp)['hydrate'] ?? {});
      expect(job).not.toContain(TOKEN_B64);
    }
  });
});

describe('the pure helpers', () => {
  it.each([
    [0, 0, 0],
    [1, 3, 33],
    [2, 3, 66],
    [3, 3, 100],
    [999, 1000, 99],
  ])('percentOf(%i, %i) is %i', (done, total, percent) => {
    expect(percentOf(done, total)).toBe(percent);
  });

  it.each([
    [0, '0 bytes'],
    [1023, '1023 bytes'],
    [1536, '1.5 KiB'],
    [140.8 * GIB, '140.8 GiB'],
  ])('bytes(%d) is %s', (n, shown) => {
    expect(bytes(n)).toBe(shown);
  });

  it.each([
    [45, '45s'],
    [900, '15m'],
    [7200, '2h'],
    [7500, '2h5m'],
  ])('duration(%i) is %s', (seconds, shown) => {
    expect(duration(seconds)).toBe(shown);
  });

  it('reads Verified as 100% whatever the last byte count said', () => {
    const parsed = parseReport(report({ state: 'Verified', bytesDone: 5 })).report;
    expect(parsed && progressOf(parsed).percent).toBe(100);
  });
});

describe('re-verification of a Ready copy (the modelplane.ai/reverify annotation)', () => {
  const verifiedReport = report({ state: 'Verified', bytesDone: 100 * GIB, filesDone: 40 });

  function annotated(xr: TestResource, annotations: Record<string, string>): TestResource {
    const body = structuredClone(xr.resource);
    (body['metadata'] as JsonObject)['annotations'] = annotations;
    return { ...xr, resource: body };
  }

  /** A Ready, verified cluster (the Job gone), and the PVC as observed. */
  async function readyWorld(): Promise<{ status: JsonObject; pvc: JsonObject; first: Record<string, JsonObject> }> {
    const ready = await withReport(HF, 'complete', verifiedReport);
    const first = await firstPass(HF);
    return { status: compositeStatus(ready), pvc: observe(first['pvc']!, BOUND_CLAIM), first };
  }

  it('stays Ready while a verify-only Job checks the copy against the commit it was staged at', async () => {
    const { status, pvc } = await readyWorld();
    const rsp = await run(resolved({ xr: annotated(hydration(HF, status), { 'modelplane.ai/reverify': 'r1' }), observed: { pvc } }));
    expect(compositeStatus(rsp)['phase']).toBe('Ready');
    expect(compositeStatus(rsp)['mount']).toEqual(status['mount']);
    expect(compositeStatus(rsp)['message']).toBe(
      `re-verifying ${REPO} at commit ${COMMIT} on cluster-a against the hub (requested own:r1); it stays Ready meanwhile`,
    );
    const job = manifestOf(desiredResources(rsp)['hydrate']) as {
      spec: { template: { metadata: JsonObject; spec: { containers: JsonObject[] } } };
    };
    expect(job.spec.template.metadata['annotations']).toEqual({ 'modelplane.ai/retry-round': 'reverify:own:r1' });
    const command = job.spec.template.spec.containers[0]!['command'] as string[];
    expect(command).toContain(`--revision=${COMMIT}`);
    expect(command).toContain('--verify-only');
  });

  it('is Ready again once the check passes, and answers that request only once', async () => {
    const { status, pvc } = await readyWorld();
    const xr = annotated(hydration(HF, status), { 'modelplane.ai/reverify': 'r1' });
    const checking = await run(resolved({ xr, observed: { pvc } }));
    const job = reportedJob(desiredResources(checking)['hydrate']!, 'complete', verifiedReport);
    const passed = await run(
      resolved({
        xr: annotated(hydration(HF, compositeStatus(checking)), { 'modelplane.ai/reverify': 'r1' }),
        observed: { pvc, hydrate: job },
      }),
    );
    expect(compositeStatus(passed)).toMatchObject({ phase: 'Ready', verified: true, reverifiedFor: 'own:r1', commit: COMMIT });
    expect(compositeStatus(passed)).not.toHaveProperty('message');
    expect(Object.keys(desiredResources(passed))).toEqual(['pvc']);
    const later = await run(
      resolved({ xr: annotated(hydration(HF, compositeStatus(passed)), { 'modelplane.ai/reverify': 'r1' }), observed: { pvc } }),
    );
    expect([compositeStatus(later)['phase'], Object.keys(desiredResources(later))]).toEqual(['Ready', ['pvc']]);
  });

  it('is Failed naming the file when the check fails, and stays so until a retry stages it again', async () => {
    const { status, pvc } = await readyWorld();
    const asked = { 'modelplane.ai/reverify': 'r1' };
    const checking = await run(resolved({ xr: annotated(hydration(HF, status), asked), observed: { pvc } }));
    const message = 'verification failed: config.json: etag (git blob id) 1234, the hub says 5678';
    const job = reportedJob(desiredResources(checking)['hydrate']!, 'failed', { state: 'Failed', message });
    const failed = await run(resolved({ xr: annotated(hydration(HF, compositeStatus(checking)), asked), observed: { pvc, hydrate: job } }));
    expect(compositeStatus(failed)).toMatchObject({ phase: 'Failed', verified: false, reverifiedFor: 'own:r1' });
    expect(compositeStatus(failed)['message']).toBe(
      `re-verification of ${REPO} on cluster-a failed: ${message}; set the annotation modelplane.ai/retry to a new value to stage it again`,
    );
    expect(compositeStatus(failed)).not.toHaveProperty('mount');
    // The failed Job goes (its TTL); the cluster stays Failed, nothing runs.
    const latched = await run(resolved({ xr: annotated(hydration(HF, compositeStatus(failed)), asked), observed: { pvc } }));
    expect([compositeStatus(latched)['phase'], compositeStatus(latched)['message'], Object.keys(desiredResources(latched))]).toEqual([
      'Failed',
      compositeStatus(failed)['message'],
      ['pvc'],
    ]);
    // A retry stages it again.
    const retried = await run(
      resolved({ xr: annotated(hydration(HF, compositeStatus(failed)), { ...asked, 'modelplane.ai/retry': 'go' }), observed: { pvc } }),
    );
    expect(compositeStatus(retried)['phase']).toBe('Hydrating');
    expect(Object.keys(desiredResources(retried))).toContain('hydrate');
  });

  it('reaches every child from the ModelCache, under a key of its own', async () => {
    const { status, pvc } = await readyWorld();
    const rsp = await run(
      resolved({ xr: annotated(hydration(HF, status), { 'modelplane.ai/cache-reverify': 'weekly-1' }), observed: { pvc } }),
    );
    expect(compositeStatus(rsp)['message']).toContain('(requested cache:weekly-1)');
  });
});

describe('sizing never drops a claim', () => {
  it('keeps an observed claim whose size it can’t read exactly as observed while it sizes', async () => {
    const first = await firstPass(HF);
    const pvc = observe(first['pvc']!, BOUND_CLAIM);
    const manifest = (pvc['spec'] as { forProvider: { manifest: { spec: { resources: { requests: JsonObject } } } } }).forProvider.manifest;
    manifest.spec.resources.requests['storage'] = '21474836480';
    const rsp = await run(resolved({ xr: hydration({ source: 'HuggingFace', huggingFace: { repo: REPO } }), observed: { pvc } }));
    expect(Object.keys(desiredResources(rsp))).toContain('size');
    expect(manifestOf(desiredResources(rsp)['pvc'])).toEqual(manifest);
  });
});
