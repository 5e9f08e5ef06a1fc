// A simulated workload cluster, and the provider-kubernetes that reaches it: a
// small, honest test double for lifecycle tests that drive several functions
// the way Crossplane would (test/support/control-plane.ts).
//
// What it does, and nothing more:
// - provider-kubernetes: applies each Object's manifest to the cluster its
//   ClusterProviderConfig names (creating or updating only as the Object's
//   management policies allow), reports the remote object back under
//   status.atProvider.manifest, and derives the Object's Ready condition from
//   its readiness policy (SuccessfulCreate, or the Object's own CEL query,
//   evaluated with a real CEL evaluator). When an Object goes away, the remote
//   object goes with it only if the policies include Delete.
// - the cluster's controllers, each time the clock moves on: a PVC binds when
//   the cluster has its StorageClass; a Job's pod runs once every claim and
//   Secret it needs is there (a claim Bound before this tick), and finishes a
//   tick later (Complete, or Failed with BackoffLimitExceeded while the
//   cluster's jobs are made to fail); a finished Job is deleted
//   ttlSecondsAfterFinished later, as the TTL controller does; a Deployment
//   becomes Available under the same conditions a Job's pod runs under.
//
// What it does not do: validate objects against an API schema (any kind is
// accepted), schedule onto nodes, run containers, or simulate DRA. Every
// other kind is stored as applied.

import { evaluate } from '@marcbachmann/cel-js';
import { OBJECT_API_VERSION, OBJECT_KIND, asArray, getIn, getObject, getString, type JsonObject } from '#lib';

/** Kubernetes' own words on a Job that ran out of retries. */
export const BACKOFF_LIMIT_EXCEEDED = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' } as const;

export interface WorkloadClusterOptions {
  /** The ClusterProviderConfig that reaches this cluster (what an InferenceCluster reports in status.providerConfigRef.name). */
  providerConfig: string;
  /** StorageClasses a PVC can bind with here. */
  storageClasses: readonly string[];
}

interface Stored {
  object: JsonObject;
  /** Clock seconds when a Job finished (Complete or Failed). */
  finishedAt?: number;
}

/** What names an object on a cluster: apiVersion, kind, namespace (empty for a cluster-scoped one) and name. */
function identityParts(object: JsonObject): [string, string, string, string] {
  return [
    getString(object, 'apiVersion') ?? '',
    getString(object, 'kind') ?? '',
    getString(object, 'metadata', 'namespace') ?? '',
    getString(object, 'metadata', 'name') ?? '',
  ];
}

function identity(object: JsonObject): string {
  return identityParts(object).join('/');
}

function replicasOf(deployment: JsonObject): number {
  const replicas = getIn(deployment, 'spec', 'replicas');
  return typeof replicas === 'number' ? replicas : 1;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

export class WorkloadCluster {
  readonly providerConfig: string;
  private readonly storageClasses: ReadonlySet<string>;
  private readonly objects = new Map<string, Stored>();
  /** Seconds since the simulation started: time moves only with advance(). */
  private clock = 0;
  /** Why every Job here fails, while it does (e.g. egress to the hub is blocked); undefined when Jobs succeed. */
  private jobFault: string | undefined;

  constructor(options: WorkloadClusterOptions) {
    this.providerConfig = options.providerConfig;
    this.storageClasses = new Set(options.storageClasses);
  }

  /** Make every Job that runs from now on fail (its pods exit non-zero until the backoff limit), and say why. */
  failJobs(why: string): void {
    this.jobFault = why;
  }

  /** The operator fixed the cause: Jobs that run from now on succeed. */
  repair(): void {
    this.jobFault = undefined;
  }

  /** The remote object as the cluster holds it now (a copy), or undefined. */
  get(apiVersion: string, kind: string, namespace: string, name: string): JsonObject | undefined {
    const stored = this.objects.get([apiVersion, kind, namespace, name].join('/'));
    return stored ? clone(stored.object) : undefined;
  }

  /** Every object on the cluster (copies). */
  list(): JsonObject[] {
    return [...this.objects.values()].map(({ object }) => clone(object));
  }

  /** Every object on the cluster, as `Kind/name`, sorted: what `kubectl get` would list. */
  inventory(): string[] {
    return [...this.objects.values()]
      .map(({ object }) => `${getString(object, 'kind') ?? ''}/${getString(object, 'metadata', 'name') ?? ''}`)
      .sort();
  }

  /** Create the object, as the API server would: with its initial status. */
  create(manifest: JsonObject): JsonObject {
    const object = clone(manifest);
    const initial = this.initialStatus(object);
    if (initial !== undefined) object['status'] = initial;
    this.objects.set(identity(object), { object });
    return clone(object);
  }

  /** Replace everything but the status, as an apply of the full manifest does. */
  update(manifest: JsonObject): JsonObject {
    const stored = this.objects.get(identity(manifest));
    if (!stored) return this.create(manifest);
    const status = stored.object['status'];
    stored.object = clone(manifest);
    if (status !== undefined) stored.object['status'] = status;
    return clone(stored.object);
  }

  delete(manifest: JsonObject): void {
    this.objects.delete(identity(manifest));
  }

  /**
   * Let `seconds` pass: Jobs whose pods could run since the last tick finish,
   * Deployments whose pods could start become Available, claims bind, and
   * the TTL controller removes Jobs finished long enough ago.
   */
  advance(seconds: number): void {
    const runnable = [...this.objects.values()].filter(({ object }) => this.podsCanStart(object));
    this.clock += seconds;
    for (const stored of runnable) {
      if (getString(stored.object, 'kind') === 'Job' && stored.finishedAt === undefined) this.finishJob(stored);
      if (getString(stored.object, 'kind') === 'Deployment') this.makeAvailable(stored.object);
    }
    for (const { object } of this.objects.values()) {
      if (getString(object, 'kind') === 'PersistentVolumeClaim') this.bind(object);
    }
    for (const [key, stored] of this.objects) {
      const ttl = getIn(stored.object, 'spec', 'ttlSecondsAfterFinished');
      if (stored.finishedAt !== undefined && typeof ttl === 'number' && this.clock >= stored.finishedAt + ttl) this.objects.delete(key);
    }
  }

  private initialStatus(object: JsonObject): JsonObject | undefined {
    switch (getString(object, 'kind')) {
      case 'PersistentVolumeClaim':
        return { phase: 'Pending' };
      case 'Job':
        // The Job controller creates the pod at once; it counts as active while it waits for its volumes.
        return { active: 1 };
      case 'Deployment': {
        const count = replicasOf(object);
        return {
          replicas: count,
          unavailableReplicas: count,
          conditions: [
            {
              type: 'Available',
              status: 'False',
              reason: 'MinimumReplicasUnavailable',
              message: 'Deployment does not have minimum availability.',
            },
          ],
        };
      }
      default:
        return undefined;
    }
  }

  private bind(pvc: JsonObject): void {
    const className = getString(pvc, 'spec', 'storageClassName');
    if (className === undefined || !this.storageClasses.has(className)) return;
    pvc['status'] = {
      phase: 'Bound',
      accessModes: clone(asArray(getIn(pvc, 'spec', 'accessModes'))) as string[],
      capacity: { storage: getString(pvc, 'spec', 'resources', 'requests', 'storage') ?? '' },
    };
  }

  private finishJob(stored: Stored): void {
    stored.finishedAt = this.clock;
    const backoffLimit = getIn(stored.object, 'spec', 'backoffLimit');
    stored.object['status'] = this.jobFault
      ? {
          failed: (typeof backoffLimit === 'number' ? backoffLimit : 6) + 1,
          conditions: [{ type: 'Failed', status: 'True', ...BACKOFF_LIMIT_EXCEEDED }],
        }
      : { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] };
  }

  private makeAvailable(deployment: JsonObject): void {
    const count = replicasOf(deployment);
    deployment['status'] = {
      replicas: count,
      readyReplicas: count,
      availableReplicas: count,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
      ],
    };
  }

  /**
   * A pod of this Job or Deployment could start: every claim it mounts exists
   * in its namespace and is Bound, and every Secret it reads a key from (an
   * env secretKeyRef, a secret volume that isn't optional) exists with that key.
   */
  private podsCanStart(object: JsonObject): boolean {
    const kind = getString(object, 'kind');
    if (kind !== 'Job' && kind !== 'Deployment') return false;
    const namespace = getString(object, 'metadata', 'namespace') ?? 'default';
    const pod = getObject(object, 'spec', 'template', 'spec');
    for (const volume of asArray(getIn(pod, 'volumes'))) {
      const claim = getString(volume, 'persistentVolumeClaim', 'claimName');
      if (claim !== undefined && getString(this.get('v1', 'PersistentVolumeClaim', namespace, claim), 'status', 'phase') !== 'Bound')
        return false;
      const secret = getString(volume, 'secret', 'secretName');
      if (secret !== undefined && getIn(volume, 'secret', 'optional') !== true && !this.get('v1', 'Secret', namespace, secret))
        return false;
    }
    const containers = [...asArray(getIn(pod, 'initContainers')), ...asArray(getIn(pod, 'containers'))];
    for (const env of containers.flatMap((container) => asArray(getIn(container, 'env')))) {
      const ref = getObject(env, 'valueFrom', 'secretKeyRef');
      if (!ref || getIn(ref, 'optional') === true) continue;
      const secret = this.get('v1', 'Secret', namespace, getString(ref, 'name') ?? '');
      if (getString(secret, 'data', getString(ref, 'key') ?? '') === undefined) return false;
    }
    return true;
  }
}

// --- provider-kubernetes -------------------------------------------------------

type Policy = 'Observe' | 'Create' | 'Update' | 'Delete' | 'LateInitialize' | '*';

function policiesOf(object: JsonObject): Policy[] {
  const policies = asArray(getIn(object, 'spec', 'managementPolicies')).filter((p): p is Policy => typeof p === 'string');
  return policies.length > 0 ? policies : ['*'];
}

function allows(policies: readonly Policy[], policy: Policy): boolean {
  return policies.includes('*') || policies.includes(policy);
}

export function isProviderObject(object: JsonObject): boolean {
  return getString(object, 'apiVersion') === OBJECT_API_VERSION && getString(object, 'kind') === OBJECT_KIND;
}

function condition(type: string, status: boolean, reason: string, message?: string): JsonObject {
  return { type, status: status ? 'True' : 'False', reason, ...(message === undefined ? {} : { message }) };
}

/** The Ready condition the Object's readiness policy derives from the remote object. */
function readiness(object: JsonObject, remote: JsonObject | undefined): JsonObject {
  if (remote === undefined) return condition('Ready', false, 'Unavailable', 'the remote object does not exist');
  const policy = getString(object, 'spec', 'readiness', 'policy') ?? 'SuccessfulCreate';
  switch (policy) {
    case 'SuccessfulCreate':
      return condition('Ready', true, 'Available');
    case 'DeriveFromCelQuery': {
      const query = getString(object, 'spec', 'readiness', 'celQuery') ?? '';
      try {
        return evaluate(query, { object: remote }) === true
          ? condition('Ready', true, 'Available')
          : condition('Ready', false, 'Unavailable');
      } catch {
        // A query that can't be evaluated yet (the field it reads isn't there) means not ready.
        return condition('Ready', false, 'Unavailable');
      }
    }
    default:
      throw new Error(`the simulated provider-kubernetes does not implement readiness policy ${policy}`);
  }
}

/** provider-kubernetes for every cluster it can reach, by ClusterProviderConfig name. */
export class ProviderKubernetes {
  private readonly clusters = new Map<string, WorkloadCluster>();
  /** What each Object last applied, so an unchanged manifest is not applied again. */
  private readonly applied = new Map<string, string>();

  constructor(clusters: readonly WorkloadCluster[]) {
    for (const cluster of clusters) this.clusters.set(cluster.providerConfig, cluster);
  }

  /** Let time pass on every cluster. */
  advance(seconds: number): void {
    for (const cluster of this.clusters.values()) cluster.advance(seconds);
  }

  private clusterOf(object: JsonObject): WorkloadCluster {
    const name = getString(object, 'spec', 'providerConfigRef', 'name') ?? '';
    const cluster = this.clusters.get(name);
    if (!cluster)
      throw new Error(
        `Object ${getString(object, 'metadata', 'name') ?? ''} names ClusterProviderConfig ${name}, which reaches no cluster`,
      );
    return cluster;
  }

  /**
   * Reconcile one Object (its `uid` keys what it last applied): observe the
   * remote object, create or update it as the policies allow, and return the
   * Object's new status.
   */
  reconcile(uid: string, object: JsonObject): JsonObject {
    const cluster = this.clusterOf(object);
    const manifest = getObject(object, 'spec', 'forProvider', 'manifest') ?? {};
    const policies = policiesOf(object);
    const wanted = JSON.stringify(manifest);
    let remote = cluster.get(...identityParts(manifest));
    if (remote === undefined && allows(policies, 'Create')) {
      remote = cluster.create(manifest);
      this.applied.set(uid, wanted);
    } else if (remote !== undefined && allows(policies, 'Update') && this.applied.get(uid) !== wanted) {
      remote = cluster.update(manifest);
      this.applied.set(uid, wanted);
    }
    const status: JsonObject = {};
    if (remote !== undefined) status['atProvider'] = { manifest: remote };
    const synced =
      remote === undefined
        ? condition(
            'Synced',
            false,
            'ReconcileError',
            'cannot observe the remote object: it does not exist, and the policies do not allow Create',
          )
        : condition('Synced', true, 'ReconcileSuccess');
    status['conditions'] = [readiness(object, remote), synced];
    return status;
  }

  /** The Object is gone: delete the remote object if the policies allow it, else leave it (orphaned). */
  remove(uid: string, object: JsonObject): void {
    this.applied.delete(uid);
    if (!allows(policiesOf(object), 'Delete')) return;
    const manifest = getObject(object, 'spec', 'forProvider', 'manifest') ?? {};
    this.clusterOf(object).delete(manifest);
  }
}
