import { describe, expect, it } from 'vitest';
import { DecodeError, MAX_STRUCT_DEPTH, Ready, Severity, Status, decodeRequest, encodeResponse } from '#lib';
import { RunFunctionRequest, RunFunctionResponse } from '#lib/sdk';

// The generated codec (ts-proto, via the SDK) is the reference: ours must read
// and write the same bytes into and out of the same shapes.

/** A small seeded PRNG: the same cases on every run. */
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

const STRINGS = [
  '',
  'a',
  'qwen',
  'Qwen/Qwen3-0.6B',
  'ünïcødé',
  '日本語',
  '🚀 rocket',
  'x'.repeat(300),
  'line\nbreak',
  '"quoted"',
  '\u0000nul',
];
const NUMBERS = [0, 1, -1, 3.5, -0.25, 2 ** 31, 2 ** 53 - 1, -(2 ** 40), 1e-9, 20];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function randomJson(random: () => number, depth: number): Json {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const kind = depth > 4 ? Math.floor(random() * 4) : Math.floor(random() * 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick(NUMBERS);
    case 3:
      return pick(STRINGS);
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
    default: {
      const out: Record<string, Json> = {};
      for (let i = Math.floor(random() * 5); i > 0; i--) out[pick(STRINGS) + String(i)] = randomJson(random, depth + 1);
      return out;
    }
  }
}

function randomObject(random: () => number): Record<string, Json> {
  const value = randomJson(random, 0);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value };
}

function randomRequest(seed: number): RunFunctionRequest {
  const random = prng(seed);
  const resource = () => ({
    resource: randomObject(random),
    connectionDetails: random() < 0.2 ? { k: Buffer.from('v\u00ff') } : {},
    ready: [Ready.READY_UNSPECIFIED, Ready.READY_TRUE, Ready.READY_FALSE][Math.floor(random() * 3)]!,
  });
  return RunFunctionRequest.fromPartial({
    meta: { tag: STRINGS[seed % STRINGS.length]!, capabilities: seed % 2 === 0 ? [1, 2, 4] : [] },
    observed: { composite: resource(), resources: { a: resource(), 'b-key': resource() } },
    desired: seed % 3 === 0 ? { composite: undefined, resources: {} } : { composite: resource(), resources: { c: resource() } },
    input: seed % 4 === 0 ? randomObject(random) : undefined,
    context: seed % 5 === 0 ? randomObject(random) : undefined,
    requiredResources: { clusters: { items: [resource(), resource()] }, empty: { items: [] } },
    extraResources: seed % 2 === 0 ? { legacy: { items: [resource()] } } : {},
    credentials: { creds: { credentialData: { data: { token: Buffer.from('secret-value') } } } },
    requiredSchemas: seed % 2 === 1 ? { s: { openapiV3: randomObject(random) } } : {},
  });
}

function randomResponse(seed: number): RunFunctionResponse {
  const random = prng(seed);
  return RunFunctionResponse.fromPartial({
    meta: { tag: STRINGS[seed % STRINGS.length]!, ttl: { seconds: 60, nanos: seed % 2 === 0 ? 0 : 5 } },
    desired: {
      composite: { resource: randomObject(random), ready: Ready.READY_FALSE },
      resources: { x: { resource: randomObject(random), ready: Ready.READY_TRUE }, y: { resource: randomObject(random) } },
    },
    results: [
      { severity: Severity.SEVERITY_NORMAL, message: 'Staging to 3 clusters', reason: 'Staging' },
      { severity: Severity.SEVERITY_WARNING, message: 'ünïcødé', target: 1 },
    ],
    context: seed % 2 === 0 ? randomObject(random) : undefined,
    requirements: {
      resources: {
        clusters: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchLabels: { labels: { tier: 'a100', empty: '' } } },
        cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'a', namespace: 'ns' },
      },
      extraResources: {},
      schemas: seed % 2 === 0 ? { s: { apiVersion: 'v1', kind: 'Pod' } } : {},
    },
    conditions: [
      { type: 'ArtifactReady', status: Status.STATUS_CONDITION_FALSE, reason: 'Hydrating', message: 'waiting' },
      { type: 'Ready', status: Status.STATUS_CONDITION_TRUE, reason: '' },
    ],
  });
}

/** A copy of a JSON value with every object's keys in the order `order` gives. */
function reordered(value: unknown, order: (keys: string[]) => string[]): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => reordered(item, order));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of order(Object.keys(value))) out[key] = reordered((value as Record<string, unknown>)[key], order);
  return out;
}

/** The response with the keys of every Struct in it (resources, context) reordered; messages and maps as they were. */
function withStructKeys(rsp: RunFunctionResponse, order: (keys: string[]) => string[]): RunFunctionResponse {
  const struct = (value: Record<string, unknown> | undefined) => value && (reordered(value, order) as Record<string, unknown>);
  const desired = rsp.desired;
  return {
    ...rsp,
    context: struct(rsp.context),
    desired: desired && {
      composite: desired.composite && { ...desired.composite, resource: struct(desired.composite.resource) },
      resources: Object.fromEntries(Object.entries(desired.resources).map(([key, r]) => [key, { ...r, resource: struct(r.resource) }])),
    },
  };
}

function withSortedStructs(rsp: RunFunctionResponse): RunFunctionResponse {
  return withStructKeys(rsp, (keys) => [...keys].sort());
}

describe('decodeRequest', () => {
  it.each(Array.from({ length: 60 }, (_, i) => i))('reads what the generated codec reads (seed %i)', (seed) => {
    const bytes = RunFunctionRequest.encode(randomRequest(seed)).finish();
    expect(decodeRequest(bytes)).toEqual(RunFunctionRequest.decode(bytes));
  });

  it('keeps "__proto__" as an ordinary key, as JSON.parse does', () => {
    // The generated encoder cannot write this key, so write "__proto_X" and patch the bytes (same length).
    const encoded = Buffer.from(
      RunFunctionRequest.encode(
        RunFunctionRequest.fromPartial({ observed: { composite: { resource: { __proto_X: { polluted: true }, a: 1 } }, resources: {} } }),
      ).finish(),
    );
    const bytes = Buffer.from(encoded.toString('latin1').replace('__proto_X', '__proto__'), 'latin1');
    const resource = decodeRequest(bytes).observed!.composite!.resource!;
    expect(Object.keys(resource)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(resource)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it(`refuses a Struct nested deeper than ${MAX_STRUCT_DEPTH}`, () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 90; i++) deep = { next: [deep] };
    const bytes = RunFunctionRequest.encode(
      RunFunctionRequest.fromPartial({ observed: { composite: { resource: deep }, resources: {} } }),
    ).finish();
    expect(() => decodeRequest(bytes)).toThrow(DecodeError);
  });

  it('refuses truncated input instead of reading past it', () => {
    const bytes = RunFunctionRequest.encode(randomRequest(7)).finish();
    for (const cut of [1, 2, 10, bytes.length - 1]) {
      expect(() => decodeRequest(bytes.subarray(0, cut))).toThrow(DecodeError);
    }
  });

  it('skips fields it does not know', () => {
    // field 15, varint 1; then a known meta.
    const bytes = Buffer.concat([
      Buffer.from([0x78, 0x01]),
      Buffer.from(RunFunctionRequest.encode(RunFunctionRequest.fromPartial({ meta: { tag: 't' } })).finish()),
    ]);
    expect(decodeRequest(bytes).meta?.tag).toBe('t');
  });
});

describe('encodeResponse', () => {
  it.each(Array.from({ length: 60 }, (_, i) => i))('writes what the generated codec reads back (seed %i)', (seed) => {
    const rsp = randomResponse(seed);
    expect(RunFunctionResponse.decode(encodeResponse(rsp))).toEqual(RunFunctionResponse.decode(RunFunctionResponse.encode(rsp).finish()));
  });

  it.each(Array.from({ length: 20 }, (_, i) => i))(
    'writes the same bytes as the generated codec, Struct keys in byte order (seed %i)',
    (seed) => {
      const rsp = randomResponse(seed);
      const sorted = withSortedStructs(rsp);
      expect(encodeResponse(rsp).toString('hex')).toBe(Buffer.from(RunFunctionResponse.encode(sorted).finish()).toString('hex'));
    },
  );

  it.each(Array.from({ length: 20 }, (_, i) => i))('writes the same bytes whatever order a Struct’s keys were set in (seed %i)', (seed) => {
    const rsp = randomResponse(seed);
    const reversed = withStructKeys(rsp, (keys) => [...keys].reverse());
    expect(encodeResponse(reversed).equals(encodeResponse(rsp))).toBe(true);
  });

  it.each([1, 2, 5, 12, 13, 40])('writes the keys of a %i-key object out of order in byte order', (size) => {
    // Both ways of ordering: picking each next key (small objects) and sorting a copy (large ones).
    const random = prng(size);
    const keys = Array.from({ length: size }, (_, i) => `k${String.fromCharCode(97 + (i % 26))}${i}`);
    const shuffled = [...keys];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    const object = Object.fromEntries(shuffled.map((key) => [key, key]));
    const sorted = Object.fromEntries([...keys].sort().map((key) => [key, key]));
    const response = (output: Record<string, unknown>): RunFunctionResponse => RunFunctionResponse.fromPartial({ output });
    expect(encodeResponse(response(object)).toString('hex')).toBe(
      Buffer.from(RunFunctionResponse.encode(response(sorted)).finish()).toString('hex'),
    );
  });

  it('hands back bytes of their own: a later call does not overwrite an earlier answer', () => {
    // The writer's buffer is kept from call to call; what it returns must not be a view of it.
    const big = RunFunctionResponse.fromPartial({ output: { blob: 'x'.repeat(200_000) } });
    const first = encodeResponse(randomResponse(1));
    const kept = Buffer.from(first);
    encodeResponse(big);
    encodeResponse(randomResponse(2));
    expect(first.equals(kept)).toBe(true);
    expect(RunFunctionResponse.decode(encodeResponse(big)).output).toEqual({ blob: 'x'.repeat(200_000) });
  });

  it('leaves out undefined and non-finite numbers, and sends large bodies intact', () => {
    const big = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`key-${i}`, { n: i, s: 'ü'.repeat(i % 50), gone: undefined, nan: NaN }]),
    );
    const rsp = RunFunctionResponse.fromPartial({ meta: { tag: 't' }, desired: { resources: { big: { resource: big } } } });
    const decoded = RunFunctionResponse.decode(encodeResponse(rsp)).desired!.resources['big']!.resource!;
    expect(Object.keys(decoded)).toHaveLength(3000);
    expect(decoded['key-2999']).toEqual({ n: 2999, s: 'ü'.repeat(2999 % 50) });
  });

  it('refuses a value no Struct can hold', () => {
    const rsp = RunFunctionResponse.fromPartial({ meta: { tag: 't' }, desired: { resources: { x: { resource: { f: 10n } } } } });
    expect(() => encodeResponse(rsp)).toThrow(/cannot encode a bigint/);
  });
});

describe('decodeRequest, strings seen before', () => {
  it('decodes many distinct short strings the same, cold and warm, whatever collides in its table', () => {
    const names = Array.from({ length: 40_000 }, (_, i) => `c${i.toString(36)}`);
    const request = RunFunctionRequest.fromPartial({
      observed: {
        composite: { resource: { keys: Object.fromEntries(names.map((name, i) => [name, names[(i * 7919) % names.length]!])) } },
        resources: {},
      },
    });
    const bytes = RunFunctionRequest.encode(request).finish();
    const reference = RunFunctionRequest.decode(bytes);
    expect(decodeRequest(bytes)).toEqual(reference);
    expect(decodeRequest(bytes)).toEqual(reference);
  });
});
