// `make bench`: each function against the floor, 1 to 1,000 clusters.
//
// For every N, each function server and a floor server are started fresh (the
// time to listening is measured from spawn), each scenario's request is
// encoded once and sent, byte for byte the same, to both, call by call in
// turn from a client in a separate process; then 8 concurrent clients
// measure throughput. Results go to .bench/results.json, a Markdown table of
// every scenario (results.md) and the headline (headline.md); with --write,
// BENCHMARKS.md gets the headline and docs/benchmark-run.md the whole run
// (bench/report.ts).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { decodeStats, encodeResponse } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { runtimes, type Runtime } from './runtime.js';
import { chart } from './chart.js';
import { callsPerReconcile } from './loop.js';
import { HANDLERS, decodeAsServed } from '../test/support/handlers.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { fullRun, headline, replaceSection } from './report.js';
import { TARGETS, judge, type Measured } from './targets.js';

interface Options {
  sizes: number[];
  /** Wall time to spend sampling latency per server per scenario. */
  latencyBudgetMs: number;
  minCalls: number;
  maxCalls: number;
  throughputSeconds: number;
  clients: number;
  write: boolean;
  out: string;
  /** Only these functions (all when empty). */
  only: string[];
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    sizes: [1, 10, 100, 1000],
    latencyBudgetMs: 6000,
    minCalls: 20,
    maxCalls: 1500,
    throughputSeconds: 1.5,
    clients: 8,
    write: false,
    out: '.bench',
    only: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1] ?? '';
    switch (flag) {
      case '--sizes':
        options.sizes = value.split(',').map(Number);
        i++;
        break;
      case '--smoke':
        Object.assign(options, { sizes: [10], latencyBudgetMs: 50, minCalls: 3, maxCalls: 5, throughputSeconds: 0.2 });
        break;
      case '--only':
        options.only = value.split(',');
        i++;
        break;
      case '--write':
        options.write = true;
        break;
      case '--out':
        options.out = value;
        i++;
        break;
      default:
        throw new Error(`unknown flag ${flag}`);
    }
  }
  return options;
}

const ROOT = new URL('../../', import.meta.url).pathname;
const SERVERS: Record<string, string> = {
  floor: `${ROOT}bench/dist/floor.js`,
  'compose-model-cache': `${ROOT}functions/compose-model-cache/dist/main.js`,
  'compose-model-cache-hydration': `${ROOT}functions/compose-model-cache-hydration/dist/main.js`,
  'compose-model-replica': `${ROOT}functions/compose-model-replica/dist/main.js`,
};
const CLIENT = `${ROOT}bench/dist/client.js`;

interface Server {
  process: ChildProcess;
  address: string;
  startMs: number;
}

/**
 * Start a server as a function's image runs it (its Node flags and glibc
 * tunables), then with any flags in BENCH_NODE_FLAGS: flags to try on every
 * server alike, later ones winning.
 */
function startServer(entry: string, runtime: Runtime): Promise<Server> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const flags = [...runtime.nodeFlags, ...(process.env['BENCH_NODE_FLAGS'] ?? '').split(' ').filter(Boolean)];
    const env = runtime.glibcTunables === '' ? process.env : { ...process.env, GLIBC_TUNABLES: runtime.glibcTunables };
    const child = spawn(process.execPath, [...flags, entry, '--insecure', '--address', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    });
    let buffered = '';
    const timer = setTimeout(() => {
      reject(new Error(`${entry} did not listen in 10 s`));
    }, 10_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('"listening"')) continue;
        const entry = JSON.parse(line) as { port: number };
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume(); // keep draining request logs so the pipe never blocks the server
        resolve({ process: child, address: `127.0.0.1:${entry.port}`, startMs: Number(process.hrtime.bigint() - started) / 1e6 });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before listening`));
    });
  });
}

async function stopServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.process.removeAllListeners('exit');
    server.process.on('exit', () => {
      resolve();
    });
    server.process.kill('SIGTERM');
  });
}

/** Resident and peak resident (since the last reset) memory of a process, in MB, from /proc. */
function memory(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/** Start a new peak: Linux resets VmHWM to the current RSS on "5" written to clear_refs. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Run the load generator and wait for its one JSON line. Asynchronously: the
 * servers' request logs reach this process through pipes that only its event
 * loop drains, and a server whose pipe is full queues every further log line
 * in its own memory. Blocked in spawnSync, the runner once made each server
 * hold a whole scenario's log lines (up to 20 MB of peak RSS that a container,
 * whose runtime reads its logs as they come, never sees).
 */
function runClient(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`client failed: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The share of a request's bytes the function decodes, on demand as its server does: measured in process. */
function decodedShare(scenario: Scenario, bytes: Uint8Array): number {
  const req = decodeAsServed(scenario.fn, bytes);
  encodeResponse(HANDLERS[scenario.fn](req));
  const stats = decodeStats(req)!;
  return stats.decodedBytes / stats.requestBytes;
}

/**
 * Calls one at a time: latency against the floor and the peak RSS they
 * reach. Run for every scenario before any throughput run, so the peak is
 * that of calls one at a time, not what eight concurrent clients left
 * resident before it (Linux can only reset the peak to the current RSS).
 */
async function measureSequential(scenario: Scenario, fn: Server, floor: Server, options: Options): Promise<Measured> {
  const bytes = RunFunctionRequest.encode(scenario.request).finish();
  const file = `${options.out}/requests/${scenario.id}.bin`;
  writeFileSync(file, bytes);

  // One probe call each to size the sample: the same wall-time budget whatever N is.
  const probe = await runClient([fn.address, file, 'latency', '1', '3']);
  const probeMs = Math.max(...(probe['samples'] as number[]));
  const calls = Math.round(Math.min(options.maxCalls, Math.max(options.minCalls, options.latencyBudgetMs / probeMs)));
  // Warm-up sized like the sample: small requests need hundreds of calls before the JIT settles.
  const warmup = Math.round(Math.min(200, Math.max(2, calls / 8)));
  resetPeak(fn.process.pid!);
  resetPeak(floor.process.pid!);
  // One client process, ten calls to each server in turn: function, floor, function, floor, …
  const compared = await runClient([`${fn.address},${floor.address}`, file, 'compare', String(warmup), String(calls)]);
  const [fnSamples, floorSamples] = compared['samples'] as [number[], number[]];
  const responseBytes = compared['responseBytes'] as number;
  fnSamples.sort((a, b) => a - b);
  floorSamples.sort((a, b) => a - b);
  const sequential = memory(fn.process.pid!);
  const floorSequential = memory(floor.process.pid!);
  const p50 = percentile(fnSamples, 50);
  const floorP50 = percentile(floorSamples, 50);
  return {
    id: scenario.id,
    function: scenario.fn,
    scenario: scenario.label,
    n: scenario.n,
    requestBytes: bytes.length,
    responseBytes,
    calls: fnSamples.length,
    p50Ms: p50,
    p99Ms: percentile(fnSamples, 99),
    floorP50Ms: floorP50,
    floorP99Ms: percentile(floorSamples, 99),
    ratioToFloor: p50 / floorP50,
    callsPerSecond: NaN,
    floorCallsPerSecond: NaN,
    rssMb: sequential.rssMb,
    peakRssMb: sequential.peakRssMb,
    peakRssConcurrentMb: NaN,
    floorPeakRssMb: floorSequential.peakRssMb,
    floorPeakRssConcurrentMb: NaN,
    startMs: fn.startMs,
    decodedShare: decodedShare(scenario, bytes),
  };
}

/** 8 concurrent clients on each server in turn: throughput and the peak RSS it reaches. */
async function measureThroughput(measured: Measured, fn: Server, floor: Server, options: Options): Promise<void> {
  const file = `${options.out}/requests/${measured.id}.bin`;
  resetPeak(fn.process.pid!);
  resetPeak(floor.process.pid!);
  const fnThroughput = await runClient([fn.address, file, 'throughput', String(options.clients), String(options.throughputSeconds)]);
  const concurrent = memory(fn.process.pid!);
  const floorThroughput = await runClient([floor.address, file, 'throughput', String(options.clients), String(options.throughputSeconds)]);
  const floorConcurrent = memory(floor.process.pid!);
  measured.callsPerSecond = fnThroughput['callsPerSecond'] as number;
  measured.floorCallsPerSecond = floorThroughput['callsPerSecond'] as number;
  measured.peakRssConcurrentMb = concurrent.peakRssMb;
  measured.floorPeakRssConcurrentMb = floorConcurrent.peakRssMb;
}

function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  mkdirSync(`${options.out}/requests`, { recursive: true });
  const began = performance.now();
  const results: Measured[] = [];
  const functions = [...new Set(SCENARIOS(1).map((s) => s.fn))].filter((fn) => options.only.length === 0 || options.only.includes(fn));

  for (const n of options.sizes) {
    const scenarios = SCENARIOS(n);
    for (const name of functions) {
      // The floor runs as the function does: the same runtime, so the gap is the function's work.
      const runtime = runtimes(name, ROOT);
      const fn = await startServer(SERVERS[name]!, runtime.fn);
      const floor = await startServer(SERVERS['floor']!, runtime.floor);
      const measured: Measured[] = [];
      for (const scenario of scenarios.filter((s) => s.fn === name)) {
        measured.push(await measureSequential(scenario, fn, floor, options));
      }
      for (const m of measured) {
        await measureThroughput(m, fn, floor, options);
        process.stderr.write(`  ${name} ${m.scenario} N=${n}: done\n`);
      }
      results.push(...measured);
      await stopServer(fn);
      await stopServer(floor);
    }
  }

  const loops = await callsPerReconcile(SERVERS);
  const verdicts = judge(results, loops);
  const seconds = (performance.now() - began) / 1000;
  const report = { machine: machine(), seconds, options, results, callsPerReconcile: loops, verdicts, targets: TARGETS };
  writeFileSync(`${options.out}/results.json`, `${JSON.stringify(report, null, 2)}\n`);

  const markdown = fullRun(results, loops, verdicts, machine(), seconds);
  writeFileSync(`${options.out}/results.md`, `${markdown}\n`);
  const summary = headline(results, verdicts, machine());
  writeFileSync(`${options.out}/headline.md`, `${summary}\n`);
  const svg = chart(results);
  writeFileSync(`${options.out}/chart.svg`, svg);
  process.stdout.write(`${markdown}\n`);
  if (options.write) {
    // BENCHMARKS.md shows the headline; docs/benchmark-run.md keeps the whole run. Both are
    // checked for their section before either is written.
    const pages = (
      [
        ['BENCHMARKS.md', summary],
        ['docs/benchmark-run.md', markdown],
      ] as const
    ).map(([page, content]) => [page, replaceSection(readFileSync(`${ROOT}${page}`, 'utf8'), 'results', content, page)] as const);
    for (const [page, doc] of pages) writeFileSync(`${ROOT}${page}`, doc);
    writeFileSync(`${ROOT}BENCHMARKS.svg`, svg);
  }
}

await main();
