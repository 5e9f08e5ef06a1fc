// THE STAND-IN, batched for a fleet: what test/e2e/workload-kubelet.sh's
// `bind-claims` and `complete-job` do, for every simulated cluster at once.
// A workload cluster of `make up` is a bare kube-apiserver (no kubelet, no
// scheduler, no volume or Job controllers), so nothing would ever bind a
// claim or run a Job's pod. This writes the status those controllers would
// write, through the real API server, which validates it. One loop per
// workload API server lists the cache's claims and Jobs across all its
// namespaces (by the cache's label), binds every Pending claim, and completes
// every unfinished Job whose claim is Bound. Nothing else of the plane is
// simulated.

import { LABEL_MODELCACHE } from '#lib';
import { listAll, mapLimit, patchStatus, type Json, type Kube } from './kube.js';
import { namespacesByServer, type Rig, type WorkloadServer } from './rig.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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

export class StandIn {
  /** When each Job was completed (ms since the epoch), by `<server>/<namespace>/<job>`. */
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
    private readonly inFlight = 8,
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

  /** One pass over one server: bind what is Pending, then complete what can run. */
  async sweep(server: WorkloadServer, kube: Kube, namespaces: ReadonlySet<string>): Promise<void> {
    const query = { labelSelector: `${LABEL_MODELCACHE}=${this.rig.cache}` };
    const ours = (o: Obj): boolean => namespaces.has(nsOf(o));
    const claims = (await listAll(kube, '/api/v1/persistentvolumeclaims', query)).filter(ours);
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
    const jobs = (await listAll(kube, '/apis/batch/v1/jobs', query)).filter(
      (job) => ours(job) && !jobFinished(job) && boundIn.has(nsOf(job)),
    );
    await mapLimit(jobs, this.inFlight, async (job) => {
      // A Job unfinished again was re-created: a kubelet would run it again too.
      const key = `${server}/${nsOf(job)}/${nameOf(job)}`;
      await patchStatus(kube, `/apis/batch/v1/namespaces/${nsOf(job)}/jobs/${nameOf(job)}`, completedJobStatus(new Date()));
      this.completed.set(key, Date.now());
    });
  }

  /** When the last Job was completed, once `count` have been. */
  lastCompletedAt(count: number): number | undefined {
    if (this.completed.size < count) return undefined;
    return Math.max(...this.completed.values());
  }
}
