// What `make bench --write` puts where (bench/report.ts): BENCHMARKS.md gets a
// headline of the realistic calls at N = 10, 100 and 1,000, and
// docs/benchmark-run.md the whole run; each replaces only its `results`
// section, and a page without one is refused rather than left without its
// figures. The pages in the repository have the sections the run rewrites.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';
import { fullRun, headline, headlineRows, replaceSection } from '../../bench/report.js';
import type { Measured, Verdict } from '../../bench/targets.js';

function measured(fn: string, scenario: string, n: number, p50Ms = 1): Measured {
  return {
    id: `${fn}-${scenario}-${n}`,
    function: fn,
    scenario,
    n,
    requestBytes: 1000 * n,
    responseBytes: 100,
    calls: 20,
    p50Ms,
    p99Ms: 2 * p50Ms,
    floorP50Ms: 2,
    floorP99Ms: 4,
    ratioToFloor: p50Ms / 2,
    callsPerSecond: 500,
    floorCallsPerSecond: 400,
    rssMb: 60,
    peakRssMb: 70,
    peakRssConcurrentMb: 90,
    floorPeakRssMb: 65,
    floorPeakRssConcurrentMb: 85,
    startMs: 120,
    decodedShare: 0.3,
  };
}

const SIZES = [1, 10, 100, 1000];
const RESULTS: Measured[] = [
  ...SIZES.flatMap((n) => [
    measured('compose-model-cache', 'first-compose', n),
    measured('compose-model-cache', 'steady-realistic', n, 10),
    measured('compose-model-cache', 'shard-steady-realistic', n, 5),
    measured('compose-model-cache-hydration', 'steady-huggingface-realistic', n),
    measured('compose-model-cache-hydration', 'steady-oci', n),
    measured('compose-model-replica', 'steady-native-realistic', n, 3),
  ]),
];
const VERDICTS: Verdict[] = [
  { target: 'a target met', pass: true, detail: '1 ms' },
  { target: 'a target missed', pass: false, detail: '9 ms against 5' },
];

describe('bench report: the headline', () => {
  it('holds each function’s realistic calls at N = 10, 100 and 1,000, by function, call, then N', () => {
    expect(headlineRows(RESULTS).map((r) => `${r.scenario} ${r.n}`)).toEqual([
      'steady-realistic 10',
      'steady-realistic 100',
      'steady-realistic 1000',
      'shard-steady-realistic 10',
      'shard-steady-realistic 100',
      'shard-steady-realistic 1000',
      'steady-huggingface-realistic 10',
      'steady-huggingface-realistic 100',
      'steady-huggingface-realistic 1000',
      'steady-native-realistic 10',
      'steady-native-realistic 100',
      'steady-native-realistic 1000',
    ]);
  });

  it.each<[string, Measured[], string[]]>([
    [
      'a run of one size shows that size only',
      RESULTS.filter((r) => r.n === 10),
      [
        'compose-model-cache-steady-realistic-10',
        'compose-model-cache-shard-steady-realistic-10',
        'compose-model-cache-hydration-steady-huggingface-realistic-10',
        'compose-model-replica-steady-native-realistic-10',
      ],
    ],
    [
      'a run of one function (--only) shows that function only',
      RESULTS.filter((r) => r.function === 'compose-model-replica'),
      [
        'compose-model-replica-steady-native-realistic-10',
        'compose-model-replica-steady-native-realistic-100',
        'compose-model-replica-steady-native-realistic-1000',
      ],
    ],
    [
      'a run without the shard scenario leaves its rows out',
      RESULTS.filter((r) => r.scenario !== 'shard-steady-realistic' && r.n === 1000),
      [
        'compose-model-cache-steady-realistic-1000',
        'compose-model-cache-hydration-steady-huggingface-realistic-1000',
        'compose-model-replica-steady-native-realistic-1000',
      ],
    ],
    ['no headline call measured: no rows', RESULTS.filter((r) => r.scenario === 'first-compose' || r.n === 1), []],
  ])('%s', (_, results, ids) => {
    expect(headlineRows(results).map((r) => r.id)).toEqual(ids);
  });

  it('names the machine, shows each row’s figures, and counts the targets, quoting the ones missed', () => {
    const text = headline(RESULTS, VERDICTS, '2 × a CPU');
    expect(text).toContain('Machine: 2 × a CPU.');
    expect(text).toContain('| compose-model-cache | a ModelCacheShard at rest | 1000 | 1.00 MB | 5.00 | 10.00 | 2.50 | 500 | 70 / 90 |');
    expect(text.match(/^\| compose-model/gm)?.length).toBe(12);
    expect(text).toContain('Targets: 1 of 2 pass.');
    expect(text).toContain('FAIL  a target missed: 9 ms against 5');
    expect(text).not.toContain('a target met');
  });

  it('stays one screen: a dozen rows whatever the run measured', () => {
    expect(Buffer.byteLength(headline(RESULTS, VERDICTS, 'm'))).toBeLessThan(2500);
  });
});

describe('bench report: the whole run', () => {
  it('holds every scenario, the calls per reconcile, and every verdict', () => {
    const text = fullRun(RESULTS, { 'compose-model-cache': 2 }, VERDICTS, 'm', 12.3);
    expect(text).toContain('Machine: m. Run took 12 s.');
    expect(text.match(/^\| compose-model/gm)?.length).toBe(RESULTS.length);
    expect(text).toContain('- compose-model-cache: 2 calls on a first reconcile');
    expect(text).toContain('PASS  a target met: 1 ms');
    expect(text).toContain('FAIL  a target missed: 9 ms against 5');
  });
});

describe('bench report: rewriting a page', () => {
  it('replaces what lies between the markers, and nothing else', () => {
    const doc = '# Page\n\nbefore\n\n<!-- results -->\n\nold table\n\n<!-- /results -->\n\nafter\n';
    expect(replaceSection(doc, 'results', 'new table')).toBe(
      '# Page\n\nbefore\n\n<!-- results -->\n\nnew table\n\n<!-- /results -->\n\nafter\n',
    );
  });

  it.each([
    ['no markers', '# Page\n\na shortened page\n'],
    ['only the opening marker', '<!-- results -->\nold'],
    ['the markers the wrong way round', '<!-- /results -->\nold\n<!-- results -->'],
  ])('refuses a page with %s, naming it', (_, doc) => {
    expect(() => replaceSection(doc, 'results', 'new', 'BENCHMARKS.md')).toThrow(/BENCHMARKS\.md has no <!-- results -->/);
  });

  it.each(['BENCHMARKS.md', 'docs/benchmark-run.md'])('%s has the section make bench rewrites', (page) => {
    const doc = readFileSync(join(REPO_ROOT, page), 'utf8');
    expect(() => replaceSection(doc, 'results', 'x', page)).not.toThrow();
    // Rewriting keeps the rest of the page as it is.
    const rewritten = replaceSection(doc, 'results', 'x', page);
    expect(rewritten.slice(0, doc.indexOf('<!-- results -->'))).toBe(doc.slice(0, doc.indexOf('<!-- results -->')));
    expect(rewritten.slice(rewritten.indexOf('<!-- /results -->'))).toBe(doc.slice(doc.indexOf('<!-- /results -->')));
  });
});
