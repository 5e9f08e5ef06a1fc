// Decoding on demand (issue 17) against decoding in full: the same values,
// the same refusals, bytes left undecoded until read, and objects a function
// cannot tell from plain ones.

import { describe, expect, it } from 'vitest';
import { DecodeError, decodeRequest, decodeRequestOnDemand, decodeStats, encodeResponse, type RunFunctionResponse } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const KEYS = ['a', 'metadata', 'spec', 'status', '__proto__', '0', '10', 'ünï', '', 'constructor'];
const LEAVES: Json[] = [null, true, false, 0, -1.5, 1e300, '', 'x', '日本語', 'y'.repeat(40)];

function randomJson(random: () => number, depth: number): Json {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const kind = depth > 5 ? 0 : Math.floor(random() * 3);
  if (kind === 0) return pick(LEAVES);
  if (kind === 1) return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
  const out: Record<string, Json> = {};
  for (let i = Math.floor(random() * 6); i > 0; i--) {
    const value = randomJson(random, depth + 1);
    Object.defineProperty(out, pick(KEYS), { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function randomObject(random: () => number): Record<string, Json> {
  const value = randomJson(random, 0);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value };
}

function randomBytes(seed: number): Uint8Array {
  const random = prng(seed);
  const resource = () => ({ resource: randomObject(random), connectionDetails: {}, ready: 0 });
  return RunFunctionRequest.encode(
    RunFunctionRequest.fromPartial({
      meta: { tag: `t${seed}` },
      observed: { composite: resource(), resources: { a: resource(), b: resource() } },
      desired: { resources: { c: resource() } },
      input: randomObject(random),
      context: seed % 2 === 0 ? randomObject(random) : undefined,
      requiredResources: { clusters: { items: [resource(), resource()] }, none: { items: [] } },
      requiredSchemas: { s: { openapiV3: randomObject(random) } },
    }),
  ).finish();
}

/** Encode a Struct field by hand: the generated encoder can't write repeated keys or odd Values. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
const field = (tag: number, body: number[]): number[] => [tag, ...varint(body.length), ...body];
const str = (tag: number, text: string): number[] => field(tag, [...Buffer.from(text)]);
const entry = (key: string, value: number[]): number[] => field(10, [...str(10, key), ...field(18, value)]);
/** A request whose observed XR is the Struct with these field bytes. */
const xrRequest = (struct: number[]): Buffer => Buffer.from(field(18, field(10, field(10, struct))));

describe('decodeRequestOnDemand', () => {
  it.each(Array.from({ length: 80 }, (_, i) => i))('gives what a full decode gives, read all at once (seed %i)', (seed) => {
    const bytes = randomBytes(seed);
    expect(decodeRequestOnDemand(bytes)).toEqual(decodeRequest(bytes));
    expect(JSON.stringify(decodeRequestOnDemand(bytes))).toBe(JSON.stringify(decodeRequest(bytes)));
  });

  it.each(Array.from({ length: 20 }, (_, i) => i))('answers with the same bytes when the request is echoed (seed %i)', (seed) => {
    const bytes = randomBytes(seed);
    const echo = (req: RunFunctionRequest) => {
      const rsp: RunFunctionResponse = {
        meta: { tag: 't', ttl: { seconds: 60, nanos: 0 } },
        desired: req.desired,
        results: [],
        requirements: undefined,
        conditions: [],
      };
      if (req.context !== undefined) rsp.context = req.context;
      return encodeResponse(rsp);
    };
    expect(echo(decodeRequestOnDemand(bytes)).equals(echo(decodeRequest(bytes)))).toBe(true);
  });

  it('leaves nested parts undecoded until read, then counts them', () => {
    const big = {
      metadata: { name: 'x', managedFields: Array.from({ length: 200 }, (_, i) => ({ manager: `m${i}`, fieldsV1: { f: {} } })) },
    };
    const bytes = RunFunctionRequest.encode(
      RunFunctionRequest.fromPartial({ observed: { composite: { resource: big }, resources: {} } }),
    ).finish();
    const req = decodeRequestOnDemand(bytes);
    const before = decodeStats(req)!;
    expect(before.requestBytes).toBe(bytes.length);
    expect(before.decodedBytes / before.requestBytes).toBeLessThan(0.05);
    const metadata = req.observed!.composite!.resource!['metadata'] as Record<string, unknown>;
    expect(metadata['name']).toBe('x');
    expect(decodeStats(req)!.decodedBytes / bytes.length).toBeLessThan(0.05);
    expect((metadata['managedFields'] as unknown[]).length).toBe(200);
    // Small parts are decoded with what holds them: the entries came whole with the list.
    JSON.stringify(req);
    expect(decodeStats(req)!.decodedBytes).toBe(bytes.length);
    expect(decodeStats(decodeRequest(bytes))).toBeUndefined();
  });

  it('gives objects that behave as plain ones: keys, hasOwn, spread, structuredClone, writes, deletes', () => {
    const bytes = RunFunctionRequest.encode(
      RunFunctionRequest.fromPartial({
        observed: { composite: { resource: { b: { x: [1, { y: 2 }] }, a: 'z', c: { d: {} } } }, resources: {} },
      }),
    ).finish();
    const fresh = () => decodeRequestOnDemand(bytes, { decodedAtOnce: 0 }).observed!.composite!.resource!;
    expect(Object.keys(fresh())).toEqual(['b', 'a', 'c']);
    expect(Object.hasOwn(fresh(), 'b')).toBe(true);
    expect({ ...fresh() }).toEqual({ b: { x: [1, { y: 2 }] }, a: 'z', c: { d: {} } });
    expect(structuredClone(fresh())).toEqual({ b: { x: [1, { y: 2 }] }, a: 'z', c: { d: {} } });
    expect(Object.getOwnPropertySymbols({ ...fresh() })).toEqual([]);
    const written = fresh();
    written['b'] = 'replaced';
    delete written['c'];
    expect(written).toEqual({ b: 'replaced', a: 'z' });
    const read = fresh();
    const b: unknown = read['b'];
    expect(read['b']).toBe(b);
    expect(Object.getOwnPropertyDescriptor(read, 'b')).toMatchObject({ enumerable: true, configurable: true });
  });

  it('takes the last of repeated keys and the last kind of a Value, as a full decode does', () => {
    const nested = field(42, entry('k', str(26, 'v')));
    const cases = [
      [...entry('a', nested), ...entry('a', str(26, 'scalar'))],
      [...entry('a', str(26, 'scalar')), ...entry('a', nested)],
      [...entry('a', nested), ...entry('b', [8, 0]), ...entry('a', field(50, field(10, str(26, 'in list'))))],
      [...entry('a', [...nested, ...str(26, 'then scalar')])],
      [...entry('a', [...str(26, 'first'), ...nested])],
      [...entry('__proto__', nested)],
      [...entry('a', [])],
    ];
    for (const struct of cases) {
      const bytes = xrRequest(struct);
      expect(decodeRequestOnDemand(bytes)).toEqual(decodeRequest(bytes));
      expect(Object.keys(decodeRequestOnDemand(bytes).observed!.composite!.resource!)).toEqual(
        Object.keys(decodeRequest(bytes).observed!.composite!.resource!),
      );
    }
  });

  it('checks plainly written parts by a short path that accepts and refuses as the long one does', () => {
    const nest = (depth: number, inner: number[]): number[] => (depth === 0 ? inner : entry('n', field(42, nest(depth - 1, inner))));
    /** An entry whose fields are written by hand: `key` then `value`, each with the length given. */
    const rawEntry = (keyLength: number[], key: number[], valueLength: number[], value: number[]): number[] =>
      field(10, [10, ...keyLength, ...key, 18, ...valueLength, ...value]);
    const cases: Record<string, number[]> = {
      'strings with one- and two-byte lengths': [...entry('a', str(26, 'x')), ...entry('b', str(26, 'y'.repeat(300)))],
      'a string with a three-byte length': entry('a', str(26, 'z'.repeat(20_000))),
      'scalars: null, bool, number': [...entry('a', [8, 0]), ...entry('b', [32, 1]), ...entry('c', [17, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f])],
      'a bool written in two bytes': entry('a', [32, 0x81, 0x00]),
      'a length written in two bytes for one': rawEntry([0x81, 0x00], [0x61], [2], str(26, '')),
      'empty and nested Structs and lists': [
        ...entry('a', [42, 0]),
        ...entry('b', [50, 0]),
        ...entry('c', field(42, entry('d', field(50, [...field(10, str(26, 'i')), ...field(10, [42, 0])])))),
      ],
      'a key running past its entry': rawEntry([9], [0x61], [2], str(26, '')),
      'a Value shorter than its entry': field(10, [...str(10, 'a'), ...field(18, str(26, 'v')), 0x20, 1]),
      'a Value longer than its entry': rawEntry([1], [0x61], [9], str(26, '')),
      'a Value of two fields': entry('a', [...str(26, 'first'), ...str(26, 'second')]),
      'a string, then a field of no wire type, in one Value': entry('a', [...str(26, 'first'), 0x0f]),
      'a number cut short': entry('a', [17, 0, 0, 0, 0, 0, 0, 0]),
      'a list item running past its list': entry('a', [50, 4, 10, 9, 26, 0]),
      'an empty Struct at the deepest level allowed': nest(98, entry('e', [42, 0])),
      'an empty Struct one level deeper': nest(99, entry('e', [42, 0])),
      'an empty list one level deeper': nest(99, entry('e', [50, 0])),
      'a string one level deeper': nest(99, entry('e', str(26, 's'))),
    };
    // Refused when decoded, or else everything read: a part the check let through is never refused later, on its first read.
    const outcome = (decode: () => unknown): unknown => {
      let decoded: unknown;
      try {
        decoded = decode();
      } catch (error) {
        return error instanceof DecodeError ? `refused: ${error.message}` : error;
      }
      return JSON.parse(JSON.stringify(decoded)) as unknown;
    };
    const outcomes: Record<string, unknown> = {};
    for (const [name, struct] of Object.entries(cases)) {
      // Inside a nested Struct, so that decoding on demand checks it unread.
      const bytes = xrRequest(entry('outer', field(42, struct)));
      const full = outcome(() => decodeRequest(bytes));
      for (const decodedAtOnce of [undefined, 0]) {
        expect(
          outcome(() => decodeRequestOnDemand(bytes, { decodedAtOnce })),
          `${name}, decodedAtOnce ${decodedAtOnce}`,
        ).toEqual(full);
      }
      outcomes[name] = typeof full === 'string' ? full : 'decoded';
    }
    // The table covers both sides of the short path: what it takes, and what only the long path may refuse.
    expect(outcomes).toEqual({
      'strings with one- and two-byte lengths': 'decoded',
      'a string with a three-byte length': 'decoded',
      'scalars: null, bool, number': 'decoded',
      'a bool written in two bytes': 'decoded',
      'a length written in two bytes for one': 'decoded',
      'empty and nested Structs and lists': 'decoded',
      'a key running past its entry': 'refused: length exceeds message',
      'a Value shorter than its entry': 'decoded',
      'a Value longer than its entry': 'refused: length exceeds message',
      'a Value of two fields': 'decoded',
      'a string, then a field of no wire type, in one Value': 'refused: unknown wire type 7',
      'a number cut short': 'refused: truncated double',
      'a list item running past its list': 'refused: length exceeds message',
      'an empty Struct at the deepest level allowed': 'decoded',
      'an empty Struct one level deeper': 'refused: struct nested deeper than 100',
      'an empty list one level deeper': 'refused: list nested deeper than 100',
      'a string one level deeper': 'decoded',
    });
  });

  it('refuses exactly what a full decode refuses, with the same message, read or not', () => {
    const valid = Buffer.from(randomBytes(3));
    const random = prng(99);
    const broken: Buffer[] = [
      xrRequest([...entry('a', [0x80])]), // a varint running past its Value
      xrRequest([...entry('a', [0x0f])]), // wire type 7
    ];
    for (let i = 0; i < 300; i++) {
      const copy = Buffer.from(valid);
      copy[Math.floor(random() * copy.length)] = Math.floor(random() * 256);
      broken.push(copy, valid.subarray(0, Math.floor(random() * valid.length)));
    }
    let refused = 0;
    const outcome = (decode: () => unknown): unknown => {
      try {
        return decode();
      } catch (error) {
        return error;
      }
    };
    for (const bytes of broken) {
      const full = outcome(() => decodeRequest(bytes));
      // As the server decodes, and with every nested part left for later (so every part is checked unread).
      for (const decodedAtOnce of [undefined, 0]) {
        const onDemand = outcome(() => decodeRequestOnDemand(bytes, decodedAtOnce === undefined ? {} : { decodedAtOnce }));
        if (full instanceof Error) {
          expect(full).toBeInstanceOf(DecodeError);
          expect(onDemand).toBeInstanceOf(DecodeError);
          expect((onDemand as Error).message).toBe(full.message);
        } else {
          expect(onDemand).toEqual(full);
        }
      }
      if (full instanceof Error) refused++;
    }
    expect(refused).toBeGreaterThan(100);
  });
});
