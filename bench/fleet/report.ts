// The fleet benchmark's tables (pure): what docs/fleet-benchmark.md shows
// between its markers, from the results bench/fleet/run.ts writes.

import type { FleetResult, PlaneInfo } from './fleet.js';

/** What bench/fleet/run.ts writes to bench/fleet/results/results.json. */
export interface FleetRun {
  date: string;
  machine: string;
  plane: PlaneInfo;
  sizes: number[];
  skipped: number[];
  restSeconds: number;
  settleSeconds: number;
  minutes: number;
  results: FleetResult[];
}

export const BEGIN = '<!-- fleet-benchmark:begin (bench/fleet/run.ts writes this part) -->';
export const END = '<!-- fleet-benchmark:end -->';

const s = (value: number | undefined): string => (value === undefined ? '—' : `${value} s`);
const kb = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} kB`;
const num = (value: number | undefined): string => (value === undefined ? '—' : String(value));

/** The breaker in one cell: opened/closed counts (Crossplane's metrics), or what the log said. */
export function breakerCell(circuit: Record<string, number>): string {
  const sum = (match: (key: string) => boolean): number =>
    Object.entries(circuit)
      .filter(([key]) => match(key))
      .reduce((total, [, value]) => total + value, 0);
  const opens = sum((key) => key.includes('open') && !key.includes('events'));
  const closes = sum((key) => key.includes('close') && !key.includes('events'));
  const dropped = sum((key) => key.includes('events') && /dropped/i.test(key));
  if (Object.keys(circuit).length === 0) return 'closed (no change)';
  return `opened ${opens}×, closed ${closes}×${dropped ? `, ${dropped} events dropped` : ''}`;
}

/** CPU busy on the machine outside the plane's processes (other work sharing the cores), per minute. */
export function outsidePlane(cpu: Record<string, number>): number | undefined {
  const machine = cpu['machine (all processes)'];
  if (machine === undefined) return undefined;
  const plane = Object.entries(cpu)
    .filter(([component]) => component !== 'machine (all processes)')
    .reduce((sum, [, value]) => sum + value, 0);
  return Math.round((machine - plane) * 10) / 10;
}

const functionSum = (cpu: Record<string, number>): number =>
  Math.round(
    Object.entries(cpu)
      .filter(([component]) => component.startsWith('compose-model-'))
      .reduce((sum, [, value]) => sum + value, 0) * 100,
  ) / 100;

export function timingsTable(results: readonly FleetResult[]): string {
  const rows = results.map((r) =>
    [
      r.n,
      r.shards,
      s(r.applyToHydrations),
      s(r.applyToObjects),
      s(r.applyToLastJob),
      s(r.lastJobToReady),
      s(r.applyToReady),
      r.ready
        ? `Ready, ${String(r.summary['ready'])}`
        : `not Ready (${typeof r.summary['ready'] === 'string' ? r.summary['ready'] : 'no summary'})`,
      r.delete.seconds === undefined
        ? `not gone: ${r.delete.left ?? '?'}`
        : `${r.delete.seconds} s${r.delete.reappeared ? ' (then reappeared)' : ''}`,
    ].join(' | '),
  );
  return [
    '| N | shards | apply → all hydrations | → all Objects | → last Job completed | last Job → ModelCache Ready | apply → Ready | ModelCache | delete → all gone |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

export function restTable(results: readonly FleetResult[]): string {
  const rows = results.map((r) => {
    const rest = r.rest;
    if (!rest) return [r.n, '—', '—', '—', '—', '—', '—', '—', '—', '—', '—', '—'].join(' | ');
    const cpu = rest.cpuSecondsPerMinute;
    const top = rest.writes
      .slice(0, 3)
      .map((w) => `${w.what} ${w.perMinute}`)
      .join('; ');
    const written = rest.objectsWritten
      ? Object.entries(rest.objectsWritten)
          .map(([kind, c]) => `${kind} ${c.written}${c.created || c.deleted ? ` (+${c.created} −${c.deleted})` : ''}`)
          .join(', ')
      : '—';
    return [
      r.n,
      `${rest.controlPlaneWritesPerMinute}${top ? ` (${top})` : ''}`,
      written,
      rest.etcdMutationsPerMinute === undefined ? '—' : String(rest.etcdMutationsPerMinute),
      num(cpu['apiserver (control plane)']),
      num(cpu['apiservers (3 workload)']),
      num(cpu['etcd']),
      num(cpu['crossplane']),
      num(cpu['provider-kubernetes']),
      `${functionSum(cpu)} (${['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'].map((f) => num(cpu[f])).join(' / ')})`,
      breakerCell(rest.circuit),
      num(outsidePlane(cpu)),
    ].join(' | ');
  });
  return [
    '| N | control-plane write requests/min (top 3) | objects really written in the window (resourceVersion moved) | etcd puts+deletes/min (whole plane) | apiserver CPU-s/min | 3 workload apiservers | etcd | Crossplane | provider | functions (cache / hydration / replica) | breaker at rest | others on the machine |',
    '| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

export function sizesTable(results: readonly FleetResult[]): string {
  const rows = results.map((r) => {
    const largest = Object.entries(r.largest).map(([kind, l]) => `${kind} ${kb(l.bytes)}`);
    const responses = Object.entries(r.functions).filter(([, f]) => f.calls > 0);
    const response = responses.reduce((max, [, f]) => Math.max(max, f.maxResponseBytes), 0);
    const request = responses.reduce((max, [, f]) => Math.max(max, f.maxRequestBytes), 0);
    const calls = responses.map(([name, f]) => `${name.replace('compose-model-', '')} ${f.calls}`).join(', ');
    return [r.n, largest.join(', '), kb(response), kb(request), calls, breakerCell(r.converge.circuit)].join(' | ');
  });
  return [
    '| N | largest object of each kind (JSON as served) | largest function response | largest request | RunFunction calls | breaker, apply → Ready |',
    '| ---: | --- | ---: | ---: | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

export function convergeCpuTable(results: readonly FleetResult[]): string {
  const rows = results.map((r) => {
    const cpu = r.converge.cpuSecondsPerMinute;
    return [
      r.n,
      num(cpu['apiserver (control plane)']),
      num(cpu['apiservers (3 workload)']),
      num(cpu['etcd']),
      num(cpu['crossplane']),
      num(cpu['provider-kubernetes']),
      functionSum(cpu),
      num(outsidePlane(cpu)),
      (r.converge.writes ?? [])
        .slice(0, 3)
        .map((w) => `${w.what} ${w.perMinute}`)
        .join('; ') || '—',
      Object.entries(r.converge.triggers ?? {})
        .slice(0, 3)
        .map(([what, count]) => `${what} ${count}×`)
        .join('; ') || '—',
      r.converge.watches === undefined
        ? '—'
        : Object.entries(r.converge.watches)
            .map(([controller, count]) => `${controller} ${count}`)
            .join(', ') || 'none (running from an earlier N)',
    ].join(' | ');
  });
  return [
    '| N | apiserver | 3 workload apiservers | etcd | Crossplane | provider | functions | others on the machine | control-plane write requests/min (top 3) | breakers opened by (XR ← source kind) | composed-resource watches started (one kind each: more is each event counted that many times) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/**
 * The run as two Mermaid charts (GitHub draws them): how long the fan-out
 * takes to exist, and what it costs the control plane's API server beside our
 * functions, per N. Only the N that reached each figure are drawn. BENCHMARKS.md
 * carries the same text (test/bench/fleet.test.ts holds it to results.json).
 */
export function charts(results: readonly FleetResult[]): string {
  const timed = results.flatMap((r) =>
    r.applyToHydrations !== undefined && r.applyToObjects !== undefined
      ? [{ n: r.n, bar: r.applyToHydrations, line: r.applyToObjects }]
      : [],
  );
  const cpu = results.flatMap((r) => {
    const apiserver = r.converge.cpuSecondsPerMinute['apiserver (control plane)'];
    return apiserver === undefined ? [] : [{ n: r.n, bar: apiserver, line: functionSum(r.converge.cpuSecondsPerMinute) }];
  });
  const chart = (title: string, yAxis: string, points: readonly { n: number; bar: number; line: number }[]): string[] => [
    '```mermaid',
    'xychart-beta',
    `    title "${title}"`,
    `    x-axis "clusters" [${points.map((p) => `"N = ${p.n}"`).join(', ')}]`,
    `    y-axis "${yAxis}"`,
    `    bar [${points.map((p) => p.bar).join(', ')}]`,
    `    line [${points.map((p) => p.line).join(', ')}]`,
    '```',
  ];
  return [
    ...chart('Seconds from apply: every hydration (bars), every Object (line)', 'seconds', timed),
    '',
    ...chart(
      'CPU-seconds a minute while converging: control-plane API server (bars), our functions (line)',
      'CPU-seconds a minute (2 cores: 120)',
      cpu,
    ),
  ].join('\n');
}

/** The generated part of the page. */
export function generated(results: readonly FleetResult[], header: string): string {
  return [
    BEGIN,
    '',
    header,
    '',
    charts(results),
    '',
    '**Timings** (production clocks; wall-clock seconds from applying the ModelCache):',
    '',
    timingsTable(results),
    '',
    '**At rest** (after Ready and 30 s to settle; writes per minute from the control plane API server’s `apiserver_request_total`, CPU-seconds per minute from `/proc/<pid>/stat`):',
    '',
    restTable(results),
    '',
    '**While converging** (apply → Ready; CPU-seconds per minute, write requests per minute, and what the breakers that opened heard most):',
    '',
    convergeCpuTable(results),
    '',
    '**Sizes and the breaker**:',
    '',
    sizesTable(results),
    '',
    END,
  ].join('\n');
}

/** The run's one-line header: when, where, on which clocks. */
export function runHeader(run: FleetRun): string {
  const { plane } = run;
  return (
    `Run ${run.date.slice(0, 16).replace('T', ' ')} UTC on ${run.machine}; clocks ${plane.clocks} ` +
    `(poll ${plane.poll}; Crossplane flags: ${plane.crossplaneFlags || 'none, its defaults'}), ` +
    `workload namespaces ${plane.workloadNamespace}; ${run.minutes} min of plane time` +
    (run.skipped.length ? `; not run (budget spent): N = ${run.skipped.join(', ')}` : '') +
    '. Raw figures: `bench/fleet/results/`.'
  );
}

/** docs/fleet-benchmark.md with the run's tables and charts in place of the last ones. */
export const renderPage = (page: string, run: FleetRun): string => replaceGenerated(page, generated(run.results, runHeader(run)));

/** The page with its generated part replaced (or appended when the markers are missing). */
export function replaceGenerated(page: string, part: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin === -1 || end === -1 || end < begin) return `${page.trimEnd()}\n\n${part}\n`;
  return page.slice(0, begin) + part + page.slice(end + END.length);
}
