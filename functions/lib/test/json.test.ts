import { describe, expect, it } from 'vitest';
import { getIn, getStringMap, prune } from '#lib';

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
