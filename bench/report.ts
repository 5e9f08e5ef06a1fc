// What `make bench` writes: the headline that BENCHMARKS.md shows (one row per
// function's call as Crossplane sends it, at N = 10, 100 and 1,000), the full
// run that docs/benchmark-run.md keeps (every scenario, the calls per
// reconcile, a verdict per target), and how each replaces its section of the
// page it lives in. Pure: no clock, no files.

import type { Measured, Verdict } from './targets.js';

/** The calls the headline shows, per function: the realistic ones, as Crossplane sends them. */
export const HEADLINE_SCENARIOS: Readonly<Record<string, readonly string[]>> = {
  'compose-model-cache': ['steady-realistic', 'shard-steady-realistic'],
  'compose-model-cache-hydration': ['steady-huggingface-realistic'],
  'compose-model-replica': ['steady-native-realistic'],
};

/** The fleet sizes the headline shows. */
export const HEADLINE_SIZES: readonly number[] = [10, 100, 1000];

/** What each headline call is, for a reader who has not read the scenarios. */
const CALL: Readonly<Record<string, string>> = {
  'steady-realistic': 'a ModelCache at rest',
  'shard-steady-realistic': 'a ModelCacheShard at rest',
  'steady-huggingface-realistic': 'one cluster at rest (HuggingFace)',
  'steady-native-realistic': 'a replica at rest',
};

const fmt = (v: number, d = 2): string => (Number.isFinite(v) ? v.toFixed(d) : '–');
export const size = (b: number): string => (b >= 1e6 ? `${(b / 1e6).toFixed(2)} MB` : b >= 1e3 ? `${(b / 1e3).toFixed(1)} kB` : `${b} B`);

/** Every scenario measured, one row each. */
export function table(results: readonly Measured[]): string {
  const head =
    '| function | scenario | N | request | decoded | p50 ms | p99 ms | floor p50 | ratio | calls/s (8 clients) | floor calls/s | RSS MB | peak RSS MB (1 / 8 clients) | floor peak RSS MB | start ms |';
  const rule = '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const rows = results.map(
    (r) =>
      `| ${r.function} | ${r.scenario} | ${r.n} | ${size(r.requestBytes)} | ${(r.decodedShare * 100).toFixed(0)}% | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${fmt(r.floorP50Ms)} | ${fmt(r.ratioToFloor)} | ${fmt(r.callsPerSecond, 0)} | ${fmt(r.floorCallsPerSecond, 0)} | ${fmt(r.rssMb, 0)} | ${fmt(r.peakRssMb, 0)} / ${fmt(r.peakRssConcurrentMb, 0)} | ${fmt(r.floorPeakRssMb, 0)} / ${fmt(r.floorPeakRssConcurrentMb, 0)} | ${fmt(r.startMs, 0)} |`,
  );
  return [head, rule, ...rows].join('\n');
}

export function verdictLines(verdicts: readonly Verdict[]): string {
  return verdicts.map((v) => `${v.pass ? 'PASS' : 'FAIL'}  ${v.target}: ${v.detail}`).join('\n');
}

/** The headline's rows: the headline calls at the headline sizes, by function, call, then N; what was not measured is left out. */
export function headlineRows(results: readonly Measured[]): Measured[] {
  const rows: Measured[] = [];
  for (const [fn, scenarios] of Object.entries(HEADLINE_SCENARIOS)) {
    for (const scenario of scenarios) {
      for (const n of HEADLINE_SIZES) {
        const found = results.find((r) => r.function === fn && r.scenario === scenario && r.n === n);
        if (found) rows.push(found);
      }
    }
  }
  return rows;
}

/** BENCHMARKS.md's section: the machine, one table of the headline calls, and how the targets fared. */
export function headline(results: readonly Measured[], verdicts: readonly Verdict[], machine: string): string {
  const rows = headlineRows(results).map(
    (r) =>
      `| ${r.function} | ${CALL[r.scenario] ?? r.scenario} | ${r.n} | ${size(r.requestBytes)} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${fmt(r.ratioToFloor)} | ${fmt(r.callsPerSecond, 0)} | ${fmt(r.peakRssMb, 0)} / ${fmt(r.peakRssConcurrentMb, 0)} |`,
  );
  const failed = verdicts.filter((v) => !v.pass);
  return [
    `Machine: ${machine}.`,
    '',
    '| function | call | N | request | p50 ms | p99 ms | × floor | calls/s (8 clients) | peak RSS MB (1 / 8 clients) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Targets: ${verdicts.length - failed.length} of ${verdicts.length} pass.`,
    ...(failed.length > 0 ? ['', '```', verdictLines(failed), '```'] : []),
  ].join('\n');
}

/** docs/benchmark-run.md's section: every scenario, the calls per reconcile, a verdict per target. */
export function fullRun(
  results: readonly Measured[],
  loops: Readonly<Record<string, number>>,
  verdicts: readonly Verdict[],
  machine: string,
  seconds: number,
): string {
  const loopLines = Object.entries(loops)
    .map(([name, count]) => `- ${name}: ${count} calls on a first reconcile`)
    .join('\n');
  return [
    `Machine: ${machine}. Run took ${seconds.toFixed(0)} s.`,
    '',
    table(results),
    '',
    'Calls per reconcile (RunFunction calls until the requirements stop changing):',
    '',
    loopLines,
    '',
    '```',
    verdictLines(verdicts),
    '```',
  ].join('\n');
}

/**
 * The document with what lies between `<!-- name -->` and `<!-- /name -->`
 * replaced by `content`. A document without both markers, in that order, is
 * refused: a page someone shortened must not silently lose what the run writes.
 */
export function replaceSection(doc: string, name: string, content: string, file = 'the document'): string {
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start) throw new Error(`${file} has no ${open} … ${close} section for make bench to rewrite`);
  return `${doc.slice(0, start)}${open}\n\n${content}\n\n${doc.slice(end)}`;
}
