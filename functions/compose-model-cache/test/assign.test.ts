// Which shard holds each cluster (docs/design/fleet.md): clusters never move,
// new ones fill the lowest shard with room, a cluster leaves a shard only by
// leaving the cache, and a late view of the shards never drops a child.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { assignShards } from '../src/assign.js';
import type { ObservedShard } from '../src/observed.js';

function shard(index: number, listed: string[], composed: string[] = listed): ObservedShard {
  return {
    index,
    resource: {},
    listed: new Map(listed.map((name): [string, JsonObject] => [name, { name }])),
    composed: new Set(composed),
    entries: new Map(),
    authMissing: new Set(),
  };
}

const names = (prefix: string, count: number, from = 0): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);
const observed = (...shards: ObservedShard[]) => new Map(shards.map((s) => [s.index, s]));

describe('assignShards', () => {
  it.each<[string, ReturnType<typeof observed>, string[], { index: number; members: string[]; drop: string[] }[]]>([
    ['a first compose puts up to 100 clusters in shard 0', observed(), ['b', 'a', 'c'], [{ index: 0, members: ['a', 'b', 'c'], drop: [] }]],
    ['nothing to stage: no shard', observed(), [], []],
    [
      'a cluster stays where its child is, even when a lower shard has room',
      observed(shard(0, ['a']), shard(1, ['z'])),
      ['a', 'z'],
      [
        { index: 0, members: ['a'], drop: [] },
        { index: 1, members: ['z'], drop: [] },
      ],
    ],
    [
      'a new cluster goes to the lowest shard with room',
      observed(shard(0, ['a']), shard(1, ['z'])),
      ['a', 'm', 'z'],
      [
        { index: 0, members: ['a', 'm'], drop: [] },
        { index: 1, members: ['z'], drop: [] },
      ],
    ],
    [
      'a cluster that left is dropped by the shard that holds it, and only that one',
      observed(shard(0, ['a', 'b']), shard(1, ['z'])),
      ['a', 'z'],
      [
        { index: 0, members: ['a'], drop: ['b'] },
        { index: 1, members: ['z'], drop: [] },
      ],
    ],
    [
      'a shard whose last cluster left stays until it has dropped it',
      observed(shard(0, ['a']), shard(1, ['z'])),
      ['a'],
      [
        { index: 0, members: ['a'], drop: [] },
        { index: 1, members: [], drop: ['z'] },
      ],
    ],
    [
      'a shard with nothing listed, held or to drop is not desired (Crossplane deletes it)',
      observed(shard(0, ['a']), shard(1, [], [])),
      ['a'],
      [{ index: 0, members: ['a'], drop: [] }],
    ],
    [
      'listed twice (a late view): the shard that holds the child keeps it; the other drops nothing',
      observed(shard(0, ['a', 'n'], ['a']), shard(1, ['n', 'z'], ['n', 'z'])),
      ['a', 'n', 'z'],
      [
        { index: 0, members: ['a'], drop: [] },
        { index: 1, members: ['n', 'z'], drop: [] },
      ],
    ],
    [
      'a child held but no longer listed (its shard was written from a late view) stays with its holder',
      observed(shard(0, ['a'], ['a', 'b'])),
      ['a', 'b'],
      [{ index: 0, members: ['a', 'b'], drop: [] }],
    ],
  ])('%s', (_name, shards, members, expected) => {
    expect(assignShards(shards, members)).toEqual(expected);
  });

  it('fills shard 0 to 100 and opens shard 1 for the 101st cluster, in name order', () => {
    const all = names('c', 250);
    const plans = assignShards(observed(), [...all].reverse());
    expect(plans.map((p) => [p.index, p.members.length])).toEqual([
      [0, 100],
      [1, 100],
      [2, 50],
    ]);
    expect(plans[1]!.members[0]).toBe('c0100');
  });

  it('never moves a cluster as the fleet grows: 1,000 clusters added to 150 keep their shards', () => {
    const first = assignShards(observed(), names('c', 150));
    const before = new Map(first.flatMap((p) => p.members.map((m): [string, number] => [m, p.index])));
    const grown = assignShards(observed(...first.map((p) => shard(p.index, p.members))), [...names('c', 150), ...names('n', 1000)]);
    for (const plan of grown) {
      for (const member of plan.members) if (before.has(member)) expect(plan.index).toBe(before.get(member));
      expect(plan.members.length).toBeLessThanOrEqual(100);
    }
    expect(grown.reduce((sum, p) => sum + p.members.length, 0)).toBe(1150);
  });

  it('refills a shard a cluster left before opening a new one', () => {
    const full = [shard(0, names('c', 100)), shard(1, names('d', 100))];
    const members = [...names('c', 100).filter((c) => c !== 'c0042'), ...names('d', 100), 'new'];
    const plans = assignShards(observed(...full), members);
    expect(plans.find((p) => p.index === 0)!.members).toContain('new');
    expect(plans.find((p) => p.index === 0)!.drop).toEqual(['c0042']);
    expect(plans).toHaveLength(2);
  });
});
