// The targets the benchmark holds the functions to (issue 7), and the verdicts.

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
}

export interface Verdict {
  target: string;
  pass: boolean;
  detail: string;
}

export const TARGETS = {
  /** p50 at N = 1,000 over the floor's p50 on the same request. */
  ratioAt1000: { 'compose-model-cache': 1.5, 'compose-model-cache-hydration': 1.3, 'compose-model-replica': 1.3 } as Record<string, number>,
  /** compose-model-cache p50 at N = 1,000 over p50 at N = 10: linear growth is at most 100×, with headroom. */
  growth1000over10: 120,
  peakRssMb: 150,
  startMs: 500,
  callsPerReconcile: 2,
};

export function judge(results: Measured[], loops: Record<string, number>): Verdict[] {
  const verdicts: Verdict[] = [];
  const fmt = (v: number) => v.toFixed(2);
  for (const r of results.filter((m) => m.n === 1000)) {
    const limit = TARGETS.ratioAt1000[r.function];
    if (limit === undefined) continue;
    // compose-model-cache's target is on its steady state; its first compose is reported, not judged.
    if (r.function === 'compose-model-cache' && !r.scenario.startsWith('steady')) continue;
    verdicts.push({
      target: `${r.function} ${r.scenario} p50 at N=1000 within ${limit}× the floor`,
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
        target: `${name} peak RSS at N=1000 below ${TARGETS.peakRssMb} MB`,
        pass: peak < TARGETS.peakRssMb,
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
