// One fleet run on the live `make up` plane: N simulated clusters, one
// HuggingFace ModelCache selecting them all, timed from apply to Ready,
// measured at rest, deleted. `make bench-fleet` (bench/fleet/run.ts) runs it
// per N on production clocks, the stand-in binding claims and completing
// Jobs; test/e2e/fleet.e2e.ts runs it at N = 3 on the e2e's own clocks and
// real nodes, whose pods download (standin.ts: the stand-in and the watch).

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LABEL_MODELCACHE, isObject, type WorkloadNamespaceMode } from '#lib';
import {
  METADATA_ONLY,
  applyObject,
  collectionPath,
  deleteObject,
  kubeFrom,
  listAll,
  mapLimit,
  patchStatus,
  type Json,
  type Kube,
} from './kube.js';
import {
  WORKLOAD_SERVERS,
  clusterProviderConfig,
  hydrationSelector,
  inferenceCluster,
  modelCache,
  objectsPerCluster,
  planRig,
  provisionedStatus,
  teamObjects,
  type Rig,
  type WorkloadServer,
} from './rig.js';
import {
  busySecondsOfProcStat,
  changedObjects,
  breakerTriggers,
  circuitCounts,
  circuitLogLines,
  composedWatches,
  etcdMutations,
  componentOf,
  cpuSecondsOfStat,
  deltas,
  functionCalls,
  parsePids,
  parsePrometheus,
  ratesPerMinute,
  round,
  totalPerMinute,
  writeCounts,
  type Changed,
  type FunctionCalls,
  type Rate,
} from './measure.js';
import { JobWatch, StandIn, jobFinished } from './standin.js';

export const CROSSPLANE_METRICS = 'http://127.0.0.1:17080/metrics';
export const FUNCTIONS = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'] as const;

const API = 'modelplane.ai/v1alpha1';
const OBJECTS = 'kubernetes.m.crossplane.io/v1alpha1';
const seconds = (from: number, to: number | undefined): number | undefined => (to === undefined ? undefined : round((to - from) / 1000, 1));

export interface PlaneInfo {
  clocks: string;
  poll: string;
  crossplaneFlags: string;
  workloadNamespace: WorkloadNamespaceMode;
}

/** What up.sh wrote into its state dir about its clocks and settings (older planes: the e2e defaults). */
export function readPlaneInfo(stateDir: string): PlaneInfo {
  const file = join(stateDir, 'clocks');
  const values = new Map<string, string>();
  if (existsSync(file))
    for (const line of readFileSync(file, 'utf8').split('\n')) values.set(line.split('=')[0]!, line.slice(line.indexOf('=') + 1));
  const mode = values.get('workload-namespace') ?? 'Shared';
  if (mode !== 'Shared' && mode !== 'PerTeam' && mode !== 'PerCluster') throw new Error(`${file}: workload-namespace ${mode}`);
  return {
    clocks: values.get('clocks') ?? 'local',
    poll: values.get('poll') ?? '5s',
    crossplaneFlags: values.get('crossplane-flags') ?? '',
    workloadNamespace: mode,
  };
}

export interface Plane {
  stateDir: string;
  info: PlaneInfo;
  control: Kube;
  workloads: Map<WorkloadServer, Kube>;
  close(): void;
}

export function openPlane(stateDir: string): Plane {
  const kubeconfig = (name: string): string => join(stateDir, 'kubeconfigs', name);
  const control = kubeFrom('control-plane', kubeconfig('control-plane'));
  const workloads = new Map(WORKLOAD_SERVERS.map((server) => [server, kubeFrom(server, kubeconfig(server))] as const));
  return {
    stateDir,
    info: readPlaneInfo(stateDir),
    control,
    workloads,
    close() {
      control.close();
      for (const kube of workloads.values()) kube.close();
    },
  };
}

export interface FleetOptions {
  n: number;
  namespace: string;
  cache: string;
  /** How long to measure at rest (0: skip), after `settleSeconds`. */
  restSeconds: number;
  settleSeconds: number;
  /** How long apply → Ready may take before the run gives up (and still measures and deletes). */
  convergeTimeoutSeconds: number;
  goneTimeoutSeconds: number;
  pollMs: number;
  /** What completes the Jobs: the batched stand-in (a plane without nodes) or the nodes' own pods, only watched. */
  jobs: 'stand-in' | 'nodes';
  /** The HuggingFace repository staged, when not SOURCE's (rig.ts). */
  repo?: string;
  log: (line: string) => void;
}

export interface Largest {
  name: string;
  bytes: number;
}

export interface FleetResult {
  n: number;
  plane: PlaneInfo;
  shards: number;
  setupSeconds: number;
  applyToHydrations?: number;
  applyToObjects?: number;
  applyToLastJob?: number;
  lastJobToReady?: number;
  applyToReady?: number;
  /** What the ModelCache said last (its summary) and whether it was Ready. */
  summary: Json;
  ready: boolean;
  /** What was still missing when the run gave up, when it did. */
  timedOut?: string;
  converge: {
    cpuSecondsPerMinute: Record<string, number>;
    circuit: Record<string, number>;
    /** Control-plane write requests per minute, apply → Ready (or the give-up), by verb and resource. */
    writes?: Rate[];
    /** "Circuit breaker is open" log lines by the XR's kind and the kind of the source that triggered it. */
    triggers?: Record<string, number>;
    /** Composed-resource watches each XR controller started, apply → Ready (measure.ts, composedWatches). */
    watches?: Record<string, number>;
  };
  rest?: {
    seconds: number;
    /** Write requests (apiserver_request_total: a no-op apply counts too). */
    controlPlaneWritesPerMinute: number;
    writes: Rate[];
    /** Of the cache's own objects, how many were really written (resourceVersion moved) in the window. */
    objectsWritten?: Record<string, Changed>;
    /** etcd's puts and deletes a minute, for the whole plane (control plane and the three workload servers). */
    etcdMutationsPerMinute?: number;
    workloadWritesPerMinute: Record<string, number>;
    cpuSecondsPerMinute: Record<string, number>;
    circuit: Record<string, number>;
    stillReady: boolean;
  };
  circuitLog: { lines: number; first: string[] };
  largest: Record<string, Largest>;
  functions: Record<string, FunctionCalls>;
  /** Delete → gone; finished Jobs left to the TTL controller (ttlSecondsAfterFinished) are counted apart, not as left, and what they own goes with them. */
  delete: { seconds?: number; left?: string; jobsLeftToTtl: number; reappeared: boolean };
  /** Who completed the Jobs (the committed runs name this `standIn`: it was always the stand-in then). */
  jobs: { by: 'stand-in' | 'nodes'; claimsBound: number; jobsCompleted: number; errors: number; lastError: string };
}

/** CPU seconds so far of each component up.sh started (by /proc; the pids file names them). */
export function cpuSnapshot(stateDir: string): Map<string, number> {
  const out = new Map<string, number>();
  // The whole machine too: what is busy outside the plane (other work sharing the cores) is `machine` minus the rest.
  out.set('machine (all processes)', busySecondsOfProcStat(readFileSync('/proc/stat', 'utf8')));
  for (const { pid, name } of parsePids(readFileSync(join(stateDir, 'pids'), 'utf8'))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const component = componentOf(name);
    out.set(component, (out.get(component) ?? 0) + cpuSecondsOfStat(stat));
  }
  return out;
}

function cpuPerMinute(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  elapsedSeconds: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [component, value] of after) out[component] = round(((value - (before.get(component) ?? 0)) * 60) / elapsedSeconds, 2);
  return out;
}

/** Crossplane's breaker counters and composed-resource watches, from one read of its metrics (empty when it can't be read). */
async function crossplaneCounters(): Promise<{ circuit: Map<string, number>; watches: Map<string, number> }> {
  try {
    const samples = parsePrometheus(await (await fetch(CROSSPLANE_METRICS)).text());
    return { circuit: circuitCounts(samples), watches: composedWatches(samples) };
  } catch {
    return { circuit: new Map(), watches: new Map() };
  }
}

export const ETCD_METRICS = 'http://127.0.0.1:23790/metrics';

async function etcdMutationsNow(): Promise<number> {
  try {
    return etcdMutations(parsePrometheus(await (await fetch(ETCD_METRICS)).text()));
  } catch {
    return Number.NaN;
  }
}

/** `name → resourceVersion` of the cache's objects, by kind (metadata only). */
async function versionsOf(plane: Plane, ns: string): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  const kinds: [string, string, string][] = [
    ['ModelCache', API, 'modelcaches'],
    ['ModelCacheShard', API, 'modelcacheshards'],
    ['ModelCacheHydration', API, 'modelcachehydrations'],
    ['Object', OBJECTS, 'objects'],
  ];
  for (const [kind, apiVersion, plural] of kinds) {
    const items = await listAll(plane.control, collectionPath(apiVersion, plural, ns), {}, 500, METADATA_ONLY);
    out.set(kind, new Map(items.map((item) => [nameOf(item), text((item['metadata'] as Json | undefined)?.['resourceVersion'])])));
  }
  return out;
}

async function writesOf(kube: Kube): Promise<Map<string, number>> {
  return writeCounts(parsePrometheus(await kube.text('/metrics')));
}

const logFile = (stateDir: string, name: string): string => join(stateDir, 'logs', `${name}.log`);
const sizeOf = (file: string): number => (existsSync(file) ? statSync(file).size : 0);
function logSince(file: string, offset: number): string {
  if (!existsSync(file)) return '';
  return readFileSync(file).subarray(offset).toString('utf8');
}

const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
const nameOf = (o: Json): string => text((o['metadata'] as Json | undefined)?.['name']);
/**
 * The composite that controls a composed resource: its controller reference.
 * (Its `crossplane.io/composite` label names the root of the tree, the
 * ModelCache, for every level below it.)
 */
function ownerOf(o: Json): string | undefined {
  const refs = (o['metadata'] as Json | undefined)?.['ownerReferences'];
  const controller: unknown = Array.isArray(refs) ? refs.find((ref) => isObject(ref) && ref['controller'] === true) : undefined;
  return isObject(controller) && typeof controller['name'] === 'string' ? controller['name'] : undefined;
}
const condition = (o: Json | undefined, type: string): Json | undefined => {
  const conditions = (o?.['status'] as Json | undefined)?.['conditions'];
  return Array.isArray(conditions) ? (conditions.find((c) => isObject(c) && c['type'] === type) as Json | undefined) : undefined;
};

async function getOrUndefined(kube: Kube, path: string): Promise<Json | undefined> {
  try {
    return (await kube.call('GET', path)) as Json;
  } catch (error) {
    if (error instanceof Error && /HTTP 404/.test(error.message)) return undefined;
    throw error;
  }
}

/** The largest object of a list, by its JSON's bytes as the API server returns it (managedFields included). */
async function largestOf(kube: Kube, path: string, query: Record<string, string> = {}): Promise<Largest> {
  let largest: Largest = { name: '', bytes: 0 };
  for (const item of await listAll(kube, path, query, 250)) {
    const bytes = Buffer.byteLength(JSON.stringify(item));
    if (bytes > largest.bytes) largest = { name: nameOf(item), bytes };
  }
  return largest;
}

export async function setUp(plane: Plane, rig: Rig, log: (line: string) => void): Promise<void> {
  for (const object of teamObjects(rig))
    await applyObject(plane.control, object, object['kind'] === 'Namespace' ? 'namespaces' : 'secrets');
  await mapLimit(rig.clusters, 16, (cluster) => applyObject(plane.control, clusterProviderConfig(rig, cluster), 'clusterproviderconfigs'));
  await mapLimit(rig.clusters, 16, async (cluster) => {
    await applyObject(plane.control, inferenceCluster(rig, cluster), 'inferenceclusters');
    await patchStatus(plane.control, `${collectionPath(API, 'inferenceclusters')}/${cluster.name}`, provisionedStatus(cluster));
  });
  log(`${rig.clusters.length} InferenceClusters and ClusterProviderConfigs over ${WORKLOAD_SERVERS.join(', ')} (${rig.mode} namespaces)`);
}

/** Remove what setUp wrote for the clusters (the control-plane namespace stays; the workload namespaces stay: no namespace controller runs there). */
export async function tearDown(plane: Plane, rig: Rig): Promise<void> {
  await mapLimit(rig.clusters, 16, async (cluster) => {
    await deleteObject(plane.control, `${collectionPath(API, 'inferenceclusters')}/${cluster.name}`);
    await deleteObject(plane.control, `${collectionPath(OBJECTS, 'clusterproviderconfigs')}/${cluster.name}`);
  });
}

/** What a cache composes on a workload server, Jobs first (what the others may be owned by). */
const REMOTE_KINDS: readonly [string, string][] = [
  ['jobs', '/apis/batch/v1/jobs'],
  ['persistentvolumeclaims', '/api/v1/persistentvolumeclaims'],
  ['secrets', '/api/v1/secrets'],
  ['serviceaccounts', '/api/v1/serviceaccounts'],
  ['roles', '/apis/rbac.authorization.k8s.io/v1/roles'],
  ['rolebindings', '/apis/rbac.authorization.k8s.io/v1/rolebindings'],
];

function ownerUids(object: Json): string[] {
  const references = (object['metadata'] as Json | undefined)?.['ownerReferences'];
  return Array.isArray(references) ? references.map((r) => text((r as Json | undefined)?.['uid'])) : [];
}

/**
 * What of the cache is left: the control plane's XRs and Objects, and its
 * claims, Jobs, Secrets and Job access on the workload servers; and how many
 * finished Jobs wait there for their TTL (the hydration lets a finished Job,
 * and what it hands the Job, go to the TTL controller by design: not counted
 * as left).
 */
async function leftOf(plane: Plane, rig: Rig): Promise<{ left: string | undefined; leftToTtl: number }> {
  const ns = rig.namespace;
  const count = async (kube: Kube, path: string, query: Record<string, string> = {}): Promise<number> =>
    (await listAll(kube, path, query, 500, METADATA_ONLY)).length;
  const left: string[] = [];
  if (await getOrUndefined(plane.control, `${collectionPath(API, 'modelcaches', ns)}/${rig.cache}`)) left.push('the ModelCache');
  const selector = { labelSelector: hydrationSelector(rig) };
  const shards = await count(plane.control, collectionPath(API, 'modelcacheshards', ns), selector);
  const hydrations = await count(plane.control, collectionPath(API, 'modelcachehydrations', ns), selector);
  const objects = await count(plane.control, collectionPath(OBJECTS, 'objects', ns));
  if (shards) left.push(`${shards} shards`);
  if (hydrations) left.push(`${hydrations} hydrations`);
  if (objects) left.push(`${objects} Objects`);
  const namespaces = new Set(rig.clusters.map((c) => c.remoteNamespace));
  let leftToTtl = 0;
  for (const [server, kube] of plane.workloads) {
    // A finished Job with a TTL is left to the TTL controller, and what it owns (its access, its emptied Secret) goes with it.
    const withJobs = new Set<string>();
    for (const [plural, path] of REMOTE_KINDS) {
      const jobs = plural === 'jobs';
      const query = { labelSelector: `${LABEL_MODELCACHE}=${rig.cache}` };
      const items = await listAll(kube, path, query, 500, jobs ? undefined : METADATA_ONLY);
      let ours = items.filter((o) => namespaces.has(text((o['metadata'] as Json | undefined)?.['namespace'])));
      if (jobs) {
        const toTtl = ours.filter(
          (job) => jobFinished(job) && typeof (job['spec'] as Json | undefined)?.['ttlSecondsAfterFinished'] === 'number',
        );
        leftToTtl += toTtl.length;
        for (const job of toTtl) withJobs.add(text((job['metadata'] as Json | undefined)?.['uid']));
        ours = ours.filter((job) => !toTtl.includes(job));
      } else {
        ours = ours.filter((o) => !ownerUids(o).some((uid) => withJobs.has(uid)));
      }
      if (ours.length) left.push(`${ours.length} ${plural} on ${server}`);
    }
  }
  return { left: left.length ? left.join(', ') : undefined, leftToTtl };
}

export async function runFleet(plane: Plane, options: FleetOptions): Promise<FleetResult> {
  const { n, log } = options;
  const rig = planRig(n, options.namespace, options.cache, plane.info.workloadNamespace);
  const ns = rig.namespace;
  const logOffsets = new Map(['crossplane', ...FUNCTIONS].map((name) => [name, sizeOf(logFile(plane.stateDir, name))]));
  const atStart = await crossplaneCounters();

  const setupStart = Date.now();
  await setUp(plane, rig, log);
  const setupSeconds = seconds(setupStart, Date.now())!;

  const jobs = options.jobs === 'nodes' ? new JobWatch(plane.workloads, rig) : new StandIn(plane.workloads, rig);
  const cpuAtApply = cpuSnapshot(plane.stateDir);
  const writesAtApply = await writesOf(plane.control);
  const t0 = Date.now();
  await applyObject(plane.control, modelCache(rig, options.repo), 'modelcaches');
  jobs.start();
  log(`applied ModelCache ${ns}/${rig.cache} selecting ${n} clusters`);

  const hydrationNames = new Set(rig.clusters.map((c) => c.hydration));
  const seenObjects = new Map<string, Set<string>>();
  const perCluster = objectsPerCluster(rig.mode);
  let tHydrations: number | undefined;
  let tObjects: number | undefined;
  let tReady: number | undefined;
  let cache: Json | undefined;
  let progress = '';
  const deadline = t0 + options.convergeTimeoutSeconds * 1000;
  let hydrationsSeen = 0;
  let objectsSeen = 0;
  let clustersWithObjects = 0;
  while (tReady === undefined && Date.now() < deadline) {
    let ready = false;
    try {
      if (tHydrations === undefined) {
        const selector = { labelSelector: hydrationSelector(rig) };
        const found = await listAll(plane.control, collectionPath(API, 'modelcachehydrations', ns), selector, 500, METADATA_ONLY);
        hydrationsSeen = found.filter((h) => hydrationNames.has(nameOf(h))).length;
        if (hydrationsSeen === n) tHydrations = Date.now();
      }
      if (tObjects === undefined) {
        const objects = await listAll(plane.control, collectionPath(OBJECTS, 'objects', ns), {}, 500, METADATA_ONLY);
        objectsSeen = objects.length;
        for (const object of objects) {
          const owner = ownerOf(object);
          if (owner === undefined || !hydrationNames.has(owner)) continue;
          const seen = seenObjects.get(owner) ?? new Set<string>();
          seen.add(nameOf(object));
          seenObjects.set(owner, seen);
        }
        clustersWithObjects = [...hydrationNames].filter((h) => (seenObjects.get(h)?.size ?? 0) >= perCluster).length;
        if (clustersWithObjects === n) tObjects = Date.now();
      }
      progress = `${hydrationsSeen}/${n} hydrations, ${clustersWithObjects}/${n} clusters with their ${perCluster} Objects (${objectsSeen} listed)`;
      cache = await getOrUndefined(plane.control, `${collectionPath(API, 'modelcaches', ns)}/${rig.cache}`);
      const summary = ((cache?.['status'] as Json | undefined)?.['summary'] as Json | undefined) ?? {};
      ready = condition(cache, 'Ready')?.['status'] === 'True' && summary['ready'] === `${n}/${n}`;
      if (ready) tReady = Date.now();
      log(
        `${seconds(t0, Date.now())} s: ${progress}, ${jobs.completed.size}/${n} Jobs completed, cache ready ${text(summary['ready']) || '-'}`,
      );
    } catch (error) {
      // The plane too busy to answer even after the client's retries: say so, poll again.
      log(`poll failed (${error instanceof Error ? error.message.slice(0, 200) : String(error)}); polling again`);
    }
    if (!ready) await sleep(options.pollMs);
  }
  await jobs.stop();
  const tLastJob = jobs.lastCompletedAt(n);
  const cpuAtReady = cpuSnapshot(plane.stateDir);
  const convergeSeconds = (Date.now() - t0) / 1000;
  const atReady = await crossplaneCounters();
  const convergeWrites = ratesPerMinute(writesAtApply, await writesOf(plane.control), convergeSeconds);
  const triggers = breakerTriggers(circuitLogLines(logSince(logFile(plane.stateDir, 'crossplane'), logOffsets.get('crossplane') ?? 0)));
  const summary = ((cache?.['status'] as Json | undefined)?.['summary'] as Json | undefined) ?? {};
  const timedOut =
    tReady === undefined
      ? `after ${options.convergeTimeoutSeconds} s: ${progress}, ${jobs.completed.size}/${n} Jobs completed, summary ${JSON.stringify(summary)}`
      : undefined;
  if (timedOut) log(`gave up ${timedOut}`);

  let rest: FleetResult['rest'];
  if (options.restSeconds > 0) {
    log(`at rest: settling ${options.settleSeconds} s, then measuring ${options.restSeconds} s`);
    await sleep(options.settleSeconds * 1000);
    const before = {
      versions: await versionsOf(plane, ns),
      etcd: await etcdMutationsNow(),
      cpu: cpuSnapshot(plane.stateDir),
      writes: await writesOf(plane.control),
      circuit: (await crossplaneCounters()).circuit,
      at: Date.now(),
    };
    const workloadBefore = new Map<string, Map<string, number>>();
    for (const [server, kube] of plane.workloads) workloadBefore.set(server, await writesOf(kube));
    await sleep(options.restSeconds * 1000);
    const elapsed = (Date.now() - before.at) / 1000;
    const writes = ratesPerMinute(before.writes, await writesOf(plane.control), elapsed);
    const etcdAfter = await etcdMutationsNow();
    const versionsAfter = await versionsOf(plane, ns);
    const objectsWritten: Record<string, Changed> = {};
    for (const [kind, names] of versionsAfter) objectsWritten[kind] = changedObjects(before.versions.get(kind) ?? new Map(), names);
    const workloadWritesPerMinute: Record<string, number> = {};
    for (const [server, kube] of plane.workloads)
      workloadWritesPerMinute[server] = totalPerMinute(ratesPerMinute(workloadBefore.get(server)!, await writesOf(kube), elapsed));
    const after = await getOrUndefined(plane.control, `${collectionPath(API, 'modelcaches', ns)}/${rig.cache}`);
    rest = {
      seconds: round(elapsed, 0),
      controlPlaneWritesPerMinute: totalPerMinute(writes),
      writes,
      objectsWritten,
      etcdMutationsPerMinute: round(((etcdAfter - before.etcd) * 60) / elapsed, 1),
      workloadWritesPerMinute,
      cpuSecondsPerMinute: cpuPerMinute(before.cpu, cpuSnapshot(plane.stateDir), elapsed),
      circuit: deltas(before.circuit, (await crossplaneCounters()).circuit),
      stillReady: condition(after, 'Ready')?.['status'] === 'True',
    };
    log(
      `at rest: ${rest.controlPlaneWritesPerMinute} writes/min on the control plane; CPU-s/min ${JSON.stringify(rest.cpuSecondsPerMinute)}`,
    );
  }

  const largest: Record<string, Largest> = {
    ModelCache: await largestOf(plane.control, collectionPath(API, 'modelcaches', ns)),
    ModelCacheShard: await largestOf(plane.control, collectionPath(API, 'modelcacheshards', ns)),
    ModelCacheHydration: await largestOf(plane.control, collectionPath(API, 'modelcachehydrations', ns)),
    Object: await largestOf(plane.control, collectionPath(OBJECTS, 'objects', ns)),
  };
  const shards = (
    await listAll(plane.control, collectionPath(API, 'modelcacheshards', ns), { labelSelector: hydrationSelector(rig) }, 500, METADATA_ONLY)
  ).length;
  const functions: Record<string, FunctionCalls> = {};
  for (const name of FUNCTIONS) functions[name] = functionCalls(logSince(logFile(plane.stateDir, name), logOffsets.get(name) ?? 0));

  // Delete: everything the cache composed, here and on the workload servers, gone.
  const tDelete = Date.now();
  await deleteObject(plane.control, `${collectionPath(API, 'modelcaches', ns)}/${rig.cache}`);
  let left: string | undefined = 'not checked';
  let jobsLeftToTtl = 0;
  let tGone: number | undefined;
  while (Date.now() < tDelete + options.goneTimeoutSeconds * 1000) {
    ({ left, leftToTtl: jobsLeftToTtl } = await leftOf(plane, rig));
    if (left === undefined) {
      tGone = Date.now();
      break;
    }
    await sleep(options.pollMs);
  }
  log(
    tGone
      ? `deleted: everything gone in ${seconds(tDelete, tGone)} s`
      : `delete: still there after ${options.goneTimeoutSeconds} s: ${left}`,
  );
  let reappeared = false;
  if (tGone !== undefined) {
    await sleep(Math.min(20_000, options.pollMs * 4));
    const again = (await leftOf(plane, rig)).left;
    reappeared = again !== undefined;
    if (again) log(`after the delete, reappeared: ${again}`);
  }
  await tearDown(plane, rig);

  const crossplaneLog = circuitLogLines(logSince(logFile(plane.stateDir, 'crossplane'), logOffsets.get('crossplane') ?? 0));
  return {
    n,
    plane: plane.info,
    shards,
    setupSeconds,
    applyToHydrations: seconds(t0, tHydrations),
    applyToObjects: seconds(t0, tObjects),
    applyToLastJob: seconds(t0, tLastJob),
    lastJobToReady: tLastJob !== undefined && tReady !== undefined ? seconds(tLastJob, tReady) : undefined,
    applyToReady: seconds(t0, tReady),
    summary,
    ready: tReady !== undefined,
    ...(timedOut ? { timedOut } : {}),
    converge: {
      cpuSecondsPerMinute: cpuPerMinute(cpuAtApply, cpuAtReady, convergeSeconds),
      circuit: deltas(atStart.circuit, atReady.circuit),
      writes: convergeWrites,
      triggers,
      watches: deltas(atStart.watches, atReady.watches),
    },
    ...(rest ? { rest } : {}),
    circuitLog: { lines: crossplaneLog.length, first: crossplaneLog.slice(0, 3).map((line) => line.slice(0, 300)) },
    largest,
    functions,
    delete: { seconds: seconds(tDelete, tGone), ...(left ? { left } : {}), jobsLeftToTtl, reappeared },
    jobs: {
      by: jobs.by,
      claimsBound: jobs.bound.size,
      jobsCompleted: jobs.completed.size,
      errors: jobs.errors,
      lastError: jobs.lastError.slice(0, 300),
    },
  };
}
