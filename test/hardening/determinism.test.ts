// A function is a pure function of its request: the same request gets the
// same bytes back, every time, and so does the same request with its maps
// and required-resource lists in another order (Crossplane fixes neither).
// Compared as raw response bytes, over gRPC against the built servers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, rawFunctionClient, requestBytes, startServer, type RawFunctionClient, type RunningServer } from '#testing';
import { prng } from './support/prng.js';
import { seedsFor } from './support/seeds.js';
import { shuffled } from './support/shuffle.js';

const REPEATS = 100;
const SHUFFLES = 20;
/** Calls in flight at once: determinism must not depend on what else the server is doing. */
const BATCH = 10;

async function inBatches<T>(count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += BATCH) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, count - start) }, (_, i) => call(start + i)))));
  }
  return out;
}

describe.each(FUNCTION_NAMES)('%s', (name) => {
  let server: RunningServer;
  let client: RawFunctionClient;
  beforeAll(async () => {
    server = await startServer(name);
    client = rawFunctionClient(server.address);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it(`answers each seed request with the same bytes ${REPEATS} times`, async () => {
    for (const seed of await seedsFor(name)) {
      const bytes = requestBytes(seed.request);
      const answers = await inBatches(REPEATS, () => client.call(bytes));
      const distinct = new Set(answers.map((answer) => answer.toString('base64')));
      expect(distinct.size, seed.name).toBe(1);
    }
  });

  it(`answers each seed request with the same bytes when its maps and required lists are shuffled (${SHUFFLES} orders)`, async () => {
    for (const seed of await seedsFor(name)) {
      const bytes = requestBytes(seed.request);
      const expected = await client.call(bytes);
      const variants = Array.from({ length: SHUFFLES }, (_, i) => requestBytes(shuffled(seed.request, prng(i + 1))));
      // The shuffles must really reorder the request, or this test could not fail.
      expect(variants.filter((variant) => !variant.equals(bytes)).length, seed.name).toBeGreaterThan(SHUFFLES / 2);
      const answers = await inBatches(SHUFFLES, (i) => client.call(variants[i]!));
      answers.forEach((answer, i) => {
        expect(answer.equals(expected), `${seed.name}, order ${i + 1}`).toBe(true);
      });
    }
  });
});
