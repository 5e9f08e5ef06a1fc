// The excerpt check of docs/walkthrough.md (excerpts.ts), on its own: the
// walkthrough (walkthrough.e2e.ts) needs a live control plane, this doesn't.
// A check that passed a stale page, or rules that kept what varies, would
// make the page prove nothing.

import { describe, expect, it } from 'vitest';
import { asShown, excerptProblems, withExcerpts } from './excerpts.js';

describe('the doc excerpts', () => {
  const page = [
    '# Page',
    '',
    '<!-- excerpt: one -->',
    '',
    '```yaml',
    'a: 1',
    '```',
    '',
    '<!-- excerpt: two -->',
    '```yaml',
    '- x',
    '```',
    '',
  ].join('\n');
  const shown: [string, unknown][] = [
    ['one', { a: 1 }],
    ['two', ['x']],
  ];
  /** The values the page shows, with some changed or added. */
  const values = (...changes: [string, unknown][]) => new Map<string, unknown>([...shown, ...changes]);

  it('are current when every block shows its value, as data', () => {
    expect(excerptProblems(page, values())).toEqual([]);
  });

  it.each<[string, string, Map<string, unknown>, RegExp]>([
    ['a changed value', page, values(['one', { a: 2 }]), /^excerpt one differs/],
    ['a value without a block', page, values(['three', 3]), /^excerpt three is recorded by the test, but the page has no block/],
    ['a block without a value', page, new Map([shown[0]!]), /^excerpt two is on the page, but the test records no value/],
    ['a block twice', `${page}\n<!-- excerpt: one -->\n\`\`\`yaml\na: 1\n\`\`\`\n`, values(), /^excerpt one appears more than once/],
    ['a block that is not YAML', page.replace('a: 1', 'a: [1'), values(), /^excerpt one is not YAML/],
  ])('are not current with %s', (_case, markdown, changed, problem) => {
    const problems = excerptProblems(markdown, changed);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it('are rewritten from the values, formatted, and then current', async () => {
    const values = new Map<string, unknown>([
      ['one', { a: 2, b: 'yes' }],
      ['two', ['x', 'y']],
    ]);
    const rewritten = await withExcerpts(page, values, 'docs/page.md');
    expect(excerptProblems(rewritten, values)).toEqual([]);
    expect(rewritten).toContain('<!-- excerpt: one -->\n\n```yaml\na: 2\nb: yes\n```');
  });
});

describe('asShown: what of a live object a page shows', () => {
  it('drops bookkeeping, moments and generated names, and keeps the rest as the API server holds it', () => {
    const object = {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: {
        name: 'qwen-63b83e73f9de',
        generateName: 'qwen-',
        uid: 'dd74277a',
        resourceVersion: '1360',
        generation: 1,
        creationTimestamp: '2026-11-30T11:11:28Z',
        managedFields: [{ manager: 'crossplane' }],
        labels: { 'crossplane.io/composite': 'qwen' },
        annotations: {
          'crossplane.io/composition-resource-name': 'pvc',
          'crossplane.io/external-name': 'qwen-63b83e73f9de',
          'crossplane.io/external-create-pending': '2026-11-30T11:11:28Z',
          'crossplane.io/external-create-succeeded': '2026-11-30T11:11:28Z',
        },
        ownerReferences: [
          { kind: 'ModelCacheHydration', name: 'modelcache-ml-team-qwen-us-east-a100-dd185', uid: 'dca0ca9e', controller: true },
        ],
      },
      spec: { forProvider: { manifest: { metadata: { name: 'modelcache-ml-team-qwen-17db2' } } } },
      status: {
        atProvider: { manifest: { status: { phase: 'Bound', startTime: '2026-11-30T11:11:30Z' } } },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2026-11-30T11:11:58Z' },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', observedGeneration: 1, lastTransitionTime: '2026-11-30T11:11:28Z' },
          { type: 'Responsive', status: 'False', reason: 'WatchCircuitOpen', message: 'Too many watch events' },
        ],
      },
    };
    expect(asShown(object)).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: {
        generateName: 'qwen-',
        labels: { 'crossplane.io/composite': 'qwen' },
        annotations: { 'crossplane.io/composition-resource-name': 'pvc' },
        ownerReferences: [{ kind: 'ModelCacheHydration', name: 'modelcache-ml-team-qwen-us-east-a100-dd185', controller: true }],
      },
      spec: { forProvider: { manifest: { metadata: { name: 'modelcache-ml-team-qwen-17db2' } } } },
      status: {
        atProvider: { manifest: { status: { phase: 'Bound' } } },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Available' },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
        ],
      },
    });
  });

  it('keeps a name nothing generated, and drops annotations that were all bookkeeping', () => {
    expect(
      asShown({
        metadata: { name: 'qwen', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
        items: ['a', 1, null],
      }),
    ).toEqual({ metadata: { name: 'qwen' }, items: ['a', 1, null] });
  });
});
