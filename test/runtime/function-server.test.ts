// createFunctionServer's decoding, in process over gRPC: on demand with the
// runtime's default, on demand with a function's own threshold (the replica
// runs with 256 bytes), and in full. What the handler is given is measured
// before it reads anything.

import { afterAll, describe, expect, it } from 'vitest';
import {
  DECODED_AT_ONCE,
  createFunctionServer,
  decodeStats,
  jsonLogger,
  newResponse,
  type DecodeMode,
  type RunFunctionRequest,
  type UnaryServer,
} from '#lib';
import { functionClient, replicaXr, request, type FunctionClient } from '#testing';

/** A request whose composite holds one nested part of about 600 bytes: under the default threshold, over 256. */
const req = request({
  observed: { composite: { resource: { ...replicaXr().resource, notes: { text: 'x'.repeat(600) } } } },
});

const running: { server: UnaryServer; client: FunctionClient }[] = [];
afterAll(async () => {
  for (const { server, client } of running) {
    client.close();
    await server.shutdown(1000);
  }
});

/** Start a server that records, per call, the share of the request decoded before the handler reads anything. */
async function serve(options: { decode?: DecodeMode; decodedAtOnce?: number }): Promise<{ call: () => Promise<number | undefined> }> {
  let share: number | undefined;
  const handler = (got: RunFunctionRequest) => {
    const stats = decodeStats(got);
    share = stats === undefined ? undefined : stats.decodedBytes / stats.requestBytes;
    return newResponse(got);
  };
  const logger = jsonLogger({ function: 'test', debug: false, write: () => undefined });
  const server = createFunctionServer({ name: 'test', handler, logger, ...options });
  const client = functionClient(`127.0.0.1:${await server.listen('127.0.0.1:0', { insecure: true })}`);
  running.push({ server, client });
  return {
    call: async () => {
      await client.run(req);
      return share;
    },
  };
}

describe('createFunctionServer decodes as it is told', () => {
  it(`on demand, with the runtime's default (${DECODED_AT_ONCE} bytes), decodes a part that small with what holds it`, async () => {
    const { call } = await serve({});
    expect(await call()).toBe(1);
  });

  it("on demand, with a function's own decodedAtOnce, leaves a part over it for its first read", async () => {
    const { call } = await serve({ decodedAtOnce: 256 });
    const share = await call();
    expect(share).toBeGreaterThan(0);
    expect(share).toBeLessThan(0.9);
  });

  it('in full, gives the handler plain objects (no decode stats) whatever decodedAtOnce says', async () => {
    const { call } = await serve({ decode: 'full', decodedAtOnce: 256 });
    expect(await call()).toBeUndefined();
  });
});
