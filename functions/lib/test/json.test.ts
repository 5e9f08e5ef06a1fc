import { describe, expect, it } from 'vitest';
import { getIn, getStringMap, prune } from '#lib';

describe('prune', () => {
  it('drops null, undefined and non-finite numbers at any depth, and keeps empty lists and maps', () => {
    expect(
      prune({ a: null, b: undefined, c: NaN, d: Infinity, e: [1, null, { f: null, g: 'x' }], h: [], i: {}, j: false, k: 0, l: '' }),
    ).toEqual({ e: [1, { g: 'x' }], h: [], i: {}, j: false, k: 0, l: '' });
  });
  it('copies: the result shares nothing with its input', () => {
    const input = { a: { b: [1] } };
    const out = prune(input);
    out.a.b.push(2);
    expect(input.a.b).toEqual([1]);
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
