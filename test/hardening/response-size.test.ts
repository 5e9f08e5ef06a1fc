// One cluster's responses (issue 29, point 4; docs/limits.md): a
// ModelCacheHydration and a ModelReplica compose for one cluster, so their
// responses do not grow with the fleet. Measured over every seed (each
// example stage of every source, and the states the examples don't show):
// the largest is far under Crossplane's 4 MiB. MEASURE=1 prints them.

import { describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BYTES } from '#lib';
import { responseBytes, type FunctionName } from '#testing';
import { clientFor, seedsFor } from './support/seeds.js';

const MEASURE = process.env['MEASURE'] === '1';

describe.each<FunctionName>(['compose-model-cache-hydration', 'compose-model-replica'])('%s', (name) => {
  it('answers every seed in well under 4 MiB: one cluster, whatever the fleet', async () => {
    const client = clientFor(name);
    const sizes: [string, number][] = [];
    for (const seed of await seedsFor(name)) {
      const rsp = await client.run(seed.request);
      sizes.push([seed.name, responseBytes.get(rsp) ?? Number.POSITIVE_INFINITY]);
    }
    sizes.sort((a, b) => b[1] - a[1]);
    if (MEASURE)
      process.stdout.write(
        `${name}: ${sizes.length} seeds, largest ${sizes[0]![1]} bytes (${sizes[0]![0]}), median ${sizes[Math.floor(sizes.length / 2)]![1]}\n`,
      );
    expect(sizes.length).toBeGreaterThan(10);
    expect(sizes[0]![1]).toBeLessThan(MAX_RESPONSE_BYTES / 16);
  }, 120_000);
});
