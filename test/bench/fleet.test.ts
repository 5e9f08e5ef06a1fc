// The fleet benchmark's pure parts (bench/fleet/): the rig's layout, what it
// reads off metrics, /proc and logs, the stand-in's status writes, the tables.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hydrationName, workloadNamespace } from '#lib';
import { REPO_ROOT } from '#testing';
import {
  breakerTriggers,
  busySecondsOfProcStat,
  changedObjects,
  etcdMutations,
  circuitCounts,
  composedWatches,
  componentOf,
  cpuSecondsOfStat,
  deltas,
  functionCalls,
  parsePids,
  parsePrometheus,
  ratesPerMinute,
  totalPerMinute,
  writeCounts,
} from '../../bench/fleet/measure.js';
import { parseKubeconfig, collectionPath, mapLimit, type Json, type Kube } from '../../bench/fleet/kube.js';
import {
  WORKLOAD_SERVERS,
  clusterName,
  clusterProviderConfig,
  namespacesByServer,
  objectsPerCluster,
  planRig,
  type WorkloadServer,
} from '../../bench/fleet/rig.js';
import { JobWatch, StandIn, boundClaimStatus, completedJobStatus, jobFinished } from '../../bench/fleet/standin.js';
import { BEGIN, END, breakerCell, charts, convergeCpuTable, replaceGenerated, timingsTable } from '../../bench/fleet/report.js';
import type { FleetResult } from '../../bench/fleet/fleet.js';

describe('the rig', () => {
  it('spreads clusters round-robin over the three servers, each in its own namespace (PerCluster)', () => {
    const rig = planRig(7, 'fleet-bench', 'qwen', 'PerCluster');
    expect(rig.clusters.map((c) => c.server)).toEqual([
      'cluster-a',
      'cluster-b',
      'cluster-c',
      'cluster-a',
      'cluster-b',
      'cluster-c',
      'cluster-a',
    ]);
    expect(rig.clusters[3]).toEqual({
      name: 'fleet-0003',
      server: 'cluster-a',
      remoteNamespace: workloadNamespace('PerCluster', 'fleet-bench', 'fleet-0003'),
      hydration: hydrationName('fleet-bench', 'qwen', 'fleet-0003'),
    });
    const namespaces = rig.clusters.map((c) => `${c.server}/${c.remoteNamespace}`);
    expect(new Set(namespaces).size).toBe(7);
    expect([...namespacesByServer(rig).values()].map((set) => set.size)).toEqual([3, 2, 2]);
  });

  it.each([
    { mode: 'Shared' as const, n: 3, ok: true },
    { mode: 'Shared' as const, n: 4, ok: false },
    { mode: 'PerTeam' as const, n: 4, ok: false },
    { mode: 'PerCluster' as const, n: 1000, ok: true },
  ])('$mode with $n clusters: allowed $ok (no two Objects may manage one remote object)', ({ mode, n, ok }) => {
    const plan = (): unknown => planRig(n, 'fleet-bench', 'qwen', mode);
    if (ok) expect(plan).not.toThrow();
    else expect(plan).toThrow(/fleet-0000 and fleet-0003 would share namespace .* on cluster-a/);
  });

  it.each([0, -1, 2.5])('refuses a fleet size of %s', (n) => {
    expect(() => planRig(n, 'ns', 'c', 'PerCluster')).toThrow(/positive integer/);
  });

  it('names clusters in order, and each provider config reuses its server’s kubeconfig Secret', () => {
    expect([0, 9, 999].map(clusterName)).toEqual(['fleet-0000', 'fleet-0009', 'fleet-0999']);
    const rig = planRig(2, 'fleet-bench', 'qwen', 'PerCluster');
    expect(clusterProviderConfig(rig, rig.clusters[1]!)['spec']).toEqual({
      credentials: { source: 'Secret', secretRef: { namespace: 'crossplane-system', name: 'kubeconfig-cluster-b', key: 'kubeconfig' } },
    });
    expect([objectsPerCluster('Shared'), objectsPerCluster('PerCluster')]).toEqual([6, 7]);
  });
});

describe('metrics', () => {
  const before = parsePrometheus(
    [
      '# HELP apiserver_request_total Counter',
      'apiserver_request_total{code="200",component="apiserver",dry_run="",group="modelplane.ai",resource="modelcaches",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 10',
      'apiserver_request_total{code="201",group="",resource="events",subresource="",verb="POST",version="v1"} 5',
      'apiserver_request_total{code="200",group="",resource="pods",subresource="",verb="LIST",version="v1"} 900',
      'apiserver_request_total{code="409",group="kubernetes.m.crossplane.io",resource="objects",subresource="",verb="APPLY",version="v1alpha1"} 1',
    ].join('\n'),
  );
  const after = parsePrometheus(
    [
      'apiserver_request_total{code="200",group="modelplane.ai",resource="modelcaches",subresource="status",verb="PATCH",version="v1alpha1"} 13',
      'apiserver_request_total{code="201",group="",resource="events",subresource="",verb="POST",version="v1"} 5',
      'apiserver_request_total{code="200",group="",resource="pods",subresource="",verb="LIST",version="v1"} 1900',
      'apiserver_request_total{code="409",group="kubernetes.m.crossplane.io",resource="objects",subresource="",verb="APPLY",version="v1alpha1"} 1',
      'apiserver_request_total{code="200",group="kubernetes.m.crossplane.io",resource="objects",subresource="",verb="APPLY",version="v1alpha1"} 6',
    ].join('\n'),
  );

  it('parses samples with their labels, escapes and all', () => {
    expect(parsePrometheus('a_total{x="q\\"uote",y="2"} 3.5\n# c\nbad line\nb 1e3')).toEqual([
      { name: 'a_total', labels: { x: 'q"uote', y: '2' }, value: 3.5 },
      { name: 'b', labels: {}, value: 1000 },
    ]);
  });

  it('counts writes by verb and resource (every code), never reads, and rates what moved', () => {
    expect(Object.fromEntries(writeCounts(before))).toEqual({
      'PATCH modelplane.ai/modelcaches/status': 10,
      'POST events': 5,
      'APPLY kubernetes.m.crossplane.io/objects': 1,
    });
    const rates = ratesPerMinute(writeCounts(before), writeCounts(after), 180);
    expect(rates).toEqual([
      { what: 'APPLY kubernetes.m.crossplane.io/objects', perMinute: 2 },
      { what: 'PATCH modelplane.ai/modelcaches/status', perMinute: 1 },
    ]);
    expect(totalPerMinute(rates)).toBe(3);
    expect(ratesPerMinute(writeCounts(after), writeCounts(after), 60)).toEqual([]);
    expect(() => ratesPerMinute(new Map(), new Map(), 0)).toThrow(/positive interval/);
  });

  it('sums the circuit breaker’s counters by outcome, across controllers, and diffs them', () => {
    const samples = parsePrometheus(
      [
        'crossplane_circuit_breaker_opens_total{controller="composite/a"} 2',
        'crossplane_circuit_breaker_opens_total{controller="composite/b"} 1',
        'crossplane_circuit_breaker_events_total{controller="composite/a",result="Dropped"} 40',
        'crossplane_circuit_breaker_events_total{controller="composite/a",result="Allowed"} 7',
        'workqueue_depth{name="x"} 3',
      ].join('\n'),
    );
    const counts = circuitCounts(samples);
    expect(Object.fromEntries(counts)).toEqual({
      crossplane_circuit_breaker_opens_total: 3,
      'crossplane_circuit_breaker_events_total{result=Dropped}': 40,
      'crossplane_circuit_breaker_events_total{result=Allowed}': 7,
    });
    const later = new Map(counts).set('crossplane_circuit_breaker_events_total{result=Allowed}', 9);
    expect(deltas(counts, later)).toEqual({ 'crossplane_circuit_breaker_events_total{result=Allowed}': 2 });
    expect(breakerCell({})).toBe('closed (no change)');
    expect(
      breakerCell({
        crossplane_circuit_breaker_opens_total: 3,
        crossplane_circuit_breaker_closes_total: 2,
        'crossplane_circuit_breaker_events_total{result=Dropped}': 40,
      }),
    ).toBe('opened 3×, closed 2×, 40 events dropped');
  });

  it('counts the composed-resource watches each XR controller started, by its plural, and nothing else', () => {
    const samples = parsePrometheus(
      [
        'engine_watches_started_total{controller="composite/modelcachehydrations.modelplane.ai",type="ComposedResource"} 7',
        'engine_watches_started_total{controller="composite/modelcachehydrations.modelplane.ai",type="CompositeResource"} 1',
        'engine_watches_started_total{controller="composite/modelcacheshards.modelplane.ai",type="ComposedResource"} 1',
        'engine_watches_started_total{controller="composite/modelcaches.modelplane.ai",type="CompositionRevision"} 1',
        'engine_watches_stopped_total{controller="composite/modelcacheshards.modelplane.ai",type="ComposedResource"} 1',
      ].join('\n'),
    );
    expect(Object.fromEntries(composedWatches(samples))).toEqual({ modelcachehydrations: 7, modelcacheshards: 1 });
  });

  it('counts the breakers Crossplane logs as open by the XR’s kind and the kind of what triggered them', () => {
    const open = (xr: string, by: string): string =>
      // Crossplane's log line names the controller twice (the definition's, then the XR's); the last one counts.
      `{"level":"info","msg":"Circuit breaker is open","controller":"defined/compositeresourcedefinition.apiextensions.crossplane.io","controller":"composite/${xr}.modelplane.ai","triggered-by":"${by}"}`;
    const lines = [
      open('modelcachehydrations', 'Object/fleet-n10-1 (fleet-bench)'),
      open('modelcachehydrations', 'Object/fleet-n10-2 (fleet-bench)'),
      open('modelcacheshards', 'ModelCacheHydration/h-1 (fleet-bench)'),
      open('modelcachehydrations', 'ModelCacheHydration/h-2 (fleet-bench)'),
      '{"level":"info","msg":"Circuit breaker closed"}',
      'not json at all: circuit',
    ];
    expect(breakerTriggers(lines)).toEqual({
      'modelcachehydrations ← Object': 2,
      'modelcachehydrations ← ModelCacheHydration': 1,
      'modelcacheshards ← ModelCacheHydration': 1,
    });
    expect(Object.keys(breakerTriggers(lines))[0]).toBe('modelcachehydrations ← Object');
    expect(breakerTriggers([])).toEqual({});
  });
});

describe('real writes', () => {
  it.each([
    { before: { a: '1', b: '2' }, after: { a: '1', b: '2' }, changed: { written: 0, created: 0, deleted: 0 } },
    { before: { a: '1', b: '2' }, after: { a: '5', b: '2', c: '9' }, changed: { written: 1, created: 1, deleted: 0 } },
    { before: { a: '1', b: '2' }, after: { b: '3' }, changed: { written: 1, created: 0, deleted: 1 } },
  ])('counts objects whose resourceVersion moved, and the created and deleted: $changed', ({ before, after, changed }) => {
    expect(changedObjects(new Map(Object.entries(before)), new Map(Object.entries(after)))).toEqual(changed);
  });

  it('sums etcd’s puts and deletes, nothing else', () => {
    const samples = parsePrometheus('etcd_mvcc_put_total 120\netcd_mvcc_delete_total 7\netcd_mvcc_range_total 9000\netcd_mvcc_txn_total 3');
    expect(etcdMutations(samples)).toBe(127);
  });
});

describe('processes and logs', () => {
  it.each([
    { stat: '4242 (etcd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 100 1 1', seconds: 3.25 },
    { stat: '77 (node (main) x) R 1 77 77 0 -1 0 0 0 0 0 1000 200 5 5 20 0 1 0 1 1 1', seconds: 12 },
  ])('reads user + system CPU of $stat', ({ stat, seconds }) => {
    expect(cpuSecondsOfStat(stat)).toBeCloseTo(seconds);
  });

  it('reads the machine’s busy CPU (all but idle and iowait) from /proc/stat', () => {
    expect(busySecondsOfProcStat('cpu  100 5 50 9000 40 3 2 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10')).toBeCloseTo(1.6);
    expect(() => busySecondsOfProcStat('intr 1 2')).toThrow(/proc\/stat/);
  });

  it('refuses what is not a stat line', () => {
    expect(() => cpuSecondsOfStat('nothing here')).toThrow(/stat/);
  });

  it('reads up.sh’s pids file and groups its processes into components', () => {
    const pids = parsePids('101 etcd\n102 apiserver-control-plane\n103 apiserver-cluster-a\n\ngarbage\n104 compose-model-cache\n');
    expect(pids).toEqual([
      { pid: 101, name: 'etcd' },
      { pid: 102, name: 'apiserver-control-plane' },
      { pid: 103, name: 'apiserver-cluster-a' },
      { pid: 104, name: 'compose-model-cache' },
    ]);
    expect(
      ['apiserver-control-plane', 'apiserver-cluster-b', 'controller-manager-cluster-a', 'crossplane', 'compose-model-cache'].map(
        componentOf,
      ),
    ).toEqual(['apiserver (control plane)', 'apiservers (3 workload)', 'controller-managers', 'crossplane', 'compose-model-cache']);
  });

  it('takes the largest request and response of the RunFunction lines only', () => {
    const log = [
      '{"level":"info","msg":"serving","port":1}',
      '{"level":"info","msg":"RunFunction","bytes":1200,"responseBytes":800,"durationMs":1.5}',
      '{"level":"info","msg":"RunFunction","bytes":900,"responseBytes":4096,"durationMs":0.5}',
      '{"level":"warn","msg":"RunFunction refused","bytes":99999}',
      'not json "msg":"RunFunction"',
    ].join('\n');
    expect(functionCalls(log)).toEqual({ calls: 2, maxRequestBytes: 1200, maxResponseBytes: 4096, maxDurationMs: 1.5 });
    expect(functionCalls('')).toEqual({ calls: 0, maxRequestBytes: 0, maxResponseBytes: 0, maxDurationMs: 0 });
  });
});

describe('the stand-in’s writes', () => {
  it('binds a claim with the modes and size it asked for', () => {
    expect(boundClaimStatus({ spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '20Gi' } } } })).toEqual({
      phase: 'Bound',
      accessModes: ['ReadWriteMany'],
      capacity: { storage: '20Gi' },
    });
    expect(boundClaimStatus({ spec: {} })).toEqual({ phase: 'Bound', accessModes: [] });
  });

  it('completes a Job as the Job controller does (SuccessCriteriaMet, then Complete), at whole seconds', () => {
    const status = completedJobStatus(new Date('2026-01-02T03:04:05.678Z'));
    expect(status).toMatchObject({ succeeded: 1, completionTime: '2026-01-02T03:04:05Z', startTime: '2026-01-02T03:04:05Z' });
    expect((status['conditions'] as { type: string }[]).map((c) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(jobFinished({ status })).toBe(true);
  });

  it.each([
    { job: {}, finished: false },
    { job: { status: { conditions: [{ type: 'Complete', status: 'False' }] } }, finished: false },
    { job: { status: { conditions: [{ type: 'Failed', status: 'True' }] } }, finished: true },
  ])('a Job is finished: $finished', ({ job, finished }) => {
    expect(jobFinished(job)).toBe(finished);
  });
});

/** A workload API server holding some claims and Jobs: answers their lists and records every other call. */
function workloadServer(name: string, objects: { claims: Json[]; jobs: Json[] }): Kube & { writes: string[] } {
  const writes: string[] = [];
  return {
    name,
    writes,
    call: (method, path) => {
      if (method !== 'GET') {
        writes.push(`${method} ${path}`);
        return Promise.resolve({});
      }
      const items = path.startsWith('/api/v1/persistentvolumeclaims')
        ? objects.claims
        : path.startsWith('/apis/batch/v1/jobs')
          ? objects.jobs
          : [];
      return Promise.resolve({ items, metadata: {} });
    },
    text: () => Promise.resolve(''),
    close: () => undefined,
  };
}

describe('what completes the fleet’s Jobs', () => {
  const rig = planRig(3, 'team', 'fleet', 'Shared');
  const ns = rig.clusters[0]!.remoteNamespace;
  const claim = (name: string, namespace: string, phase?: string): Json => ({
    metadata: { name, namespace },
    spec: { accessModes: ['ReadWriteMany'] },
    ...(phase ? { status: { phase } } : {}),
  });
  const job = (name: string, namespace: string, completionTime?: string): Json => ({
    metadata: { name, namespace },
    ...(completionTime ? { status: { completionTime, conditions: [{ type: 'Complete', status: 'True' }] } } : {}),
  });
  /** One pass of `make` over a cluster-a holding these objects, cluster-b and cluster-c empty. */
  async function onePass(make: typeof StandIn | typeof JobWatch, objects: { claims: Json[]; jobs: Json[] }) {
    const servers = new Map<WorkloadServer, Kube & { writes: string[] }>(
      WORKLOAD_SERVERS.map((server) => [server, workloadServer(server, server === 'cluster-a' ? objects : { claims: [], jobs: [] })]),
    );
    const jobs = new make(servers, rig, 5);
    jobs.start();
    await jobs.stop(); // the pass under way ends first
    return { jobs, writes: servers.get('cluster-a')!.writes };
  }

  it('the stand-in binds a Pending claim and then completes its Job, and nothing of another namespace', async () => {
    const { jobs, writes } = await onePass(StandIn, {
      claims: [claim('c', ns), claim('other', 'elsewhere')],
      jobs: [job('j', ns), job('k', 'elsewhere')],
    });
    expect(writes).toEqual([
      `PATCH /api/v1/namespaces/${ns}/persistentvolumeclaims/c/status`,
      `PATCH /apis/batch/v1/namespaces/${ns}/jobs/j/status`,
    ]);
    expect(jobs.by).toBe('stand-in');
    expect([...jobs.bound]).toEqual([`cluster-a/${ns}/c`]);
    expect([...jobs.completed.keys()]).toEqual([`cluster-a/${ns}/j`]);
  });

  it('the watch writes nothing, and counts what the nodes did, at the completionTime the Job controller wrote', async () => {
    const { jobs, writes } = await onePass(JobWatch, {
      claims: [claim('bound', ns, 'Bound'), claim('pending', ns, 'Pending')],
      jobs: [job('done', ns, '2026-12-06T21:00:05Z'), job('running', ns), job('k', 'elsewhere', '2026-12-06T21:00:00Z')],
    });
    expect(writes).toEqual([]);
    expect(jobs.by).toBe('nodes');
    expect([...jobs.bound]).toEqual([`cluster-a/${ns}/bound`]);
    expect([...jobs.completed]).toEqual([[`cluster-a/${ns}/done`, Date.parse('2026-12-06T21:00:05Z')]]);
    expect(jobs.lastCompletedAt(1)).toBe(Date.parse('2026-12-06T21:00:05Z'));
    expect(jobs.lastCompletedAt(2)).toBeUndefined();
  });
});

describe('the client’s pure parts', () => {
  it('reads a kubeconfig as up.sh writes it, and refuses one without inline data', () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const text = `apiVersion: v1\nkind: Config\nclusters:\n  - name: x\n    cluster:\n      server: https://127.0.0.1:16443\n      certificate-authority-data: ${b64('CA')}\nusers:\n  - name: admin\n    user:\n      client-certificate-data: ${b64('CERT')}\n      client-key-data: ${b64('KEY')}\n`;
    const parts = parseKubeconfig(text);
    expect([parts.server, parts.ca.toString(), parts.cert.toString(), parts.key.toString()]).toEqual([
      'https://127.0.0.1:16443',
      'CA',
      'CERT',
      'KEY',
    ]);
    expect(() => parseKubeconfig(text.replace(/client-key-data: .*/, 'client-key: /tmp/key'))).toThrow(/client-key-data/);
  });

  it.each([
    { apiVersion: 'v1', plural: 'secrets', ns: 'a', path: '/api/v1/namespaces/a/secrets' },
    {
      apiVersion: 'modelplane.ai/v1alpha1',
      plural: 'inferenceclusters',
      ns: undefined,
      path: '/apis/modelplane.ai/v1alpha1/inferenceclusters',
    },
  ])('collection path of $plural', ({ apiVersion, plural, ns, path }) => {
    expect(collectionPath(apiVersion, plural, ns)).toBe(path);
  });

  it('maps with at most `limit` calls in flight, results in order', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, x));
      inFlight--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });
});

describe('the page', () => {
  const result = (n: number, ready: boolean): FleetResult => ({
    n,
    plane: { clocks: 'production', poll: '1m', crossplaneFlags: '', workloadNamespace: 'PerCluster' },
    shards: Math.ceil(n / 100),
    setupSeconds: 1,
    applyToHydrations: 6,
    applyToObjects: 20,
    applyToLastJob: 70,
    ...(ready ? { lastJobToReady: 50, applyToReady: 120 } : {}),
    summary: { ready: ready ? `${n}/${n}` : `0/${n}` },
    ready,
    converge: { cpuSecondsPerMinute: {}, circuit: {} },
    circuitLog: { lines: 0, first: [] },
    largest: {},
    functions: {},
    delete: ready ? { seconds: 40, jobsLeftToTtl: 0, reappeared: false } : { left: '3 Objects', jobsLeftToTtl: 0, reappeared: false },
    jobs: { by: 'stand-in', claimsBound: n, jobsCompleted: n, errors: 0, lastError: '' },
  });

  it('shows a row per N, Ready or not, and what was left after a delete', () => {
    const table = timingsTable([result(10, true), result(300, false)]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[2]).toBe('| 10 | 1 | 6 s | 20 s | 70 s | 50 s | 120 s | Ready, 10/10 | 40 s |');
    expect(table[3]).toBe('| 300 | 3 | 6 s | 20 s | 70 s | — | — | not Ready (0/300) | not gone: 3 Objects |');
  });

  it('shows, while converging, the top three write requests, what opened the breakers and the watches started, or a dash', () => {
    const measured: FleetResult = {
      ...result(100, true),
      converge: {
        cpuSecondsPerMinute: { 'apiserver (control plane)': 52.9 },
        circuit: {},
        writes: [
          { what: 'PUT objects', perMinute: 1521.2 },
          { what: 'PUT objects/status', perMinute: 1415.2 },
          { what: 'APPLY objects', perMinute: 900 },
          { what: 'POST events', perMinute: 10 },
        ],
        triggers: { 'modelcachehydrations ← Object': 695, 'modelcacheshards ← ModelCacheHydration': 5 },
        watches: { modelcachehydrations: 7, modelcacheshards: 1 },
      },
    };
    const unchanged: FleetResult = { ...result(1000, false), converge: { ...result(1000, false).converge, watches: {} } };
    const [, , row, bare, none] = convergeCpuTable([measured, result(10, true), unchanged]).split('\n');
    expect(row).toContain('| PUT objects 1521.2; PUT objects/status 1415.2; APPLY objects 900 |');
    expect(row).not.toContain('POST events');
    expect(row).toMatch(
      /\| modelcachehydrations ← Object 695×; modelcacheshards ← ModelCacheHydration 5× \| modelcachehydrations 7, modelcacheshards 1 \|$/,
    );
    expect(bare).toMatch(/\| — \| — \| — \|$/);
    expect(none).toMatch(/\| none \(running from an earlier N\) \|$/);
  });

  it('charts each N that reached a figure: seconds to every hydration and Object, the API server’s CPU beside the functions’', () => {
    const busy = (r: FleetResult, apiserver: number, hydration: number): FleetResult => ({
      ...r,
      converge: {
        ...r.converge,
        cpuSecondsPerMinute: {
          'apiserver (control plane)': apiserver,
          'compose-model-cache-hydration': hydration,
          'compose-model-cache': 0.01,
        },
      },
    });
    const unreached: FleetResult = { ...result(3000, false), converge: { cpuSecondsPerMinute: {}, circuit: {} } };
    delete unreached.applyToObjects;
    const text = charts([busy(result(10, true), 7.8, 0.2), busy(result(1000, false), 61.9, 1.19), unreached]);
    expect(text.match(/```mermaid\nxychart-beta\n/g)).toHaveLength(2);
    expect(text).toContain('x-axis "clusters" ["N = 10", "N = 1000"]');
    expect(text).not.toContain('3000');
    expect(text).toContain('bar [6, 6]\n    line [20, 20]');
    expect(text).toContain('bar [7.8, 61.9]\n    line [0.21, 1.2]');
  });

  it('keeps BENCHMARKS.md’s charts those of the committed run', () => {
    const run = JSON.parse(readFileSync(join(REPO_ROOT, 'bench', 'fleet', 'results', 'results.json'), 'utf8')) as {
      results: FleetResult[];
    };
    expect(readFileSync(join(REPO_ROOT, 'BENCHMARKS.md'), 'utf8')).toContain(charts(run.results));
  });

  it('replaces only its own part of the page, or appends it', () => {
    const page = `# Title\n\nprose\n\n${BEGIN}\nold\n${END}\n\nmore prose\n`;
    expect(replaceGenerated(page, `${BEGIN}\nnew\n${END}`)).toBe(`# Title\n\nprose\n\n${BEGIN}\nnew\n${END}\n\nmore prose\n`);
    expect(replaceGenerated('# T\n', 'X')).toBe('# T\n\nX\n');
  });
});
