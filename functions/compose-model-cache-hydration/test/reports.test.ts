// What a workload cluster writes back is input from a place a tenant may
// reach (issue 29, point 2): the sizing report, the progress report and the
// OCI resolver's result, and a status handed on from the hydration this one
// replaces. Each is checked and bounded; one that fails is named in the
// ReportsAccepted condition (which report, which field, what is wrong, never
// its raw long value) and changes nothing that exists. Through gRPC, against
// the built server.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_SIZE_GIB, type JsonObject } from '#lib';
import { compositeStatus, condition, desiredResources, manifestOf, serveForFile, type TestResponse } from '#testing';
import { HF, NAMES, hydration, jobRemote, observe, resolved, run } from './support.js';

const served = serveForFile('compose-model-cache-hydration');
const GIB = 1024 ** 3;
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const UNSIZED: JsonObject = { source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B' } };
const LONG = 'x'.repeat(200_000);
/** Long, yet inside the annotation's own bound (4,096 characters): the field's bound refuses it. */
const MEDIUM = 'x'.repeat(2000);

/** A report as hydrate.py writes it: 10 GiB of 40 files, a claim of 12 GiB. */
function report(fields: JsonObject): JsonObject {
  return {
    state: 'Downloading',
    commit: COMMIT,
    bytesDone: 0,
    bytesTotal: 10 * GIB,
    filesDone: 0,
    filesTotal: 40,
    requiredGiB: 12,
    ...fields,
  };
}

function annotated(desired: JsonObject, state: 'running' | 'complete', value: JsonObject | string): JsonObject {
  const metadata = structuredClone(manifestOf(desired)['metadata']) as JsonObject & { annotations: Record<string, string> };
  metadata.annotations['modelplane.ai/progress'] = typeof value === 'string' ? value : JSON.stringify(value);
  return observe(desired, { ...jobRemote(state), fields: { metadata } });
}

const reports = (rsp: TestResponse) => condition(rsp, 'ReportsAccepted');

/** The condition names the report and the field, says what is wrong, and never quotes a long value. */
function expectRefused(rsp: TestResponse, report: string, field: string): void {
  const found = reports(rsp);
  expect(found).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'ReportRefused' });
  expect(found?.message).toContain(`${report}: ${field} `);
  expect(found?.message).toContain('refused, so it changed nothing');
  expect(found?.message?.length).toBeLessThan(1000);
  expect(JSON.stringify(rsp)).not.toContain('x'.repeat(2000));
  expect(rsp.results).toContainEqual(expect.objectContaining({ severity: 'SEVERITY_WARNING', reason: 'ReportRefused' }));
}

const SIZER = `the sizing report on Job ${NAMES.sizer}`;
const JOB = `the progress report on Job ${NAMES.job}`;

describe('the sizing report', () => {
  async function sized(value: JsonObject | string): Promise<TestResponse> {
    const first = desiredResources(await run(resolved({ xr: hydration(UNSIZED) }), served.client));
    return run(resolved({ xr: hydration(UNSIZED), observed: { size: annotated(first['size']!, 'complete', value) } }), served.client);
  }

  it('is taken when consistent: a claim of the size it reports, and ReportsAccepted True', async () => {
    const rsp = await sized(report({ state: 'Sized' }));
    expect(manifestOf(desiredResources(rsp)['pvc'])).toMatchObject({ spec: { resources: { requests: { storage: '12Gi' } } } });
    expect(compositeStatus(rsp)['sizeGiB']).toBe(12);
    expect(reports(rsp)).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Accepted' });
  });

  it.each<[string, JsonObject | string, string]>([
    ['a billion GiB, with the bytes to match', report({ state: 'Sized', requiredGiB: 1e9, bytesTotal: 1e9 * GIB }), 'bytesTotal'],
    ['a billion GiB for 10 GiB of files', report({ state: 'Sized', requiredGiB: 1e9 }), 'requiredGiB'],
    [
      'over the XRD maximum, consistent with its bytes',
      report({ state: 'Sized', requiredGiB: MAX_SIZE_GIB + 1, bytesTotal: MAX_SIZE_GIB * GIB }),
      'requiredGiB',
    ],
    ['less than its files', report({ state: 'Sized', requiredGiB: 9 }), 'requiredGiB'],
    ['more than its files and the margin', report({ state: 'Sized', requiredGiB: 13 }), 'requiredGiB'],
    ['zero', report({ state: 'Sized', requiredGiB: 0 }), 'requiredGiB'],
    ['negative', report({ state: 'Sized', requiredGiB: -5 }), 'requiredGiB'],
    ['fractional', report({ state: 'Sized', requiredGiB: 11.5 }), 'requiredGiB'],
    ['a string', report({ state: 'Sized', requiredGiB: '12' }), 'requiredGiB'],
    ['missing', report({ state: 'Sized', requiredGiB: undefined }), 'requiredGiB'],
    [
      'infinite (1e999 in JSON)',
      '{"state":"Sized","commit":"' + COMMIT + '","bytesDone":0,"bytesTotal":1,"filesDone":0,"filesTotal":1,"requiredGiB":1e999}',
      'requiredGiB',
    ],
    ['bytes in no file', report({ state: 'Sized', filesTotal: 0 }), 'bytesTotal'],
    ['more files done than in total', report({ state: 'Sized', filesDone: 41 }), 'filesDone'],
    ['a negative byte count', report({ state: 'Sized', bytesDone: -1 }), 'bytesDone'],
    ['a long commit', report({ state: 'Sized', commit: MEDIUM }), 'commit'],
    ['not JSON', '{"state":', 'modelplane.ai/progress'],
    ['a huge annotation', JSON.stringify(report({ state: 'Sized', padding: LONG })), 'modelplane.ai/progress'],
  ])('of %s is refused: no claim is composed, and the condition names the field', async (_what, value, field) => {
    const rsp = await sized(value);
    expect(desiredResources(rsp)).not.toHaveProperty('pvc');
    expect(compositeStatus(rsp)).not.toHaveProperty('sizeGiB');
    expect(compositeStatus(rsp)['phase']).toBe('Pending');
    expect(compositeStatus(rsp)['message']).toContain('its report was refused (condition ReportsAccepted)');
    expectRefused(rsp, SIZER, field);
  });

  it('says what docs/limits.md shows for a report of a billion GiB', async () => {
    const rsp = await sized(report({ state: 'Sized', requiredGiB: 1e9 }));
    expect(reports(rsp)?.message).toBe(
      `${SIZER}: requiredGiB is 1,000,000,000, over the largest claim spec.huggingFace.sizeGiB allows (100,000): refused, so it changed nothing (the last good values stand)`,
    );
  });

  it('keeps a claim composed outside the bounds exactly as observed, and never resizes it', async () => {
    const first = desiredResources(await run(resolved({ xr: hydration(HF) }), served.client));
    const pvc = observe(first['pvc']!, { status: { phase: 'Bound' }, ready: true });
    const manifest = (pvc['spec'] as { forProvider: { manifest: { spec: { resources: { requests: JsonObject } } } } }).forProvider.manifest;
    manifest.spec.resources.requests['storage'] = '999999Gi';
    const rsp = await run(resolved({ xr: hydration(UNSIZED), observed: { pvc } }), served.client);
    expect(manifestOf(desiredResources(rsp)['pvc'])).toEqual(manifest);
  });
});

describe('the progress report', () => {
  /** A download of 10 GiB on a claim of 20 GiB, with `good` as its last status, observed reporting `value`. */
  async function progressing(value: JsonObject | string, good?: JsonObject): Promise<TestResponse> {
    const first = desiredResources(await run(resolved({ xr: hydration(HF) }), served.client));
    const observed = {
      pvc: observe(first['pvc']!, { status: { phase: 'Bound' }, ready: true }),
      hydrate: annotated(first['hydrate']!, 'running', value),
    };
    return run(resolved({ xr: hydration(HF, good), observed }), served.client);
  }

  const goodProgress = { percent: 30, bytesDone: 3 * GIB, bytesTotal: 10 * GIB, filesDone: 12, filesTotal: 40, summary: '30%' };
  const lastGood: JsonObject = {
    phase: 'Hydrating',
    attempts: 1,
    attemptsFor: 'Qwen/Qwen3-0.6B',
    progress: goodProgress,
    commit: COMMIT,
    sizeGiB: 20,
  };

  it('is shown when consistent', async () => {
    const rsp = await progressing(report({ bytesDone: 5 * GIB, filesDone: 20 }), lastGood);
    expect(compositeStatus(rsp)['progress']).toMatchObject({ percent: 50, bytesDone: 5 * GIB });
    expect(reports(rsp)).toMatchObject({ status: 'STATUS_CONDITION_TRUE' });
  });

  it.each<[string, JsonObject | string, string]>([
    ['more bytes done than in total', report({ bytesDone: 11 * GIB }), 'bytesDone'],
    ['more files done than in total', report({ filesDone: 41 }), 'filesDone'],
    ['a negative count', report({ filesDone: -3 }), 'filesDone'],
    ['more bytes than the claim holds', report({ bytesTotal: 21 * GIB, requiredGiB: 25 }), 'bytesTotal'],
    ['a byte total past any claim', report({ bytesTotal: 2 ** 53, bytesDone: 2 ** 52 }), 'bytesTotal'],
    ['a claim size its bytes do not give', report({ requiredGiB: 1e9 }), 'requiredGiB'],
    ['a stall of centuries', report({ stalledSeconds: 1e10 }), 'stalledSeconds'],
    ['an unknown state', report({ state: 'Done' }), 'state'],
    ['a Failed message of 2,000 characters', { state: 'Failed', message: MEDIUM }, 'message'],
    ['an annotation of 200,000 characters', { ...report({}), padding: LONG }, 'modelplane.ai/progress'],
  ])('with %s is refused: the last good progress stands, the claim stays 20 GiB', async (_what, value, field) => {
    const rsp = await progressing(value, lastGood);
    const status = compositeStatus(rsp);
    expect(status['progress']).toEqual(goodProgress);
    expect(status['commit']).toBe(COMMIT);
    expect(status['message']).toContain('30% (3.0 GiB of 10.0 GiB, 12 of 40 files) (as last reported)');
    expect(manifestOf(desiredResources(rsp)['pvc'])).toMatchObject({ spec: { resources: { requests: { storage: '20Gi' } } } });
    expectRefused(rsp, JOB, field);
  });

  it('warns once: a reconcile that finds the same refusal already on the XR tells no event again', async () => {
    const value = report({ bytesDone: 11 * GIB });
    const rsp = await progressing(value, lastGood);
    const said = reports(rsp)!;
    const xrConditions = [{ type: 'ReportsAccepted', status: 'False', reason: said.reason, message: said.message }];
    const first = desiredResources(await run(resolved({ xr: hydration(HF) }), served.client));
    const observed = {
      pvc: observe(first['pvc']!, { status: { phase: 'Bound' }, ready: true }),
      hydrate: annotated(first['hydrate']!, 'running', value),
    };
    const again = await run(
      resolved({ xr: hydration(HF, { ...compositeStatus(rsp), conditions: xrConditions }), observed }),
      served.client,
    );
    expect(reports(again)).toEqual(said);
    expect(again.results.filter((r) => r.reason === 'ReportRefused')).toEqual([]);
  });
});

describe('a status handed on (spec.inheritedStatus) or edited', () => {
  it.each<[string, JsonObject, string]>([
    ['a billion GiB', { phase: 'Hydrating', sizeGiB: 1e9 }, 'sizeGiB'],
    ['a size of zero', { phase: 'Hydrating', sizeGiB: 0 }, 'sizeGiB'],
    ['attempts past any count', { phase: 'Failed', attempts: 1e12, attemptsFor: 'Qwen/Qwen3-0.6B' }, 'attempts'],
    ['a malformed digest', { phase: 'Ready', digest: 'sha256:zzz' }, 'digest'],
    ['a long message', { phase: 'Hydrating', message: LONG }, 'message'],
    [
      'a percent its bytes do not give',
      { phase: 'Hydrating', progress: { percent: 99, bytesDone: 1, bytesTotal: 10, filesDone: 0, filesTotal: 1, summary: '99%' } },
      'progress.percent',
    ],
  ])('with %s: the field is not read, no claim of it is composed, and the condition names it', async (_what, status, field) => {
    const rsp = await run(resolved({ xr: hydration({ ...UNSIZED, inheritedStatus: status }) }), served.client);
    expect(desiredResources(rsp)).not.toHaveProperty('pvc');
    expect(JSON.stringify(compositeStatus(rsp))).not.toContain('1000000000');
    expectRefused(rsp, 'spec.inheritedStatus', field);
  });
});

describe("the OCI resolver's result", () => {
  const REF = 'us-docker.pkg.dev/acme/models/qwen:v1';
  const OCI: JsonObject = { source: 'OCI', oci: { ref: REF } };
  const MANIFEST = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${'c'.repeat(64)}`, size: 1 },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${'1'.repeat(64)}`, size: 1 }],
  });
  const sha = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

  async function resolvedWith(data: JsonObject): Promise<TestResponse> {
    const first = desiredResources(await run(resolved({ xr: hydration(OCI) }), served.client));
    const result = observe(first['resolve-result']!, { fields: { data: { ref: REF, ...data } } });
    return run(resolved({ xr: hydration(OCI), observed: { 'resolve-result': result } }), served.client);
  }

  it.each<[string, JsonObject, string]>([
    ['a digest that is not the manifest’s', { digest: sha(`${MANIFEST} `), manifest: MANIFEST }, 'digest'],
    ['a malformed digest of 200,000 characters', { digest: LONG, manifest: MANIFEST }, 'digest'],
    ['an upper-case digest', { digest: sha(MANIFEST).toUpperCase(), manifest: MANIFEST }, 'digest'],
  ])('with %s is refused: no mount is published, and the condition names it', async (_what, data, field) => {
    const rsp = await resolvedWith(data);
    expect(compositeStatus(rsp)).not.toHaveProperty('mount');
    expect(compositeStatus(rsp)).not.toHaveProperty('digest');
    expectRefused(rsp, `the resolver's result in ConfigMap ${NAMES.resolver}`, field);
  });

  it('is taken when its digest is its manifest’s', async () => {
    const rsp = await resolvedWith({ digest: sha(MANIFEST), manifest: MANIFEST });
    expect(compositeStatus(rsp)['digest']).toBe(sha(MANIFEST));
    expect(reports(rsp)).toMatchObject({ status: 'STATUS_CONDITION_TRUE' });
  });
});
