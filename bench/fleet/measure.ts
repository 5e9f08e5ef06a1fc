// What the fleet benchmark reads off the plane, as pure functions of text:
// the API servers' and Crossplane's Prometheus metrics, /proc/<pid>/stat, the
// functions' JSON logs, up.sh's pids file.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments and malformed lines skipped). */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, '$1');
    out.push({ name: match[1]!, labels, value });
  }
  return out;
}

/** The verbs of apiserver_request_total that write (APPLY is server-side apply). */
export const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION']);

/** An API server's writes so far, by `<verb> <group/>resource</subresource>` (every response code). */
export function writeCounts(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== 'apiserver_request_total' || !WRITE_VERBS.has(s.labels['verb'] ?? '')) continue;
    const group = s.labels['group'] ? `${s.labels['group']}/` : '';
    const sub = s.labels['subresource'] ? `/${s.labels['subresource']}` : '';
    const key = `${s.labels['verb']} ${group}${s.labels['resource'] ?? '?'}${sub}`;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

export interface Rate {
  what: string;
  perMinute: number;
}

/** Per minute between two counter snapshots; only what moved, largest first. */
export function ratesPerMinute(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>, seconds: number): Rate[] {
  if (!(seconds > 0)) throw new Error(`a rate needs a positive interval (got ${seconds} s)`);
  const out: Rate[] = [];
  for (const [what, value] of after) {
    const delta = value - (before.get(what) ?? 0);
    if (delta > 0) out.push({ what, perMinute: round((delta * 60) / seconds, 2) });
  }
  return out.sort((a, b) => b.perMinute - a.perMinute || a.what.localeCompare(b.what));
}

export const totalPerMinute = (rates: readonly Rate[]): number =>
  round(
    rates.reduce((sum, r) => sum + r.perMinute, 0),
    2,
  );

/** The Crossplane XR circuit breaker's counters, by metric name and outcome label. */
export function circuitCounts(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (!s.name.includes('circuit_breaker')) continue;
    const detail = Object.entries(s.labels)
      .filter(([key]) => key !== 'controller' && key !== 'instance' && key !== 'job')
      .map(([key, value]) => `${key}=${value}`)
      .sort()
      .join(',');
    const key = detail ? `${s.name}{${detail}}` : s.name;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/**
 * How many composed-resource watches each XR controller started (Crossplane's
 * engine_watches_started_total, type ComposedResource), by the XR's plural
 * (`composite/modelcachehydrations.modelplane.ai` → `modelcachehydrations`).
 * Our compositions compose one kind each, so a count above one is the same
 * informer handed that many handlers: Crossplane v2.2 to v2.4 start one per
 * composed resource of the reconcile that first watches the kind, and every
 * event of that kind then reaches the controller, and its breaker, that many
 * times (docs/fleet-benchmark.md, "Why the breakers open").
 */
export function composedWatches(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (!s.name.endsWith('engine_watches_started_total') || s.labels['type'] !== 'ComposedResource') continue;
    const controller = (s.labels['controller'] ?? '?').replace(/^composite\//, '').replace(/\..*$/, '');
    out.set(controller, (out.get(controller) ?? 0) + s.value);
  }
  return out;
}

/** The differences between two snapshots of counters, every key of either (zeros left out). */
export function deltas(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const delta = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (delta !== 0) out[key] = delta;
  }
  return out;
}

/** A process's user + system CPU seconds from /proc/<pid>/stat (the comm field may hold spaces and parentheses). */
export function cpuSecondsOfStat(stat: string, ticksPerSecond = 100): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the comm: state is field 3, so utime (14) and stime (15) are rest[11] and rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('not a /proc/<pid>/stat line');
  return (utime + stime) / ticksPerSecond;
}

/** up.sh's pids file: `<pid> <name>` a line. */
export function parsePids(text: string): { pid: number; name: string }[] {
  return text
    .split('\n')
    .map((line) => /^(\d+)\s+(\S+)\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), name: m[2]! }));
}

/** The component a process of up.sh's is counted under: the API servers, etcd, Crossplane, the provider, each function. */
export function componentOf(name: string): string {
  if (name === 'apiserver-control-plane') return 'apiserver (control plane)';
  if (name.startsWith('apiserver-')) return 'apiservers (3 workload)';
  if (name.startsWith('controller-manager-')) return 'controller-managers';
  if (name === 'provider-kubernetes') return 'provider-kubernetes';
  return name;
}

export interface FunctionCalls {
  calls: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  maxDurationMs: number;
}

/** The JSON records of the lines that contain `marker` (a line that is not a JSON object is skipped). */
function logRecords(lines: readonly string[], marker: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (!line.includes(marker)) continue;
    try {
      const entry: unknown = JSON.parse(line);
      if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) out.push(entry as Record<string, unknown>);
    } catch {
      // Not a JSON line (a panic's stack, a truncated write): not a record.
    }
  }
  return out;
}

/** The RunFunction lines of a function's JSON log (each logs its request's and response's bytes). */
export function functionCalls(log: string): FunctionCalls {
  const out: FunctionCalls = { calls: 0, maxRequestBytes: 0, maxResponseBytes: 0, maxDurationMs: 0 };
  for (const record of logRecords(log.split('\n'), '"msg":"RunFunction"')) {
    const num = (key: string): number => (typeof record[key] === 'number' ? record[key] : 0);
    out.calls += 1;
    out.maxRequestBytes = Math.max(out.maxRequestBytes, num('bytes'));
    out.maxResponseBytes = Math.max(out.maxResponseBytes, num('responseBytes'));
    out.maxDurationMs = Math.max(out.maxDurationMs, num('durationMs'));
  }
  return out;
}

/** Crossplane log lines about the circuit breaker (opened, closed, events dropped). */
export function circuitLogLines(log: string): string[] {
  return log.split('\n').filter((line) => /circuit|too many watch events/i.test(line));
}

/**
 * What Crossplane says opened each breaker it logs as open ("triggered-by": the most frequent watch
 * event source in the XR's recent events, `Kind/name (namespace)`), counted by the XR's kind and the
 * source's kind: which level hears too much, and from what.
 */
export function breakerTriggers(lines: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const fields of logRecords(lines, '"msg":"Circuit breaker is open"')) {
    const by = typeof fields['triggered-by'] === 'string' ? fields['triggered-by'] : '';
    const controller = typeof fields['controller'] === 'string' ? fields['controller'] : '';
    const xr = /^composite\/([^.]+)\./.exec(controller)?.[1] ?? controller;
    const source = by.split('/')[0] || 'unknown';
    const key = `${xr} ← ${source}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)));
}

export const round = (value: number, digits = 1): number => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

export interface Changed {
  /** Objects present in both snapshots whose resourceVersion moved: written (a no-op apply moves nothing). */
  written: number;
  created: number;
  deleted: number;
}

/**
 * What changed between two snapshots of `name → resourceVersion` of one
 * kind. A request the API server answers without a change (a server-side
 * apply or status update identical to what is stored) leaves the
 * resourceVersion as it was, so this counts real writes, where
 * apiserver_request_total counts requests.
 */
export function changedObjects(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): Changed {
  let written = 0;
  let created = 0;
  for (const [name, version] of after) {
    const was = before.get(name);
    if (was === undefined) created += 1;
    else if (was !== version) written += 1;
  }
  const deleted = [...before.keys()].filter((name) => !after.has(name)).length;
  return { written, created, deleted };
}

/** etcd's own count of the keys it put and deleted (every API server of the plane shares the one store). */
export function etcdMutations(samples: readonly Sample[]): number {
  return samples
    .filter((s) => s.name === 'etcd_mvcc_put_total' || s.name === 'etcd_mvcc_delete_total')
    .reduce((sum, s) => sum + s.value, 0);
}

/** The machine's busy CPU seconds so far, all cores (the first line of /proc/stat: all but idle and iowait). */
export function busySecondsOfProcStat(procStat: string, ticksPerSecond = 100): number {
  const fields = (procStat.split('\n')[0] ?? '').trim().split(/\s+/);
  if (fields[0] !== 'cpu') throw new Error('not /proc/stat');
  const ticks = fields.slice(1, 9).map(Number);
  const busy = ticks.reduce((sum, value, index) => (index === 3 || index === 4 ? sum : sum + value), 0);
  return busy / ticksPerSecond;
}
