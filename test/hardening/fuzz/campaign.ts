// One fuzz campaign: N seeded cases against one running server. Each case is
// sent over gRPC as raw bytes, timed, decoded and checked; the same bytes are
// also run in process (the server's codec and runSafely), to check what the
// handler built before the codec dropped anything, and that the server's
// bytes are exactly those (a function is a pure function of its request).

import { status, type ServiceError } from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, MAX_STRUCT_DEPTH, decodeRequest, encodeWithinLimit, jsonLogger, runSafely } from '#lib';
import {
  rawFunctionClient,
  requestBytes,
  responseFromBytes,
  type FunctionName,
  type RawFunctionClient,
  type RunningServer,
} from '#testing';
import {
  OVER_LIMIT,
  badLogLines,
  checkHandlerOutput,
  checkResponse,
  fatalMessages,
  leaks,
  logLeaks,
  responseTooBig,
  unknownFieldPassed,
  type Violation,
} from '../support/invariants.js';
import { caseSeed, prng } from '../support/prng.js';
import { HANDLERS } from '../../support/handlers.js';
import { seedsFor } from '../support/seeds.js';
import { EXAMPLE_TOKEN_B64, FUZZ_TOKEN_B64, mutate, requestDepth } from './mutate.js';
import { INPUT_SCHEMA, URL_SETTINGS, fullInput, objectLevels, refusals } from '../support/settings-input.js';

/** The issue's bound: every request is answered within a second. */
export const ANSWER_WITHIN_MS = 1000;

export interface CampaignOptions {
  name: FunctionName;
  server: RunningServer;
  cases: number;
  seed: number;
  /** Calls in flight at once (1: latency is the server's alone). */
  concurrency?: number;
  /** Progress, every so many cases (the soak prints it). */
  onProgress?: (done: number) => void;
}

export interface CaseViolation extends Violation {
  case: number;
  seed: string;
  mutations: string[];
}

export interface CampaignReport {
  name: FunctionName;
  seed: number;
  cases: number;
  /** Answered without a Fatal result. */
  valid: number;
  /** Answered with a Fatal result naming a field. */
  fatal: number;
  /** Refused with a gRPC error by design (a Struct deeper than the codec's bound, a message over 64 MiB). */
  refused: number;
  /** Answered with the Fatal result for a response over Crossplane's 4 MiB (counted among `fatal`). */
  overLimit: number;
  /** The first few of them: what made a response that large. */
  overLimitCases: { case: number; seed: string; mutations: string[] }[];
  /** Answered with ReportsAccepted False: a cluster-side report (or a child's status) refused by its checks. */
  reportsRefused: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** The slowest cases, slowest first: what a person looks at when the bound comes near. */
  slowest: { case: number; ms: number; seed: string; mutations: string[] }[];
  violations: CaseViolation[];
  /** The fields Fatal results named, most frequent first: what the mutations reached. */
  fatalFields: [field: string, count: number][];
  seeds: number;
  durationMs: number;
  /** Issue 29's classes: how many cases carried each, and how much of each class's space they reached. */
  classes: {
    credential: number;
    credentialCombinations: [reached: number, of: number];
    misspelled: number;
    misspelledLevels: [reached: number, of: number];
    token: number;
  };
}

/** Every setting × refusing check a credential can be planted under (the same set at the top level and in an override). */
const CREDENTIAL_COMBINATIONS = URL_SETTINGS.reduce((n, { kind }) => n + 2 * refusals(kind, 'x').length, 0);

/** What the runtime answers bytes it cannot decode (INVALID_ARGUMENT, naming why). */
const EXPECTED_REFUSAL = /^cannot decode the RunFunctionRequest: (struct|list) nested deeper than 100$/;
const SLOWEST_KEPT = 3;
const SLOW_RETRIES = 2;
/** How often the server's process and log are checked (and the log buffer emptied). */
const CHECK_EVERY = 50;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const { name, server, cases, seed } = options;
  // Every token Secret holds the fuzzer's token, so a leak of it, in any encoding, is findable (invariants.ts).
  const seeds = (await seedsFor(name)).map((seed) => ({
    name: seed.name,
    request: JSON.parse(JSON.stringify(seed.request).replaceAll(EXAMPLE_TOKEN_B64, FUZZ_TOKEN_B64)) as typeof seed.request,
  }));
  const handler = HANDLERS[name];
  const inProcessLines: string[] = [];
  const logger = jsonLogger({ function: name, debug: true, write: (line) => inProcessLines.push(line) });
  // Allowed to send past the server's bound, so the server's refusal is what is tested.
  const client: RawFunctionClient = rawFunctionClient(server.address, undefined, { 'grpc.max_send_message_length': 2 * MAX_MESSAGE_BYTES });
  const latencies: number[] = [];
  const slowest: CampaignReport['slowest'] = [];
  const violations: CaseViolation[] = [];
  const fatalFields = new Map<string, number>();
  const credentialCombinations = new Set<string>();
  const misspelledLevels = new Set<string>();
  const classes = { credential: 0, misspelled: 0, token: 0 };
  const schema = INPUT_SCHEMA[name];
  const levels = schema === undefined ? 1 : objectLevels(schema, fullInput(name)!).length;
  let valid = 0;
  let fatal = 0;
  let refused = 0;
  let overLimit = 0;
  const overLimitCases: CampaignReport['overLimitCases'] = [];
  let reportsRefused = 0;
  let exited = false;
  const started = performance.now();

  const checkServer = (index: number): void => {
    const lines = server.lines.splice(0, server.lines.length);
    for (const violation of [...badLogLines(lines), ...logLeaks(lines)])
      violations.push({ ...violation, case: index, seed: 'server log', mutations: [] });
    const stderr = server.stderr();
    if (stderr !== '' && !violations.some((v) => v.kind === 'stderr')) {
      violations.push({ kind: 'stderr', detail: stderr.slice(0, 400), case: index, seed: 'server', mutations: [] });
    }
    if (server.process.exitCode !== null || server.process.signalCode !== null) {
      exited = true;
      violations.push({
        kind: 'server-exited',
        detail: `code ${server.process.exitCode}, signal ${server.process.signalCode}`,
        case: index,
        seed: 'server',
        mutations: [],
      });
    }
  };

  const runCase = async (index: number): Promise<void> => {
    const rnd = prng(caseSeed(seed, name, index));
    const base = rnd.pick(seeds);
    const { request, mutations } = mutate(rnd, name, { ...base.request, meta: { tag: `fuzz-${index}` } });
    for (const mutation of mutations) {
      const credential = /^(.+) = a credential, refused for (.+)$/.exec(mutation);
      if (credential) {
        classes.credential++;
        credentialCombinations.add(`${credential[1]!.replace(/^input\.clusters\[0\]/, 'override')}|${credential[2]!}`);
      }
      const misspelled = /^(input\S*) (?:added|renamed|= "x" \(this function takes no settings)/.exec(mutation);
      if (misspelled) {
        classes.misspelled++;
        misspelledLevels.add(misspelled[1]!.replace(/\.[^.[]*$/, '').replace(/\[\d+\]/g, '[]'));
      }
      if (mutation.startsWith("token: the Job's")) classes.token++;
    }
    const found: Violation[] = [];
    const bytes = requestBytes(request);
    const tooDeep = requestDepth(request) > MAX_STRUCT_DEPTH;
    // A huge value in a big seed can pass the 64 MiB bound: the server must refuse that, by design too.
    const tooBig = bytes.length > MAX_MESSAGE_BYTES;

    const t0 = performance.now();
    let answer: Buffer | undefined;
    let error: ServiceError | undefined;
    try {
      answer = await client.call(bytes, { timeoutMs: 10_000 });
    } catch (caught) {
      error = caught as ServiceError;
    }
    const ms = performance.now() - t0;
    latencies.push(ms);
    if (slowest.length < SLOWEST_KEPT || ms > slowest[slowest.length - 1]!.ms) {
      slowest.push({ case: index, ms: round(ms), seed: base.name, mutations });
      slowest.sort((a, b) => b.ms - a.ms);
      slowest.length = Math.min(slowest.length, SLOWEST_KEPT);
    }
    if (ms > ANSWER_WITHIN_MS) {
      // Slow once may be this machine (other test files, a GC); slow every time is the request. Ask again, twice.
      let best = ms;
      for (let retry = 0; retry < SLOW_RETRIES && best > ANSWER_WITHIN_MS; retry++) {
        const t1 = performance.now();
        await client.call(bytes, { timeoutMs: 10_000 }).catch(() => undefined);
        best = Math.min(best, performance.now() - t1);
      }
      if (best > ANSWER_WITHIN_MS)
        found.push({ kind: 'slow', detail: `answered in ${round(ms)} ms, and at best ${round(best)} ms asked again` });
    }

    if (tooBig) {
      if (error?.code === status.RESOURCE_EXHAUSTED) refused++;
      else found.push({ kind: 'big-not-refused', detail: error ? `${error.code}: ${error.details}` : 'answered' });
    } else if (tooDeep) {
      if (error?.code === status.INVALID_ARGUMENT && EXPECTED_REFUSAL.test(error.details)) refused++;
      else found.push({ kind: 'deep-not-refused', detail: error ? `${error.code}: ${error.details}` : 'answered' });
    } else if (error) {
      // The client takes 4 MiB at most, as Crossplane's does: a bigger answer arrives as RESOURCE_EXHAUSTED.
      if (error.code === status.RESOURCE_EXHAUSTED) found.push({ kind: 'response-over-4MiB', detail: error.details });
      else found.push({ kind: 'grpc-error', detail: `${error.code}: ${error.details}` });
    } else if (answer) {
      found.push(...responseTooBig(answer.length));
      const rsp = responseFromBytes(answer);
      found.push(...checkResponse(name, request, rsp));
      found.push(...leaks(rsp, answer));
      found.push(...unknownFieldPassed(name, request, rsp));
      const messages = fatalMessages(rsp);
      if (messages.some((message) => OVER_LIMIT.test(message))) {
        overLimit++;
        if (overLimitCases.length < SLOWEST_KEPT) overLimitCases.push({ case: index, seed: base.name, mutations });
      }
      if (rsp.conditions.some((c) => c.type === 'ReportsAccepted' && c.status === 'STATUS_CONDITION_FALSE')) reportsRefused++;
      if (messages.length > 0) {
        fatal++;
        const field = messages[0]!.split(' ')[0]!.replace(/\[\d+\]/g, '[]');
        fatalFields.set(field, (fatalFields.get(field) ?? 0) + 1);
      } else {
        valid++;
      }
      // The same bytes in process: what the handler built, and that the server answered exactly that.
      inProcessLines.length = 0;
      const decoded = decodeRequest(bytes);
      const own = runSafely(name, handler, decoded, logger);
      found.push(...checkHandlerOutput(own));
      found.push(...badLogLines(inProcessLines));
      found.push(...logLeaks(inProcessLines));
      if (!encodeWithinLimit(name, decoded, own).bytes.equals(answer))
        found.push({ kind: 'nondeterministic', detail: 'the server answered other bytes than an in-process run' });
    }
    for (const violation of found) violations.push({ ...violation, case: index, seed: base.name, mutations });
  };

  const concurrency = Math.max(1, options.concurrency ?? 1);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (!exited) {
      const index = next++;
      if (index >= cases) return;
      try {
        await runCase(index);
      } catch (error) {
        // A bug of the harness (the mutator, a check), not of the server: reported, and the campaign goes on.
        const detail = error instanceof Error ? `${error.message}\n${error.stack ?? ''}`.slice(0, 600) : String(error);
        violations.push({ kind: 'harness-error', detail, case: index, seed: '(harness)', mutations: [] });
      }
      if ((index + 1) % CHECK_EVERY === 0) {
        checkServer(index);
        options.onProgress?.(index + 1);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
    // The last log lines travel a pipe: give them a moment before the final look.
    await new Promise((resolve) => setTimeout(resolve, 100));
    checkServer(cases);
  } finally {
    client.close();
  }

  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    name,
    seed,
    cases,
    valid,
    fatal,
    refused,
    overLimit,
    overLimitCases,
    reportsRefused,
    latencyMs: { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(sorted.at(-1) ?? 0) },
    slowest,
    violations,
    fatalFields: [...fatalFields.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
    seeds: seeds.length,
    durationMs: Math.round(performance.now() - started),
    classes: {
      credential: classes.credential,
      credentialCombinations: [credentialCombinations.size, CREDENTIAL_COMBINATIONS],
      misspelled: classes.misspelled,
      misspelledLevels: [misspelledLevels.size, levels],
      token: classes.token,
    },
  };
}

/** The report a person reads: per function, the counts, the latencies, every kind of violation with examples. */
export function formatReport(reports: readonly CampaignReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(
      `${r.name}: ${r.cases} cases from ${r.seeds} seeds (run seed ${r.seed}) in ${(r.durationMs / 1000).toFixed(1)} s`,
      `  answered valid ${r.valid}, Fatal naming a field ${r.fatal} (of which over the 4 MiB response limit ${r.overLimit}), refused by design (Struct deeper than ${MAX_STRUCT_DEPTH}, or over 64 MiB) ${r.refused}`,
      `  cluster-side reports refused (ReportsAccepted False) ${r.reportsRefused}`,
      ...r.overLimitCases.map((c) => `  over 4 MiB: case ${c.case} (seed ${c.seed}; ${c.mutations.join(' | ')})`),
      `  latency p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms (bound ${ANSWER_WITHIN_MS} ms)`,
      ...r.slowest.map((c) => `  slow: case ${c.case} ${c.ms} ms (seed ${c.seed}; ${c.mutations.join(' | ')})`),
      `  Fatal results by field: ${
        r.fatalFields
          .slice(0, 12)
          .map(([field, count]) => `${field} ${count}`)
          .join(', ') || 'none'
      }`,
      `  issue 29: a credential planted ${r.classes.credential} times (${r.classes.credentialCombinations[0]} of ${r.classes.credentialCombinations[1]} setting × check combinations), a misspelled field ${r.classes.misspelled} times (${r.classes.misspelledLevels[0]} of ${r.classes.misspelledLevels[1]} levels), the token printed into a report ${r.classes.token} times`,
    );
    if (r.violations.length === 0) {
      lines.push('  violations: none');
      continue;
    }
    const byKind = new Map<string, CaseViolation[]>();
    for (const v of r.violations) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v]);
    lines.push(`  violations: ${r.violations.length}`);
    for (const [kind, list] of byKind) {
      lines.push(`    ${kind}: ${list.length}`);
      for (const v of list.slice(0, 3)) lines.push(`      case ${v.case} (seed ${v.seed}; ${v.mutations.join(' | ')}): ${v.detail}`);
    }
  }
  return lines.join('\n');
}
