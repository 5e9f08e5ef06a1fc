// Structure-aware fuzzing over gRPC: seeded mutations of valid requests (every
// example stage of each function, and a few states the examples don't show),
// each answered within a second with a valid response or a Fatal result
// naming a field; the server never exits, never logs a handler failure or an
// unhandled rejection, and never desires null, NaN or a name Kubernetes
// refuses; no planted credential or token, in any encoding, is in an answer
// (but the workload Secret's data) or a log line, and no input with an
// unknown field is answered without a Fatal result (issue 29). `make test`
// runs 2,000 cases per function; `make soak` runs 100,000 (FUZZ_CASES) and
// writes the report (FUZZ_REPORT).

import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as grpcStatus } from '@grpc/grpc-js';
import { MAX_STRUCT_DEPTH, type JsonObject } from '#lib';
import {
  FUNCTION_NAMES,
  rawFunctionClient,
  requestBytes,
  responseFromBytes,
  startServer,
  type FunctionName,
  type RawFunctionClient,
  type RunningServer,
  type TestRequest,
} from '#testing';
import { checkResponse } from '../support/invariants.js';
import { caseSeed, prng } from '../support/prng.js';
import { seedsFor } from '../support/seeds.js';
import { formatReport, runCampaign, type CampaignReport } from './campaign.js';
import { containerDepth, mutate, requestDepth } from './mutate.js';

const CASES = Number(process.env['FUZZ_CASES'] ?? 2000);
const SEED = Number(process.env['FUZZ_SEED'] ?? 8);
const REPORT_FILE = process.env['FUZZ_REPORT'];
/** `make soak`: many cases, progress on stderr. */
const SOAK = CASES > 10_000;
const PROGRESS_EVERY = 10_000;
/**
 * Generous: 2,000 cases take about a minute on an idle machine, the soak's
 * 100,000 most of an hour; on two cores shared at load 17 a case took 95 ms
 * (10,000 cases of compose-model-cache in 944 s), so 100 ms a case.
 */
const CAMPAIGN_TIMEOUT_MS = 60_000 + CASES * 100;

const reports: CampaignReport[] = [];

afterAll(() => {
  const text = formatReport([...reports].sort((a, b) => FUNCTION_NAMES.indexOf(a.name) - FUNCTION_NAMES.indexOf(b.name)));
  if (REPORT_FILE) {
    mkdirSync(dirname(REPORT_FILE), { recursive: true });
    writeFileSync(REPORT_FILE, `${text}\n`);
  }
});

describe('the mutator', () => {
  it('makes the same cases from the same seed, and other cases from another', async () => {
    const seeds = await seedsFor('compose-model-cache-hydration');
    const make = (runSeed: number, index: number): Buffer => {
      const rnd = prng(caseSeed(runSeed, 'compose-model-cache-hydration', index));
      const base = rnd.pick(seeds);
      return requestBytes(mutate(rnd, 'compose-model-cache-hydration', base.request).request);
    };
    for (let i = 0; i < 40; i++) expect(make(SEED, i).equals(make(SEED, i))).toBe(true);
    const differ = Array.from({ length: 40 }, (_, i) => !make(SEED, i).equals(make(SEED + 1, i))).filter(Boolean).length;
    expect(differ).toBeGreaterThan(30);
  });
});

describe('fuzzing over gRPC', () => {
  const servers = new Map<FunctionName, RunningServer>();
  beforeAll(async () => {
    for (const name of FUNCTION_NAMES) servers.set(name, await startServer(name, { args: ['--debug'] }));
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.stop();
  });

  // One campaign at a time, one call at a time: a latency is then the server's, not this process's backlog.
  for (const name of FUNCTION_NAMES) {
    it(
      `${name} answers ${CASES} mutated requests (seed ${SEED}) within 1 s each, validly or with a Fatal result naming a field`,
      async ({ expect }) => {
        const server = servers.get(name)!;
        const report = await runCampaign({
          name,
          server,
          cases: CASES,
          seed: SEED,
          onProgress: SOAK
            ? (done) => {
                if (done % PROGRESS_EVERY === 0) process.stderr.write(`${name}: ${done}/${CASES}\n`);
              }
            : undefined,
        });
        reports.push(report);
        expect(report.violations, formatReport([report])).toEqual([]);
        // The mutations reach both sides: some requests stay usable, some are refused.
        expect(report.valid).toBeGreaterThan(CASES / 10);
        expect(report.fatal).toBeGreaterThan(CASES / 20);
        // Issue 29's classes are generated: credentials in the settings, misspelled fields, the token in a report.
        expect(report.classes.credential).toBeGreaterThan(CASES / 100);
        expect(report.classes.misspelled).toBeGreaterThan(CASES / 100);
        if (name === 'compose-model-cache-hydration') expect(report.classes.token).toBeGreaterThan(CASES / 200);
        // And the server is still there.
        expect(server.process.exitCode).toBeNull();
      },
      CAMPAIGN_TIMEOUT_MS,
    );
  }
});

/** A value `levels` containers deep (objects and lists alternating). */
function nested(levels: number): JsonObject {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { next: value } : [value];
  return { next: value } as JsonObject;
}

describe(`the Struct depth bound (${MAX_STRUCT_DEPTH})`, () => {
  let server: RunningServer;
  let client: RawFunctionClient;
  beforeAll(async () => {
    server = await startServer('compose-model-cache-hydration');
    client = rawFunctionClient(server.address);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  const seed = async (): Promise<TestRequest> => structuredClone((await seedsFor('compose-model-cache-hydration'))[0]!.request);

  /** Where a deep value can sit: each is its own Struct as the codec counts it. */
  const placements: [string, (req: TestRequest, value: JsonObject) => void][] = [
    ['the XR', (req, value) => ((req.observed!.composite!.resource['spec'] as JsonObject)['extra'] = value)],
    ['an observed resource', (req, value) => (req.observed!.resources = { stray: { resource: { deep: value } } })],
    ['a required resource', (req, value) => (req.requiredResources!['cluster']!.items[1] = { resource: { deep: value } })],
    ['the context', (req, value) => (req.context = { deep: value })],
  ];

  it.each(placements)(`answers a Struct exactly ${MAX_STRUCT_DEPTH} deep in %s`, async (_where, place) => {
    const req = await seed();
    // The deep value hangs off a container at level 1 (spec, the resource, the item, the context) or 0.
    for (let levels = MAX_STRUCT_DEPTH - 4; levels <= MAX_STRUCT_DEPTH; levels++) {
      place(req, nested(levels));
      if (requestDepth(req) === MAX_STRUCT_DEPTH) break;
    }
    expect(requestDepth(req)).toBe(MAX_STRUCT_DEPTH);
    const rsp = responseFromBytes(await client.call(requestBytes(req)));
    expect(checkResponse('compose-model-cache-hydration', req, rsp)).toEqual([]);
  });

  it.each(placements)(`refuses one level deeper in %s with a gRPC error, and keeps serving`, async (_where, place) => {
    const req = await seed();
    for (let levels = MAX_STRUCT_DEPTH - 4; levels <= MAX_STRUCT_DEPTH + 2; levels++) {
      place(req, nested(levels));
      if (requestDepth(req) === MAX_STRUCT_DEPTH + 1) break;
    }
    expect(requestDepth(req)).toBe(MAX_STRUCT_DEPTH + 1);
    await expect(client.call(requestBytes(req))).rejects.toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      details: expect.stringMatching(/^cannot decode the RunFunctionRequest: (struct|list) nested deeper than 100$/) as unknown,
    });
    const next = await seed();
    expect(responseFromBytes(await client.call(requestBytes(next))).meta.tag).toBe(next.meta?.tag);
    expect(server.process.exitCode).toBeNull();
  });

  it('counts depth as the codec does', () => {
    expect(containerDepth({})).toBe(0);
    expect(containerDepth({ a: [{}] })).toBe(2);
    expect(containerDepth(nested(3))).toBe(3);
  });
});
