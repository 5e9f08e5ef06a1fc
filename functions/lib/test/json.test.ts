import { describe, expect, it } from 'vitest';
import { decodeRequest, getIn, getString, getStringMap, keyedRecord, prune, type JsonObject } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';

describe('prune', () => {
  it('drops null, undefined and non-finite numbers at any depth, and keeps empty lists and maps', () => {
    expect(
      prune({ a: null, b: undefined, c: NaN, d: Infinity, e: [1, null, { f: null, g: 'x' }], h: [], i: {}, j: false, k: 0, l: '' }),
    ).toEqual({ e: [1, { g: 'x' }], h: [], i: {}, j: false, k: 0, l: '' });
  });
  it('returns a clean value as it is, and never changes its input', () => {
    const clean = { a: { b: [1, 'x', true, {}] } };
    expect(prune(clean)).toBe(clean);
    const dirty = { a: { b: [1, null], c: 'kept' } };
    expect(prune(dirty)).toEqual({ a: { b: [1], c: 'kept' } });
    expect(dirty).toEqual({ a: { b: [1, null], c: 'kept' } });
  });
  it('drops functions and symbols, which JSON cannot hold', () => {
    expect(prune({ f: () => 1, s: Symbol('x'), k: 1 })).toEqual({ k: 1 });
  });
});

describe('getIn', () => {
  it('reads own keys only and treats wrong shapes as absent', () => {
    expect(getIn({ a: { b: 1 } }, 'a', 'b')).toBe(1);
    expect(getIn({ a: 'x' }, 'a', 'b')).toBeUndefined();
    expect(getIn({ a: [1] }, 'a', '0')).toBeUndefined();
    expect(getIn({}, 'constructor')).toBeUndefined();
    expect(getIn(null, 'a')).toBeUndefined();
  });
  it('getStringMap keeps only string entries', () => {
    expect(getStringMap({ l: { a: 'b', c: 1, d: null } }, 'l')).toEqual({ a: 'b' });
  });
});

describe('keyedRecord', () => {
  it('holds any key as an ordinary one, "__proto__" included', () => {
    const record = keyedRecord<number>();
    for (const key of ['__proto__', 'constructor', 'toString', 'hydration-a']) record[key] = 1;
    expect(Object.keys(record)).toEqual(['__proto__', 'constructor', 'toString', 'hydration-a']);
    expect(Object.getPrototypeOf(record)).toBeNull();
    expect(JSON.parse(JSON.stringify(record))).toEqual({ ['__proto__']: 1, constructor: 1, toString: 1, 'hydration-a': 1 });
  });

  it('is what the composed resources of a request decode into: a key named "__proto__" is one more resource', () => {
    // Built without fromPartial, which would copy "__proto__" into a prototype.
    const sent = keyedRecord<{ resource: JsonObject; connectionDetails: Record<string, Buffer>; ready: number }>();
    sent['__proto__'] = { resource: { kind: 'A' }, connectionDetails: {}, ready: 0 };
    sent['b'] = { resource: { kind: 'B' }, connectionDetails: {}, ready: 0 };
    const bytes = RunFunctionRequest.encode({
      ...RunFunctionRequest.fromPartial({}),
      observed: { composite: undefined, resources: sent },
    }).finish();
    const resources = decodeRequest(bytes).observed!.resources;
    expect(Object.keys(resources).sort()).toEqual(['__proto__', 'b']);
    expect(getString(resources['__proto__']?.resource, 'kind')).toBe('A');
  });
});
