import { describe, expect, it } from 'vitest';
import { InputError, cacheFootprint, labelSelector, matchesSelector, placeableClusters, requirementLabels, type LabelSelector } from '#lib';
import { inferenceCluster } from '#testing';

const tierA100: LabelSelector = { matchLabels: { 'modelplane.ai/tier': 'a100' } };

describe('matchesSelector', () => {
  const cases: [string, Record<string, string>, LabelSelector, boolean][] = [
    ['matchLabels equal', { 'modelplane.ai/tier': 'a100', region: 'us' }, tierA100, true],
    ['matchLabels differ', { 'modelplane.ai/tier': 'h100' }, tierA100, false],
    ['matchLabels absent', {}, tierA100, false],
    ['In matches', { region: 'us' }, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] }, true],
    ['In misses', { region: 'ap' }, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] }, false],
    ['In needs the label', {}, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] }, false],
    ['NotIn excludes', { region: 'us' }, { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }, false],
    ['NotIn keeps others', { region: 'eu' }, { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }, true],
    ['NotIn matches a missing label', {}, { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }, true],
    ['Exists', { gpu: '' }, { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, true],
    ['Exists misses', {}, { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, false],
    ['DoesNotExist', {}, { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist misses', { gpu: 'x' }, { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }, false],
    [
      'labels AND expressions',
      { 'modelplane.ai/tier': 'a100', region: 'eu' },
      { ...tierA100, matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] },
      true,
    ],
    [
      'labels match but an expression does not',
      { 'modelplane.ai/tier': 'a100', region: 'us' },
      { ...tierA100, matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] },
      false,
    ],
    ['an empty selector matches nothing (a cache must name its footprint)', { a: 'b' }, {}, false],
    ['inherited keys are not labels', {}, { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, false],
  ];
  it.each(cases)('%s', (_name, labels, selector, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
});

describe('labelSelector parser', () => {
  const parse = labelSelector();
  it('keeps labels and expressions', () => {
    expect(parse({ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] }, 'spec.clusterSelector')).toEqual({
      matchLabels: { a: 'b' },
      matchExpressions: [{ key: 'c', operator: 'Exists' }],
    });
  });
  it.each([
    [{}, 'spec.clusterSelector must select on at least one label or expression'],
    [{ matchLabels: {} }, 'spec.clusterSelector must select on at least one label or expression'],
    [
      { matchExpressions: [{ key: 'a', operator: 'Near' }] },
      'spec.clusterSelector.matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      'spec.clusterSelector.matchExpressions[0].values must not be empty when operator is In',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'spec.clusterSelector.matchExpressions[0].values must be empty',
    ],
    [{ matchLabels: { a: 3 } }, 'spec.clusterSelector.matchLabels.a must be a string'],
    ['tier=a100', 'spec.clusterSelector must be an object'],
  ])('refuses %j', (value, message) => {
    expect(() => parse(value, 'spec.clusterSelector')).toThrow(InputError);
    expect(() => parse(value, 'spec.clusterSelector')).toThrow(message);
  });
});

describe('requirementLabels', () => {
  it('sends only matchLabels (a requirement cannot carry expressions)', () => {
    expect(requirementLabels({ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] })).toEqual({ a: 'b' });
    expect(requirementLabels({ matchExpressions: [{ key: 'c', operator: 'Exists' }] })).toEqual({});
  });
});

describe('cacheFootprint', () => {
  const a100 = { 'modelplane.ai/tier': 'a100' };
  it('keeps matching, provisioned clusters sorted, and names the unprovisioned ones', () => {
    const footprint = cacheFootprint(tierA100, [
      inferenceCluster('cluster-b', { labels: a100, providerConfig: 'b-pc' }),
      inferenceCluster('cluster-a', { labels: a100, providerConfig: 'a-pc', storageClassName: 'rwx' }),
      inferenceCluster('cluster-c', { labels: a100 }),
      inferenceCluster('cluster-d', { labels: { 'modelplane.ai/tier': 'h100' }, providerConfig: 'd-pc' }),
      { not: 'a cluster' },
      'garbage',
    ]);
    expect(footprint.clusters.map((c) => [c.name, c.providerConfigName, c.storageClassName])).toEqual([
      ['cluster-a', 'a-pc', 'rwx'],
      ['cluster-b', 'b-pc', undefined],
    ]);
    expect(footprint.unprovisioned).toEqual(['cluster-c']);
  });

  it('applies expressions the requirement could not', () => {
    const footprint = cacheFootprint({ matchLabels: a100, matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }, [
      inferenceCluster('eu-1', { labels: { ...a100, region: 'eu' }, providerConfig: 'pc' }),
      inferenceCluster('us-1', { labels: { ...a100, region: 'us' }, providerConfig: 'pc' }),
    ]);
    expect(footprint.clusters.map((c) => c.name)).toEqual(['eu-1']);
  });

  it('counts a cluster listed twice once', () => {
    const cluster = inferenceCluster('a', { labels: a100, providerConfig: 'pc' });
    expect(cacheFootprint(tierA100, [cluster, cluster]).clusters).toHaveLength(1);
  });
});

describe('placeableClusters', () => {
  it('is the footprint clusters whose entry is Ready with a mount', () => {
    const labels = { 'modelplane.ai/tier': 'a100' };
    const clusters = ['a', 'b', 'c', 'd'].map((name) => inferenceCluster(name, { labels, providerConfig: `${name}-pc` }));
    const status = {
      clusters: [
        { name: 'a', phase: 'Ready', mount: { volumes: [] } },
        { name: 'b', phase: 'Ready' },
        { name: 'c', phase: 'Hydrating', mount: { volumes: [] } },
        { name: 'e', phase: 'Ready', mount: { volumes: [] } },
      ],
    };
    expect(placeableClusters(tierA100, status, clusters).map((c) => c.name)).toEqual(['a']);
  });
});
