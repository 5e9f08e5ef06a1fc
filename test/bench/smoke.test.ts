// The benchmark's smoke run (N = 10, a few calls), so the harness can't rot:
// every scenario is measured against the floor, every figure the report
// promises is there, and each function needs two calls per reconcile. It
// judges no timing target: performance is checked by `make bench`, never by a
// unit test.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';
import { SCENARIOS } from '../../bench/scenarios.js';

interface Report {
  results: {
    id: string;
    function: string;
    n: number;
    requestBytes: number;
    p50Ms: number;
    p99Ms: number;
    floorP50Ms: number;
    ratioToFloor: number;
    callsPerSecond: number;
    peakRssMb: number;
    startMs: number;
    decodedShare: number;
  }[];
  callsPerReconcile: Record<string, number>;
  verdicts: { target: string; pass: boolean }[];
}

let report: Report;
let markdown: string;
let summary: string;
let svg: string;

beforeAll(() => {
  const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  execFileSync(process.execPath, ['bench/build.mjs'], { cwd: REPO_ROOT, stdio: 'pipe' });
  execFileSync(process.execPath, ['bench/dist/run.js', '--smoke', '--out', out], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 120_000 });
  report = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Report;
  markdown = readFileSync(join(out, 'results.md'), 'utf8');
  summary = readFileSync(join(out, 'headline.md'), 'utf8');
  svg = readFileSync(join(out, 'chart.svg'), 'utf8');
}, 150_000);

describe('make bench, smoke', () => {
  it('measures every scenario of every function against the floor', () => {
    // Every scenario the benchmark declares (other issues add their own), the lean and the realistic ones among them.
    expect(report.results.map((r) => r.id).sort()).toEqual(
      SCENARIOS(10)
        .map((scenario) => scenario.id)
        .sort(),
    );
    expect(report.results.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        'compose-model-cache-first-compose-10',
        'compose-model-cache-steady-10',
        'compose-model-cache-hydration-steady-claim-10',
        'compose-model-cache-hydration-steady-huggingface-10',
        'compose-model-cache-hydration-steady-oci-10',
        'compose-model-replica-steady-lws-10',
        'compose-model-replica-steady-native-10',
        'compose-model-cache-first-compose-realistic-10',
        'compose-model-cache-steady-realistic-10',
        'compose-model-cache-hydration-steady-huggingface-realistic-10',
        'compose-model-replica-steady-native-realistic-10',
      ]),
    );
    for (const r of report.results) {
      for (const figure of [r.requestBytes, r.p50Ms, r.p99Ms, r.floorP50Ms, r.ratioToFloor, r.callsPerSecond, r.peakRssMb, r.startMs]) {
        expect(Number.isFinite(figure) && figure > 0, `${r.id}: ${figure}`).toBe(true);
      }
      // The share of the request the function decoded (issue 17): a fraction, and below all of it where the request is as Crossplane sends it.
      expect(r.decodedShare > 0 && r.decodedShare <= 1, `${r.id}: decoded ${r.decodedShare}`).toBe(true);
      if (r.id.includes('realistic')) expect(r.decodedShare, r.id).toBeLessThan(0.9);
    }
  });

  it('counts two calls per reconcile for each function', () => {
    expect(report.callsPerReconcile).toEqual({ 'compose-model-cache': 2, 'compose-model-cache-hydration': 2, 'compose-model-replica': 2 });
  });

  it('prints the table and a verdict line per target it can judge', () => {
    expect(markdown).toContain('| function | scenario | N |');
    expect(markdown).toMatch(/^(PASS|FAIL) {2}compose-model-cache needs 2 calls per reconcile/m);
    expect(report.verdicts.length).toBeGreaterThan(0);
  });

  it("writes BENCHMARKS.md's headline: each function's realistic call at N = 10, and how the targets fared", () => {
    expect(summary).toMatch(/^Machine: /);
    for (const call of [
      'compose-model-cache | a ModelCache at rest | 10 |',
      'compose-model-cache | a ModelCacheShard at rest | 10 |',
      'compose-model-cache-hydration | one cluster at rest (HuggingFace) | 10 |',
      'compose-model-replica | a replica at rest | 10 |',
    ])
      expect(summary).toContain(`| ${call}`);
    expect(summary).toMatch(/^Targets: \d+ of \d+ pass\.$/m);
  });

  it('draws the chart: a panel per function, each scenario with its floor', () => {
    expect(svg.startsWith('<svg')).toBe(true);
    for (const name of ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'])
      expect(svg).toContain(`>${name}</text>`);
    // Two lines per scenario: the function's and the floor's.
    expect(svg.match(/<polyline/g)?.length).toBe(2 * new Set(report.results.map((r) => `${r.function} ${r.id.replace(/-\d+$/, '')}`)).size);
  });
});
