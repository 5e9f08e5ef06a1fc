// Crossplane's gRPC client takes at most 4 MiB from a function (grpc-go's
// default; Crossplane sets no other). Each built server answers a response of
// exactly 4 MiB whole, and one byte more with a Fatal result naming the
// limit, the size and the fleet size, with no desired state at all (never a
// desired state cut to fit). The test clients enforce the same 4 MiB, so a
// response real Crossplane refuses fails here too. Issue 29, point 4.

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KIND,
  MAX_RESPONSE_BYTES,
  Ready,
  decodeRequest,
  encodeResponse,
  fleetSize,
  newResponse,
  overLimitMessage,
  runSafely,
  jsonLogger,
  type RunFunctionResponse,
} from '#lib';
import {
  FUNCTION_NAMES,
  functionClient,
  requestBytes,
  startFakeFunction,
  startServer,
  type FakeFunction,
  type FunctionClient,
  type FunctionName,
  type RunningServer,
  type TestRequest,
} from '#testing';
import { HANDLERS } from '../support/handlers.js';
import { seedsFor } from '../hardening/support/seeds.js';

const logger = jsonLogger({ function: 'test', debug: false, write: () => undefined });

/** The bytes the handler's own response would take, before any limit. */
function ownSize(name: FunctionName, req: TestRequest): number {
  return encodeResponse(runSafely(name, HANDLERS[name], decodeRequest(requestBytes(req)), logger)).length;
}

/** `seed` with an earlier pipeline step's desired resource padded so the function's response is exactly `size` bytes. */
function padded(name: FunctionName, seed: TestRequest, size: number): TestRequest {
  const req = structuredClone(seed);
  let padding = Math.max(0, size - ownSize(name, seed) - 64);
  for (let attempt = 0; attempt < 8; attempt++) {
    req.desired = {
      ...req.desired,
      resources: { ...req.desired?.resources, 'earlier-step': { resource: { padding: 'p'.repeat(padding) } } },
    };
    const bytes = ownSize(name, req);
    if (bytes === size) return req;
    padding += size - bytes;
  }
  throw new Error(`could not make a ${name} response of exactly ${size} bytes`);
}

/** The InferenceClusters a request carries, counted independently of the runtime's fleetSize. */
function clustersIn(req: TestRequest): number {
  const names = new Set<string>();
  for (const set of Object.values(req.requiredResources ?? {})) {
    for (const item of set.items) {
      if (item.resource['kind'] === KIND.InferenceCluster) names.add(String((item.resource['metadata'] as { name?: string }).name));
    }
  }
  return names.size;
}

describe.each(FUNCTION_NAMES)('%s, over gRPC', (name) => {
  let server: RunningServer;
  let client: FunctionClient;
  let seed: TestRequest;
  beforeAll(async () => {
    server = await startServer(name);
    client = functionClient(server.address);
    // A seed the function composes from (not the first call's requirements alone), with its clusters resolved.
    const seeds = await seedsFor(name);
    seed = seeds.find((s) => clustersIn(s.request) > 0 && ownSize(name, s.request) > 2000)!.request;
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it.each([
    ['exactly 4 MiB', 0],
    ['4 MiB less one byte', -1],
  ])(
    'answers a response of %s whole',
    async (_what, delta) => {
      const req = padded(name, seed, MAX_RESPONSE_BYTES + delta);
      const rsp = await client.run(req, { timeoutMs: 30_000 });
      expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
      expect(Object.keys(rsp.desired?.resources ?? {})).toContain('earlier-step');
    },
    60_000,
  );

  it.each([
    ['one byte over 4 MiB', 1],
    ['a MiB over', 1024 * 1024],
  ])(
    'answers a response %s with a Fatal result naming the limit, the size and the fleet, and nothing else',
    async (_what, delta) => {
      const req = padded(name, seed, MAX_RESPONSE_BYTES + delta);
      const rsp = await client.run(req, { timeoutMs: 30_000 });
      const fleet = clustersIn(req);
      expect(rsp.results).toEqual([{ severity: 'SEVERITY_FATAL', message: overLimitMessage(name, MAX_RESPONSE_BYTES + delta, fleet) }]);
      expect(rsp.results[0]!.message).toMatch(
        new RegExp(
          `^response size ${(MAX_RESPONSE_BYTES + delta).toLocaleString('en-US')} bytes is over the 4,194,304-byte \\(4 MiB\\) limit .* a fleet of ${fleet.toLocaleString('en-US')} clusters?: nothing was applied`,
        ),
      );
      expect(rsp.desired).toBeUndefined();
      expect(rsp.meta.tag).toBe(req.meta?.tag ?? '');
      expect(rsp.meta.ttl).toEqual({ seconds: 60, nanos: 0 });
      // The server logs it, and answers the next call as before.
      expect(server.lines.some((line) => line.includes('"msg":"response over the limit"'))).toBe(true);
      const next = await client.run(seed);
      expect(next.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    },
    60_000,
  );
});

describe('fleetSize', () => {
  it('counts the InferenceClusters a request carries, once each, and the clusters a shard lists', () => {
    const cluster = (n: string) => ({ resource: { kind: KIND.InferenceCluster, metadata: { name: n } } });
    const req = decodeRequest(
      requestBytes({
        requiredResources: { clusters: { items: [cluster('a'), cluster('b'), cluster('a')] }, replicas: { items: [] } },
      }),
    );
    expect(fleetSize(req)).toBe(2);
    const shard = decodeRequest(
      requestBytes({
        observed: {
          composite: { resource: { kind: KIND.ModelCacheShard, spec: { clusters: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } } },
        },
      }),
    );
    expect(fleetSize(shard)).toBe(3);
  });
});

describe('the test client, as Crossplane', () => {
  let fake: FakeFunction;
  let client: FunctionClient;
  /** The fake's answer: a response of `size` bytes. */
  let size = 0;
  function answerOf(req: Parameters<Parameters<typeof startFakeFunction>[0]>[0]): RunFunctionResponse {
    const rsp = newResponse(req);
    const base = encodeResponse(rsp).length;
    let padding = size - base - 64;
    for (let attempt = 0; attempt < 8; attempt++) {
      rsp.desired!.resources['padding'] = {
        resource: { padding: 'p'.repeat(padding) },
        connectionDetails: {},
        ready: Ready.READY_UNSPECIFIED,
      };
      const bytes = encodeResponse(rsp).length;
      if (bytes === size) return rsp;
      padding += size - bytes;
    }
    throw new Error('could not pad');
  }
  beforeAll(async () => {
    fake = await startFakeFunction((req) => answerOf(req));
    client = functionClient(fake.target);
  });
  afterAll(async () => {
    client.close();
    await fake.stop();
  });

  it('takes a response of exactly 4 MiB', async () => {
    size = MAX_RESPONSE_BYTES;
    const rsp = await client.run({}, { timeoutMs: 30_000 });
    expect(Object.keys(rsp.desired?.resources ?? {})).toEqual(['padding']);
  }, 60_000);

  it('refuses one a byte over with RESOURCE_EXHAUSTED, as grpc-go does', async () => {
    size = MAX_RESPONSE_BYTES + 1;
    await expect(client.run({}, { timeoutMs: 30_000 })).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
  }, 60_000);
});
