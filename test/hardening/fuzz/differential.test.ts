// Decoding on demand against decoding in full (issue 17), over the fuzz
// corpus: every seed (each example stage of each function, and the states the
// examples don't show), the fuzzer's mutations of them, and the same bytes
// damaged on the wire (bytes changed, cut short). For each, the server's
// answer path is run both ways, and the two must give the same bytes, or
// refuse with the same message. The functions read request objects decoded on
// demand exactly as they read plain ones, so any difference is a defect.

import { describe, expect, it } from 'vitest';
import { DecodeError, answer, decodeRequestOnDemand, jsonLogger, type RunFunctionRequest } from '#lib';
import { FUNCTION_NAMES, requestBytes, type FunctionName } from '#testing';
import { caseSeed, prng } from '../support/prng.js';
import { HANDLERS, decodeAsServed } from '../../support/handlers.js';
import { seedsFor } from '../support/seeds.js';
import { mutate } from './mutate.js';

const CASES = Number(process.env['DIFF_CASES'] ?? 1500);
const SEED = Number(process.env['FUZZ_SEED'] ?? 8);
/** Wire damage per seed: a few changed bytes, and a cut. */
const DAMAGED_PER_SEED = 6;

type Outcome = { bytes: Buffer } | { refused: string };

/** Every nested Struct and list left for its first read: the on-demand paths, everywhere. */
const everyPartOnDemand = (bytes: Buffer): RunFunctionRequest => decodeRequestOnDemand(bytes, { decodedAtOnce: 0 });

function run(name: FunctionName, bytes: Buffer, decode: 'full' | 'on-demand' | typeof everyPartOnDemand): Outcome {
  const logger = jsonLogger({ function: name, debug: true, write: () => undefined });
  try {
    return { bytes: answer(name, HANDLERS[name], bytes, logger, decode) };
  } catch (error) {
    if (error instanceof DecodeError) return { refused: error.message };
    throw error;
  }
}

/**
 * Compare in full, on demand as the server runs, and with every part on
 * demand; returns a description of the first difference, or undefined.
 */
function differ(name: FunctionName, bytes: Buffer): string | undefined {
  const full = run(name, bytes, 'full');
  for (const [label, decode] of [
    ['on demand by default', 'on-demand'],
    ['on demand as served', (bytes: Buffer) => decodeAsServed(name, bytes)],
    ['every part on demand', everyPartOnDemand],
  ] as const) {
    const onDemand = run(name, bytes, decode);
    if ('refused' in full || 'refused' in onDemand) {
      const a = 'refused' in full ? `refused: ${full.refused}` : 'answered';
      const b = 'refused' in onDemand ? `refused: ${onDemand.refused}` : 'answered';
      if (a !== b) return `full ${a}, ${label} ${b}`;
    } else if (!full.bytes.equals(onDemand.bytes)) {
      return `answers differ (${full.bytes.length} bytes in full, ${onDemand.bytes.length} ${label})`;
    }
  }
  return undefined;
}

describe('decoding on demand answers exactly as decoding in full', () => {
  for (const name of FUNCTION_NAMES) {
    it(`${name}: every seed, ${CASES} mutations of them (seed ${SEED}) and damaged bytes give the same answer both ways`, async () => {
      const seeds = await seedsFor(name);
      const differences: string[] = [];
      let refused = 0;
      const check = (label: string, bytes: Buffer): void => {
        const found = differ(name, bytes);
        if (found !== undefined && differences.length < 10) differences.push(`${label}: ${found}`);
        if (found === undefined && 'refused' in run(name, bytes, 'on-demand')) refused++;
      };
      for (const seed of seeds) check(`seed ${seed.name}`, requestBytes(seed.request));
      for (let index = 0; index < CASES; index++) {
        const rnd = prng(caseSeed(SEED, name, index));
        const base = rnd.pick(seeds);
        const { request, mutations } = mutate(rnd, name, { ...base.request, meta: { tag: `diff-${index}` } });
        check(`case ${index} (${base.name}; ${mutations.join(' | ')})`, requestBytes(request));
      }
      const rnd = prng(caseSeed(SEED, `${name}-wire`, 0));
      for (const seed of seeds) {
        const bytes = requestBytes(seed.request);
        for (let i = 0; i < DAMAGED_PER_SEED; i++) {
          const damaged = Buffer.from(bytes);
          if (i === 0) {
            check(`seed ${seed.name} cut`, damaged.subarray(0, Math.floor(rnd.next() * damaged.length)));
            continue;
          }
          for (let k = 0; k < i; k++) damaged[Math.floor(rnd.next() * damaged.length)] = Math.floor(rnd.next() * 256);
          check(`seed ${seed.name} damaged ${i}`, damaged);
        }
      }
      expect(differences).toEqual([]);
      // The damage reaches the decoder: some of it is refused, both ways alike.
      expect(refused).toBeGreaterThan(0);
    }, 240_000);
  }
});
