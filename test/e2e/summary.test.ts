// The closing line of `make e2e` (scripts/test-summary.mjs): with two lanes
// (test/e2e/run.sh) it reads both reports and makes one line of them, each
// failure of either named above it, as CI reads the tail of a run.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'test-summary-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function report(name: string, counts: { passed: number; failed: number; pending: number }, failed: string[] = []): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      numPassedTests: counts.passed,
      numFailedTests: counts.failed,
      numPendingTests: counts.pending,
      numTodoTests: 0,
      testResults: [
        {
          name: join(REPO_ROOT, 'test', 'e2e', `${name}.e2e.ts`),
          status: failed.length ? 'failed' : 'passed',
          assertionResults: failed.map((title) => ({ status: 'failed', fullName: title, duration: 2_000, failureMessages: ['boom'] })),
        },
      ],
    }),
  );
  return file;
}

const summary = (...files: string[]): string[] => {
  const run = spawnSync('node', [join(REPO_ROOT, 'scripts', 'test-summary.mjs'), ...files], { cwd: REPO_ROOT, encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout.trim().split('\n');
};

describe('the e2e summary of two lanes', () => {
  it('sums both reports into one closing line and names each failure', () => {
    const lines = summary(
      report('first', { passed: 30, failed: 0, pending: 1 }),
      report('beside', { passed: 11, failed: 1, pending: 0 }, ['the fleet benchmark at N = 3 converges']),
    );
    expect(lines.at(-1)).toBe('Tests: 41 passed, 1 failed, 1 skipped');
    expect(lines[0]).toBe('FAILED test/e2e/beside.e2e.ts > the fleet benchmark at N = 3 converges (2 s)');
  });

  it('reads one report as before', () => {
    expect(summary(report('only', { passed: 7, failed: 0, pending: 0 }))).toEqual(['Tests: 7 passed, 0 failed, 0 skipped']);
  });
});
