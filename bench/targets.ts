// The targets the benchmark holds the functions to (issues 7 and 17), and the verdicts.

export interface Measured {
  id: string;
  function: string;
  scenario: string;
  n: number;
  requestBytes: number;
  responseBytes: number;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  floorP50Ms: number;
  floorP99Ms: number;
  ratioToFloor: number;
  callsPerSecond: number;
  floorCallsPerSecond: number;
  /** RSS after the one-at-a-time calls. */
  rssMb: number;
  /** Peak RSS while the scenario's calls come one at a time (the latency rounds). */
  peakRssMb: number;
  /** Peak RSS under 8 concurrent clients (the throughput run). */
  peakRssConcurrentMb: number;
  floorPeakRssMb: number;
  floorPeakRssConcurrentMb: number;
  startMs: number;
  /** Share of the request's bytes the function decoded (decoding on demand), measured in process on the same request. */
  decodedShare: number;
}

export interface Verdict {
  target: string;
  pass: boolean;
  detail: string;
}

export const TARGETS = {
  /** compose-model-cache steady state at N = 1,000 on the request as Crossplane sends it: p50 over the full-decode floor's. */
  cacheSteadyRealistic: 0.5,
  /** Any other scenario whose request is over `bigRequestBytes`: p50 over the floor's. */
  bigRequest: 0.8,
  bigRequestBytes: 100_000,
  /** Smaller requests, where the floor is mostly gRPC's own overhead. */
  smallRequest: 1.3,
  /** The lean scenarios at N = 1,000 (issue 7's targets, kept so runs compare over time). */
  leanRatioAt1000: { 'compose-model-cache': 1.5, 'compose-model-cache-hydration': 1.3, 'compose-model-replica': 1.3 } as Record<
    string,
    number
  >,
  /** compose-model-cache p50 at N = 1,000 over p50 at N = 10: linear growth is at most 100×, with headroom. */
  growth1000over10: 120,
  peakRssMb: 100,
  startMs: 500,
  callsPerReconcile: 2,
};

export function judge(results: Measured[], loops: Record<string, number>): Verdict[] {
  const verdicts: Verdict[] = [];
  const fmt = (v: number) => v.toFixed(2);
  const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`;
  const headline = (r: Measured) => r.function === 'compose-model-cache' && r.scenario === 'steady-realistic' && r.n === 1000;
  for (const r of results.filter(headline)) {
    verdicts.push({
      target: `compose-model-cache steady-realistic p50 at N=1000 at most ${TARGETS.cacheSteadyRealistic}× the full-decode floor`,
      pass: r.ratioToFloor <= TARGETS.cacheSteadyRealistic,
      detail: `${fmt(r.p50Ms)} ms vs floor ${fmt(r.floorP50Ms)} ms = ${fmt(r.ratioToFloor)}× (request ${kb(r.requestBytes)}, ${(r.decodedShare * 100).toFixed(0)}% of it decoded)`,
    });
  }
  // The other realistic scenarios at every N: one line per group, naming the worst. Issue 17's ratios are
  // about requests as Crossplane sends them; a lean request is mostly what the function reads, so
  // decoding on demand saves little there, and the lean scenarios keep issue 7's targets (below).
  const realistic = (r: Measured) => r.scenario.endsWith('realistic') && !headline(r);
  const groups: [string, number, Measured[]][] = [
    [`every other realistic scenario with a request over ${kb(TARGETS.bigRequestBytes)}`, TARGETS.bigRequest, []],
    [`every realistic scenario with a request up to ${kb(TARGETS.bigRequestBytes)}`, TARGETS.smallRequest, []],
  ];
  for (const r of results.filter(realistic)) groups[r.requestBytes > TARGETS.bigRequestBytes ? 0 : 1]![2].push(r);
  for (const [label, limit, rows] of groups) {
    if (rows.length === 0) continue;
    const over = rows.filter((r) => r.ratioToFloor > limit).sort((a, b) => b.ratioToFloor - a.ratioToFloor);
    const worst = [...rows].sort((a, b) => b.ratioToFloor - a.ratioToFloor)[0]!;
    verdicts.push({
      target: `${label}: p50 at most ${limit}× the floor`,
      pass: over.length === 0,
      detail:
        over.length === 0
          ? `${rows.length} measured, the highest ${worst.function} ${worst.scenario} N=${worst.n} at ${fmt(worst.ratioToFloor)}×`
          : `${over.length} of ${rows.length} above: ${over.map((r) => `${r.function} ${r.scenario} N=${r.n} ${fmt(r.ratioToFloor)}×`).join(', ')}`,
    });
  }
  for (const r of results.filter((m) => m.n === 1000 && !m.scenario.endsWith('realistic'))) {
    const limit = TARGETS.leanRatioAt1000[r.function];
    if (limit === undefined) continue;
    // compose-model-cache's target is on its steady state; its first compose is reported, not judged.
    if (r.function === 'compose-model-cache' && !r.scenario.startsWith('steady')) continue;
    verdicts.push({
      target: `${r.function} ${r.scenario} (lean) p50 at N=1000 within ${limit}× the floor`,
      pass: r.ratioToFloor <= limit,
      detail: `${fmt(r.p50Ms)} ms vs floor ${fmt(r.floorP50Ms)} ms = ${fmt(r.ratioToFloor)}×`,
    });
  }
  for (const r of results.filter((m) => m.function === 'compose-model-cache' && m.n === 1000)) {
    const at10 = results.find((m) => m.id === r.id.replace(/-1000$/, '-10'));
    if (!at10) continue;
    const growth = r.p50Ms / at10.p50Ms;
    verdicts.push({
      target: `compose-model-cache ${r.scenario} p50 at N=1000 at most ${TARGETS.growth1000over10}× p50 at N=10`,
      pass: growth <= TARGETS.growth1000over10,
      detail: `${fmt(r.p50Ms)} ms / ${fmt(at10.p50Ms)} ms = ${growth.toFixed(1)}×`,
    });
  }
  const byFunction = new Map<string, Measured[]>();
  for (const r of results) byFunction.set(r.function, [...(byFunction.get(r.function) ?? []), r]);
  for (const [name, rows] of byFunction) {
    const at1000 = rows.filter((r) => r.n === 1000);
    if (at1000.length > 0) {
      // Judged on calls one at a time: what a reconcile costs. Under 8 concurrent clients every server
      // also holds 8 requests' bytes in gRPC's buffers; the floor's figure beside it shows how much.
      const peak = Math.max(...at1000.map((r) => r.peakRssMb));
      const concurrent = Math.max(...at1000.map((r) => r.peakRssConcurrentMb));
      const floorConcurrent = Math.max(...at1000.map((r) => r.floorPeakRssConcurrentMb));
      verdicts.push({
        target: `${name} peak RSS at N=1000 at most ${TARGETS.peakRssMb} MB`,
        pass: peak <= TARGETS.peakRssMb,
        detail: `${peak.toFixed(0)} MB with calls one at a time (under 8 concurrent clients ${concurrent.toFixed(0)} MB; the floor's ${floorConcurrent.toFixed(0)} MB)`,
      });
    }
    const start = Math.max(...rows.map((r) => r.startMs));
    verdicts.push({
      target: `${name} start to listening below ${TARGETS.startMs} ms`,
      pass: start < TARGETS.startMs,
      detail: `slowest ${start.toFixed(0)} ms`,
    });
  }
  for (const [name, count] of Object.entries(loops)) {
    verdicts.push({
      target: `${name} needs ${TARGETS.callsPerReconcile} calls per reconcile`,
      pass: count === TARGETS.callsPerReconcile,
      detail: `${count} calls`,
    });
  }
  return verdicts;
}
