// What completes the fleet's Jobs, two ways. On a plane without nodes (the
// benchmark's: a workload cluster of `make up` is then a bare kube-apiserver,
// with no kubelet, scheduler, volume or Job controllers), THE STAND-IN:
// what test/e2e/workload-kubelet.sh's `bind-claims` and `complete-job` do,
// batched for every simulated cluster at once. It writes the status those
// controllers would, through the real API server, which validates it; nothing
// else of the plane is simulated. On a plane with real nodes (the e2e's),
// the WATCH: the clusters' own provisioner and Job controller do the work,
// the Jobs' pods download from the plane's hub, and this only records what
// they did and when. Either way one loop per workload API server lists the
// cache's claims and Jobs across all its namespaces (by the cache's label).

import { setTimeout as sleep } from 'node:timers/promises';
import { LABEL_MODELCACHE } from '#lib';
import { listAll, mapLimit, patchStatus, type Json, type Kube } from './kube.js';
import { namespacesByServer, type Rig, type WorkloadServer } from './rig.js';

type Obj = Json & { metadata?: { name?: string; namespace?: string } };
const nameOf = (o: Obj): string => o.metadata?.name ?? '';
const nsOf = (o: Obj): string => o.metadata?.namespace ?? '';
const field = (o: unknown, ...path: string[]): unknown => {
  let at = o;
  for (const key of path) at = typeof at === 'object' && at !== null ? (at as Json)[key] : undefined;
  return at;
};

/** A Job's finished state (Complete or Failed True), as the Job controller reports it. */
export function jobFinished(job: unknown): boolean {
  const conditions = field(job, 'status', 'conditions');
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => (field(c, 'type') === 'Complete' || field(c, 'type') === 'Failed') && field(c, 'status') === 'True')
  );
}

/** The status a volume provisioner and the PV controller leave on a claim they bound: the modes and size it asked for. */
export function boundClaimStatus(claim: unknown): Json {
  const modes = field(claim, 'spec', 'accessModes');
  const size = field(claim, 'spec', 'resources', 'requests', 'storage');
  return {
    phase: 'Bound',
    accessModes: Array.isArray(modes) ? modes : [],
    ...(typeof size === 'string' ? { capacity: { storage: size } } : {}),
  };
}

/** The status the Job controller writes when the pod succeeded (SuccessCriteriaMet, then Complete). */
export function completedJobStatus(at: Date): Json {
  const t = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const condition = (type: string): Json => ({
    type,
    status: 'True',
    reason: 'CompletionsReached',
    message: 'Reached expected number of succeeded pods',
    lastProbeTime: t,
    lastTransitionTime: t,
  });
  return {
    startTime: t,
    active: 0,
    ready: 0,
    succeeded: 1,
    completionTime: t,
    conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
  };
}

/** One loop per workload API server over the cache's claims and Jobs; what a pass does is the subclass's. */
export abstract class FleetJobs {
  /** What drives the Jobs, as the benchmark's result names it. */
  abstract readonly by: 'stand-in' | 'nodes';
  /** When each Job completed (ms since the epoch), by `<server>/<namespace>/<job>`. */
  readonly completed = new Map<string, number>();
  readonly bound = new Set<string>();
  errors = 0;
  lastError = '';
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly servers: ReadonlyMap<WorkloadServer, Kube>,
    private readonly rig: Rig,
    private readonly everyMs = 2000,
    protected readonly inFlight = 8,
  ) {}

  /** Start one loop per workload API server. */
  start(): void {
    this.running = true;
    for (const [server, namespaces] of namespacesByServer(this.rig)) {
      if (namespaces.size === 0) continue;
      const kube = this.servers.get(server)!;
      this.loops.push(this.loop(server, kube, namespaces));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(server: WorkloadServer, kube: Kube, namespaces: ReadonlySet<string>): Promise<void> {
    while (this.running) {
      try {
        await this.sweep(server, kube, namespaces);
      } catch (error) {
        this.errors += 1;
        this.lastError = error instanceof Error ? error.message : String(error);
      }
      await sleep(this.everyMs);
    }
  }

  /** The cache's claims and Jobs on one server, in the rig's namespaces there. */
  protected async ours(kube: Kube, namespaces: ReadonlySet<string>): Promise<{ claims: Obj[]; jobs: Obj[] }> {
    const query = { labelSelector: `${LABEL_MODELCACHE}=${this.rig.cache}` };
    const inRig = (o: Obj): boolean => namespaces.has(nsOf(o));
    return {
      claims: (await listAll(kube, '/api/v1/persistentvolumeclaims', query)).filter(inRig),
      jobs: (await listAll(kube, '/apis/batch/v1/jobs', query)).filter(inRig),
    };
  }

  protected abstract sweep(server: WorkloadServer, kube: Kube, namespaces: ReadonlySet<string>): Promise<void>;

  /** When the last Job completed, once `count` have. */
  lastCompletedAt(count: number): number | undefined {
    if (this.completed.size < count) return undefined;
    return Math.max(...this.completed.values());
  }
}

/** The batched stand-in, for a plane without nodes: binds every Pending claim, completes every Job whose claim is Bound. */
export class StandIn extends FleetJobs {
  readonly by = 'stand-in';

  /** One pass over one server: bind what is Pending, then complete what can run. */
  protected async sweep(server: WorkloadServer, kube: Kube, namespaces: ReadonlySet<string>): Promise<void> {
    const { claims, jobs } = await this.ours(kube, namespaces);
    const boundIn = new Set<string>();
    const pending: Obj[] = [];
    for (const claim of claims) {
      if (field(claim, 'status', 'phase') === 'Bound') boundIn.add(nsOf(claim));
      else pending.push(claim);
    }
    await mapLimit(pending, this.inFlight, async (claim) => {
      await patchStatus(kube, `/api/v1/namespaces/${nsOf(claim)}/persistentvolumeclaims/${nameOf(claim)}`, boundClaimStatus(claim));
      this.bound.add(`${server}/${nsOf(claim)}/${nameOf(claim)}`);
      boundIn.add(nsOf(claim));
    });
    const runnable = jobs.filter((job) => !jobFinished(job) && boundIn.has(nsOf(job)));
    await mapLimit(runnable, this.inFlight, async (job) => {
      // A Job unfinished again was re-created: a kubelet would run it again too.
      const key = `${server}/${nsOf(job)}/${nameOf(job)}`;
      await patchStatus(kube, `/apis/batch/v1/namespaces/${nsOf(job)}/jobs/${nameOf(job)}`, completedJobStatus(new Date()));
      this.completed.set(key, Date.now());
    });
  }
}

/**
 * The watch, for a plane with real nodes: writes nothing. A claim counts once
 * its provisioner bound it, a Job once the Job controller completed it, at
 * the completionTime it wrote (whole seconds).
 */
export class JobWatch extends FleetJobs {
  readonly by = 'nodes';

  protected async sweep(server: WorkloadServer, kube: Kube, namespaces: ReadonlySet<string>): Promise<void> {
    const { claims, jobs } = await this.ours(kube, namespaces);
    for (const claim of claims)
      if (field(claim, 'status', 'phase') === 'Bound') this.bound.add(`${server}/${nsOf(claim)}/${nameOf(claim)}`);
    for (const job of jobs) {
      const completionTime = field(job, 'status', 'completionTime');
      const completedAt = typeof completionTime === 'string' ? Date.parse(completionTime) : Number.NaN;
      const key = `${server}/${nsOf(job)}/${nameOf(job)}`;
      if (Number.isFinite(completedAt) && !this.completed.has(key)) this.completed.set(key, completedAt);
    }
  }
}
