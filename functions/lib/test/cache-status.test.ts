import { describe, expect, it } from 'vitest';
import { cacheEntries, findCacheEntry } from '#lib';

const mount = { volumes: [{ name: 'model' }] };

describe('findCacheEntry', () => {
  // It reads one entry's state; what it returns must be what cacheEntries gives for that name.
  it.each([
    [
      'the entry of that name',
      {
        clusters: [
          { name: 'a', phase: 'Pending' },
          { name: 'b', phase: 'Ready', mount },
        ],
      },
      'b',
    ],
    [
      'the first of two entries with that name',
      {
        clusters: [
          { name: 'b', phase: 'Failed', message: 'x' },
          { name: 'b', phase: 'Ready', mount },
        ],
      },
      'b',
    ],
    ['past an entry with no name', { clusters: [{ phase: 'Ready' }, { name: 7 }, { name: 'a', phase: 'Hydrating', attempts: 2 }] }, 'a'],
    ['an unknown phase as Pending', { clusters: [{ name: 'a', phase: 'Sideways' }] }, 'a'],
    ['nothing for a cluster not listed', { clusters: [{ name: 'a', phase: 'Ready' }] }, 'z'],
    ['nothing when clusters is not a list', { clusters: 'a' }, 'a'],
    ['nothing without a status', undefined, 'a'],
  ])('finds %s', (_case, status, cluster) => {
    const expected = cacheEntries(status).find((entry) => entry.name === cluster);
    expect(findCacheEntry(status, cluster)).toEqual(expected);
  });

  it('reads the state whole: phase, message, mount and attempts', () => {
    const status = { clusters: [{ name: 'a', phase: 'Ready', message: 'staged', mount, attempts: 3 }] };
    expect(findCacheEntry(status, 'a')).toEqual({ name: 'a', phase: 'Ready', message: 'staged', mount, attempts: 3 });
  });
});
