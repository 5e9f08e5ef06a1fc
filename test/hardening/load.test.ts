// Load and shutdown, against the built servers over gRPC: 64 clients × 500
// calls with zero errors (and every answer the exact bytes the same request
// gets alone); SIGTERM under load finishes every call the server took, refuses
// new ones rather than leaving them hanging, and exits 0; requests the size
// of 1,000 clusters are answered, and the 64 MiB message bound (raised from
// gRPC's 4 MiB on purpose) holds at exactly its edge.

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES, decodeRequest, encodeWithinLimit, jsonLogger, runSafely, type JsonObject } from '#lib';
import {
  compositeStatus,
  desiredResources,
  inferenceCluster,
  modelCacheXr,
  parseLine,
  rawFunctionClient,
  requestBytes,
  responseFromBytes,
  startServer,
  type FunctionName,
  type RawFunctionClient,
  type RunningServer,
  type TestRequest,
} from '#testing';
import { HANDLERS } from '../support/handlers.js';
import { observedShards, resolve, seedsFor } from './support/seeds.js';

const CLIENTS = 64;
const CALLS_EACH = 500;

/** Each client its own connection, as 64 separate callers would have. */
const OWN_CONNECTION: grpc.ClientOptions = { 'grpc.use_local_subchannel_pool': 1 };

/** What the server must answer to `bytes`: the same request run in process through the server's codec. */
function expectedAnswer(name: FunctionName, bytes: Buffer): Buffer {
  const logger = jsonLogger({ function: name, debug: false, write: () => undefined });
  const req = decodeRequest(bytes);
  return encodeWithinLimit(name, req, runSafely(name, HANDLERS[name], req, logger)).bytes;
}

/**
 * A ModelCache over `count` provisioned clusters at rest (docs/design/fleet.md):
 * its shards composed and observed, each with the status its own reconcile
 * wrote from children all Ready with the contract they publish: the largest a
 * steady request of the cache gets.
 */
async function cacheOver(count: number, tag = 'big'): Promise<TestRequest> {
  const clusters = Array.from({ length: count }, (_, i) =>
    inferenceCluster(`cluster-${String(i).padStart(4, '0')}`, {
      labels: { 'modelplane.ai/tier': 'a100' },
      providerConfig: `cluster-${i}-pc`,
      storageClassName: 'modelplane-rwx',
    }),
  );
  const xr = modelCacheXr().resource;
  const first = await resolve('compose-model-cache', { meta: { tag }, observed: { composite: { resource: xr }, resources: {} } }, clusters);
  const composed = responseFromBytes(expectedAnswer('compose-model-cache', requestBytes(first)));
  return { ...first, observed: { composite: { resource: xr }, resources: await observedShards(composed, tag) } };
}

describe(`${CLIENTS} clients × ${CALLS_EACH} calls`, () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer('compose-model-cache-hydration');
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers every call, each with exactly the bytes it gets alone', async () => {
    // Every hydration stage, for every source: the function Crossplane calls most (one per cache and cluster).
    const requests = (await seedsFor('compose-model-cache-hydration')).map((seed) => requestBytes(seed.request));
    const expected = requests.map((bytes) => expectedAnswer('compose-model-cache-hydration', bytes));
    const clients = Array.from({ length: CLIENTS }, () => rawFunctionClient(server.address, undefined, OWN_CONNECTION));
    const failures: string[] = [];
    let answered = 0;
    try {
      await Promise.all(
        clients.map(async (client, c) => {
          for (let i = 0; i < CALLS_EACH; i++) {
            const which = (c + i) % requests.length;
            try {
              const answer = await client.call(requests[which]!, { timeoutMs: 30_000 });
              if (answer.equals(expected[which]!)) answered++;
              else failures.push(`client ${c} call ${i}: other bytes than the same request alone`);
            } catch (error) {
              failures.push(`client ${c} call ${i}: ${(error as grpc.ServiceError).code} ${(error as Error).message}`);
            }
          }
        }),
      );
    } finally {
      for (const client of clients) client.close();
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(answered).toBe(CLIENTS * CALLS_EACH);
    expect(server.process.exitCode).toBeNull();
  }, 120_000);
});

interface CallOutcome {
  tag: string;
  /** When the call was made, relative to the SIGTERM. */
  afterSignal: boolean;
  /** Answered; whether with the right bytes is checked after the run. */
  ok: boolean;
  request: Buffer;
  answer?: Buffer;
  code?: grpc.status;
  ms: number;
}

describe('SIGTERM under load', () => {
  it('finishes every call the server took, refuses new ones promptly, and exits 0', async () => {
    const server = await startServer('compose-model-cache');
    // Big requests (2,000 clusters, about 2 MB each, several of the server's receive windows): calls spend time in
    // transfer and decoding, so some are mid-way at the signal. (A request within one window arrives whole
    // before the server reads it, and is refused with the rest.)
    const base = await cacheOver(2000);
    const clients = Array.from({ length: 16 }, () => rawFunctionClient(server.address, undefined, OWN_CONNECTION));
    const outcomes: CallOutcome[] = [];
    let signalled = false;
    let serial = 0;

    const call = async (client: RawFunctionClient): Promise<void> => {
      const tag = `drain-${serial++}`;
      const request = requestBytes({ ...base, meta: { tag } });
      const afterSignal = signalled;
      const t0 = performance.now();
      try {
        const answer = await client.call(request, { timeoutMs: 15_000 });
        outcomes.push({ tag, afterSignal, ok: true, request, answer, ms: performance.now() - t0 });
      } catch (error) {
        outcomes.push({ tag, afterSignal, ok: false, request, code: (error as grpc.ServiceError).code, ms: performance.now() - t0 });
      }
    };

    try {
      // Keep every client busy until the process is gone.
      const load = clients.map(async (client) => {
        while (server.process.exitCode === null && !(signalled && outcomes.some((o) => o.afterSignal))) await call(client);
      });
      // Under way: wait for the server to have answered a few, then stop it mid-stream.
      await expect.poll(() => outcomes.filter((o) => o.ok).length, { timeout: 20_000, interval: 5 }).toBeGreaterThanOrEqual(16);
      signalled = true;
      const exit = server.stop('SIGTERM');
      // New calls after the signal: refused (UNAVAILABLE), fast; never left hanging to their deadline.
      await expect.poll(() => server.lines.some((line) => parseLine(line)?.['msg'] === 'shutting down'), { timeout: 5000 }).toBe(true);
      await Promise.all(clients.slice(0, 4).map((client) => call(client)));
      await Promise.all(load);
      expect(await exit).toEqual({ code: 0, signal: null });
    } finally {
      for (const client of clients) client.close();
    }

    const entries = server.lines.map(parseLine);
    const shutdownAt = entries.findIndex((e) => e?.['msg'] === 'shutting down');
    const handled = entries.filter((e) => e?.['msg'] === 'RunFunction').map((e) => e!['tag'] as string);
    const handledAfterSignal = entries.slice(shutdownAt).filter((e) => e?.['msg'] === 'RunFunction').length;
    const byTag = new Map(outcomes.map((o) => [o.tag, o]));

    // Every call the server took was answered, with the right bytes: none was cut off by the shutdown.
    for (const tag of handled) {
      const outcome = byTag.get(tag);
      expect(outcome?.ok, tag).toBe(true);
      expect(outcome!.answer!.equals(expectedAnswer('compose-model-cache', outcome!.request)), tag).toBe(true);
    }
    expect(outcomes.filter((o) => o.ok).length).toBe(handled.length);
    // Some were still in flight when the signal came, and were finished, not dropped.
    expect(handledAfterSignal).toBeGreaterThan(0);
    // Every other call was refused as unavailable - and promptly, not at its deadline.
    const refused = outcomes.filter((o) => !o.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) {
      expect(o.code, o.tag).toBe(grpc.status.UNAVAILABLE);
      expect(o.ms, o.tag).toBeLessThan(5000);
    }
    expect(outcomes.filter((o) => o.afterSignal && o.ok)).toEqual([]);
    expect(entries.at(-1)?.['msg']).toBe('stopped');
    expect(server.stderr()).toBe('');
  }, 60_000);
});

describe('message size', () => {
  let server: RunningServer;
  let client: RawFunctionClient;
  beforeAll(async () => {
    server = await startServer('compose-model-cache');
    // Allowed to send past the server's bound, to show the server refuses it.
    client = rawFunctionClient(server.address, undefined, { 'grpc.max_send_message_length': 2 * MAX_MESSAGE_BYTES });
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it('answers a ModelCache over 1,000 clusters at rest (its ten shards Ready) with the bytes it gets alone', async () => {
    const req = await cacheOver(1000);
    const bytes = requestBytes(req);
    // Its clusters and its shards' statuses; the bound is tested below. How fast is make bench's to say.
    expect(bytes.length).toBeGreaterThan(500_000);
    const answer = await client.call(bytes, { timeoutMs: 30_000 });
    expect(answer.equals(expectedAnswer('compose-model-cache', bytes))).toBe(true);
    const rsp = responseFromBytes(answer);
    expect(Object.keys(desiredResources(rsp))).toHaveLength(10);
    expect(compositeStatus(rsp)['summary']).toMatchObject({ ready: '1000/1000', clusters: 1000, shards: 10, listed: 'NotReady' });
  }, 60_000);

  /** A request of exactly `size` bytes: a small cache whose XR carries a padding annotation of the right length. */
  async function requestOfSize(size: number): Promise<Buffer> {
    const req = structuredClone((await seedsFor('compose-model-cache')).find((s) => s.name === 'ready')!.request);
    const metadata = req.observed!.composite!.resource['metadata'] as JsonObject;
    let padding = size;
    for (let attempt = 0; attempt < 8; attempt++) {
      metadata['annotations'] = { padding: 'p'.repeat(Math.max(0, padding)) };
      const bytes = requestBytes(req);
      if (bytes.length === size) return bytes;
      padding += size - bytes.length;
    }
    throw new Error(`could not make a request of exactly ${size} bytes`);
  }

  it(`answers a request of exactly ${MAX_MESSAGE_BYTES} bytes (64 MiB)`, async () => {
    const bytes = await requestOfSize(MAX_MESSAGE_BYTES);
    const rsp = responseFromBytes(await client.call(bytes, { timeoutMs: 60_000 }));
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    expect(Object.keys(desiredResources(rsp))).toEqual(['shard-0']);
  }, 60_000);

  it('refuses a request one byte over with RESOURCE_EXHAUSTED, and keeps serving', async () => {
    const bytes = await requestOfSize(MAX_MESSAGE_BYTES + 1);
    await expect(client.call(bytes, { timeoutMs: 60_000 })).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    const small = requestBytes((await seedsFor('compose-model-cache'))[0]!.request);
    expect(responseFromBytes(await client.call(small)).results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    expect(server.process.exitCode).toBeNull();
  }, 60_000);
});
