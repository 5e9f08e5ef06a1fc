// `make bench-fleet-page`: rewrite the generated part of docs/fleet-benchmark.md
// from the committed run (bench/fleet/results/results.json), with no plane.
// For a change to the tables or charts (report.ts) that should show the last
// run's figures; `make bench-fleet` does the same at the end of a run.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderPage, type FleetRun } from './report.js';

const repo = process.cwd();
const run = JSON.parse(readFileSync(join(repo, 'bench', 'fleet', 'results', 'results.json'), 'utf8')) as FleetRun;
const page = join(repo, 'docs', 'fleet-benchmark.md');
writeFileSync(page, renderPage(readFileSync(page, 'utf8'), run));
console.log(`rewrote the tables and charts of docs/fleet-benchmark.md from the run of ${run.date}`);
