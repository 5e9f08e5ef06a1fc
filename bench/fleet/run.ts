// `make bench-fleet`: the fleet benchmark on the live `make up` plane
// (bench/fleet/run.sh starts it on production clocks with per-cluster
// workload namespaces, runs this, stops it). For each N of FLEET_N (default
// "10 100") one HuggingFace ModelCache on N simulated clusters: apply →
// Ready, at rest, delete. Writes bench/fleet/results/fleet-<N>.json and
// results.json, and the tables in docs/fleet-benchmark.md.
//
//   FLEET_N="10 100 300 1000"   the fleet sizes, in order
//   FLEET_BUDGET_MINUTES=25     start no further N once this much plane time is spent
//   FLEET_REST_SECONDS=180      the at-rest window (after FLEET_SETTLE_SECONDS=30)
//   FLEET_CONVERGE_MINUTES=12   give up on one N's apply → Ready after this long

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { openPlane, runFleet, type FleetResult } from './fleet.js';
import { renderPage, type FleetRun } from './report.js';

const repo = process.cwd();
const stateDir = process.env['MODELPLANE_UP_DIR'] ?? join(repo, '_output', 'up');
const sizes = (process.env['FLEET_N'] ?? '10 100')
  .split(/[\s,]+/)
  .filter(Boolean)
  .map(Number);
if (sizes.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`FLEET_N must list positive integers (got ${process.env['FLEET_N']})`);
const budgetMs = Number(process.env['FLEET_BUDGET_MINUTES'] ?? '25') * 60_000;
const restSeconds = Number(process.env['FLEET_REST_SECONDS'] ?? '180');
const settleSeconds = Number(process.env['FLEET_SETTLE_SECONDS'] ?? '30');
const convergeMinutes = Number(process.env['FLEET_CONVERGE_MINUTES'] ?? '12');
const resultsDir = join(repo, 'bench', 'fleet', 'results');
const page = join(repo, 'docs', 'fleet-benchmark.md');

const started = Date.now();
const log = (line: string): void => {
  console.log(`[bench-fleet ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
};

const plane = openPlane(stateDir);
if (plane.info.clocks !== 'production') log(`warning: the plane runs on ${plane.info.clocks} clocks, not production`);
mkdirSync(resultsDir, { recursive: true });
const results: FleetResult[] = [];
const skipped: number[] = [];
try {
  for (const n of sizes) {
    if (Date.now() - started > budgetMs) {
      skipped.push(n);
      log(`N = ${n} skipped: the plane-time budget (${budgetMs / 60_000} min) is spent`);
      continue;
    }
    log(`N = ${n}`);
    const result = await runFleet(plane, {
      n,
      namespace: 'fleet-bench',
      cache: `fleet-n${n}`,
      restSeconds,
      settleSeconds,
      convergeTimeoutSeconds: convergeMinutes * 60,
      goneTimeoutSeconds: 600,
      pollMs: 5000,
      jobs: 'stand-in',
      log,
    });
    results.push(result);
    writeFileSync(join(resultsDir, `fleet-${n}.json`), `${JSON.stringify(result, null, 2)}\n`);
    log(
      `N = ${n}: ${JSON.stringify({ hydrations: result.applyToHydrations, objects: result.applyToObjects, lastJobToReady: result.lastJobToReady, ready: result.applyToReady, gone: result.delete.seconds })}`,
    );
  }
} finally {
  plane.close();
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
const run: FleetRun = {
  date: new Date().toISOString(),
  machine,
  plane: plane.info,
  sizes,
  skipped,
  restSeconds,
  settleSeconds,
  minutes: Math.round((Date.now() - started) / 6000) / 10,
  results,
};
writeFileSync(join(resultsDir, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
writeFileSync(page, renderPage(readFileSync(page, 'utf8'), run));
log(`wrote ${resultsDir}/results.json and the tables in docs/fleet-benchmark.md`);
