// The same request, differently ordered: what Crossplane may send for one
// state of the world. Its maps (observed resources, required resources, every
// Struct) come in any order, and a required-resource list in whatever order
// the API server listed it.

import type { TestRequest } from '#testing';
import type { Random } from './prng.js';

/** Every object's keys in a random order, recursively; list order kept (a list's order means something). */
export function shuffleKeys<T>(value: T, rnd: Random): T {
  if (Array.isArray(value)) return value.map((item: unknown) => shuffleKeys(item, rnd)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of rnd.shuffle(Object.keys(value))) out[key] = shuffleKeys((value as Record<string, unknown>)[key], rnd);
  return out as T;
}

/** The request with every map in random order and each required-resource list shuffled. */
export function shuffled(req: TestRequest, rnd: Random): TestRequest {
  const out = structuredClone(req);
  const sets = out.requiredResources ?? {};
  const required: NonNullable<TestRequest['requiredResources']> = {};
  for (const key of rnd.shuffle(Object.keys(sets))) required[key] = { items: rnd.shuffle(sets[key]!.items) };
  if (out.requiredResources) out.requiredResources = required;
  return shuffleKeys(out, rnd);
}
