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
  }[];
  callsPerReconcile: Record<string, number>;
  verdicts: { target: string; pass: boolean }[];
}

let report: Report;
let markdown: string;

beforeAll(() => {
  const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  execFileSync(process.execPath, ['bench/build.mjs'], { cwd: REPO_ROOT, stdio: 'pipe' });
  execFileSync(process.execPath, ['bench/dist/run.js', '--smoke', '--out', out], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 120_000 });
  report = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Report;
  markdown = readFileSync(join(out, 'results.md'), 'utf8');
}, 150_000);

describe('make bench, smoke', () => {
  it('measures every scenario of every function against the floor', () => {
    expect(report.results.map((r) => r.id).sort()).toEqual(
      [
        'compose-model-cache-first-compose-10',
        'compose-model-cache-steady-10',
        'compose-model-cache-hydration-steady-claim-10',
        'compose-model-cache-hydration-steady-huggingface-10',
        'compose-model-cache-hydration-steady-oci-10',
        'compose-model-replica-steady-lws-10',
        'compose-model-replica-steady-native-10',
      ].sort(),
    );
    for (const r of report.results) {
      for (const figure of [r.requestBytes, r.p50Ms, r.p99Ms, r.floorP50Ms, r.ratioToFloor, r.callsPerSecond, r.peakRssMb, r.startMs]) {
        expect(Number.isFinite(figure) && figure > 0, `${r.id}: ${figure}`).toBe(true);
      }
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
});
