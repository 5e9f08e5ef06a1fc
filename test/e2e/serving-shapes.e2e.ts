// The serving shapes of issue 14 on the live control plane of `make up`
// (docs/walkthrough-serving-shapes.md): a PrefillDecode replica whose decode
// engine is a LeaderWorkerSet gang, on a Standard cluster, and a Leader/Worker
// replica on a Dynamo cluster (a Grove PodCliqueSet with the ModelExpress
// bundle). Both read one PersistentVolumeClaim-source ModelCache: they wait
// while the claim is not Bound, composing no engine; once it is, every engine
// pod template they compose (prefill, decode leader and worker, both Grove
// cliques) carries the cache's mount contract; then they serve once the
// workloads report what their controllers would.
//
// Crossplane, provider-kubernetes, the API servers and our function servers
// are real. The workload clusters run no LeaderWorkerSet or Grove controller:
// test/e2e/manifests/serving-stand-in-crds.yaml installs stand-in CRDs that
// store those objects, and this file writes the status those controllers
// would (as workload-kubelet.sh does for Deployments and claims). The page's
// YAML blocks are excerpts of what the API servers held (UPDATE_DOCS=1
// rewrites them).

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, getIn, getObject, getString, isObject, replicaNames, type JsonObject, type JsonValue } from '#lib';
import { REPO_ROOT } from '../support/server.js';
import { asShown, checkOrUpdate } from './excerpts.js';
import {
  clusterEntry,
  type ApiServer,
  apply,
  condition,
  eventually,
  getObject as read,
  inferenceCluster,
  kubectl,
  kubectlOk,
  kubelet,
  list,
  modelCache,
  names,
  patchStatus,
  reasonOf,
  setInferenceClusterStatus,
  settled,
  standInPlane,
} from './plane.js';

const DOC = join(REPO_ROOT, 'docs', 'walkthrough-serving-shapes.md');
const STAND_INS = join(REPO_ROOT, 'test', 'e2e', 'manifests', 'serving-stand-in-crds.yaml');
// Its own namespace, clusters and claim: the other e2e files play theirs in theirs.
const NAMESPACE = 'e2e-serving-shapes';
const REMOTE = REMOTE_NAMESPACE;
const TIER = 'modelplane.ai/tier';
const CACHE = 'llama-weights';
const CLAIM = 'llama-shapes-weights';
const STANDARD = 'shapes-standard';
const DYNAMO = 'shapes-dynamo';
/** The workload cluster of the plane each InferenceCluster reports as its provider config. */
const WORKLOAD = { [STANDARD]: 'cluster-a', [DYNAMO]: 'cluster-b' } as const satisfies Record<string, ApiServer>;
const PD_REPLICA = 'llama-pd-8a41e';
const GANG_REPLICA = 'kimi-k2-9e1d7';
/** A replica's endpoint picker on its cluster: its name carries the namespace (docs/design/names.md). */
const eppOf = (replica: string): string => replicaNames({ namespace: NAMESPACE, name: replica }).epp;
const STEP_WAIT = { timeoutMs: 240_000 };

const excerpts = new Map<string, unknown>();
function excerpt(name: string, value: unknown): void {
  if (excerpts.has(name)) throw new Error(`excerpt ${name} recorded twice`);
  excerpts.set(name, JSON.parse(JSON.stringify(asShown(value))) as unknown);
}

// --- the objects --------------------------------------------------------------

/** One of the story's two InferenceClusters, both of the tier the replicas select, on its stack. */
const clusterOn = (name: string, stack: 'Standard' | 'Dynamo'): JsonObject => inferenceCluster(name, { [TIER]: 'h100' }, { stack });

const GPU = [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 8 }];
const engine = (over: JsonObject = {}): JsonObject => ({ name: 'engine', image: 'vllm/vllm-openai:v0.11.0', ...over });
const KV = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}';
const JOIN = ['/bin/sh', '-c', 'exec ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379 --block'];

function replica(name: string, cluster: string, spec: JsonObject): JsonObject {
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { 'modelplane.ai/deployment': name.replace(/-[0-9a-f]{5}$/, ''), 'modelplane.ai/cluster': cluster },
    },
    spec: { clusterName: cluster, modelCacheRef: { name: CACHE }, ...spec },
  };
}

function gang(leader: JsonObject): JsonObject[] {
  return [
    { role: 'Leader', nodePoolName: 'h100', deviceRequests: GPU, template: { spec: { containers: [engine(leader)] } } },
    {
      role: 'Worker',
      nodePoolName: 'h100',
      worker: { nodes: 1 },
      deviceRequests: GPU,
      template: { spec: { containers: [engine({ command: JOIN })] } },
    },
  ];
}

/** A disaggregated replica: a Standalone prefill engine and a LeaderWorkerSet decode gang (the Standard stack). */
const PD = replica(PD_REPLICA, STANDARD, {
  serving: { mode: 'PrefillDecode' },
  engines: [
    {
      name: 'prefill',
      phase: 'Prefill',
      copies: 1,
      members: [
        {
          role: 'Standalone',
          nodePoolName: 'h100',
          deviceRequests: GPU,
          template: { spec: { containers: [engine({ args: ['--model=$(MODELPLANE_MODEL)', '--tensor-parallel-size=8', KV] })] } },
        },
      ],
    },
    {
      name: 'decode',
      phase: 'Decode',
      copies: 1,
      members: gang({ args: ['--model=$(MODELPLANE_MODEL)', '--tensor-parallel-size=8', '--pipeline-parallel-size=2', '--port=8200', KV] }),
    },
  ],
});

/** A multi-node gang on the Dynamo stack: a Grove PodCliqueSet. */
const GANG = replica(GANG_REPLICA, DYNAMO, {
  engines: [
    {
      name: 'main',
      copies: 1,
      members: gang({
        command: [
          '/bin/sh',
          '-c',
          'ray start --head --port=6379 && exec vllm serve $(MODELPLANE_MODEL) --tensor-parallel-size=8 --pipeline-parallel-size=2',
        ],
      }),
    },
  ],
});

// --- reading the plane --------------------------------------------------------

const replicaOf = (name: string): JsonObject | undefined => read('control-plane', 'modelreplica', name, NAMESPACE);
const cacheOf = (): JsonObject | undefined => read('control-plane', 'modelcache', CACHE, NAMESPACE);

const entryOf = (cluster: string): JsonObject | undefined => clusterEntry(cacheOf(), cluster);

/** The engine workloads on a workload cluster: Deployments with an `engine` container, LeaderWorkerSets, PodCliqueSets. */
function engineWorkloads(cluster: ApiServer): JsonObject[] {
  const deployments = list(cluster, 'deployments', REMOTE).filter((d) =>
    asArray(getIn(d, 'spec', 'template', 'spec', 'containers')).some((c) => isObject(c) && c['name'] === 'engine'),
  );
  return [...deployments, ...list(cluster, 'leaderworkersets', REMOTE), ...list(cluster, 'podcliquesets', REMOTE)];
}

/** Every pod template of a workload as the API server holds it, by where it sits. */
function podTemplates(workload: JsonObject): { at: string; metadata: JsonObject; spec: JsonObject }[] {
  const kind = getString(workload, 'kind');
  const name = `${kind}/${getString(workload, 'metadata', 'name')}`;
  if (kind === 'Deployment') {
    return [
      {
        at: name,
        metadata: getObject(workload, 'spec', 'template', 'metadata') ?? {},
        spec: getObject(workload, 'spec', 'template', 'spec')!,
      },
    ];
  }
  if (kind === 'LeaderWorkerSet') {
    return ['leaderTemplate', 'workerTemplate'].map((template) => ({
      at: `${name} ${template}`,
      metadata: getObject(workload, 'spec', 'leaderWorkerTemplate', template, 'metadata') ?? {},
      spec: getObject(workload, 'spec', 'leaderWorkerTemplate', template, 'spec')!,
    }));
  }
  return asArray(getIn(workload, 'spec', 'template', 'cliques'))
    .filter(isObject)
    .map((clique) => ({
      at: `${name} clique ${getString(clique, 'name')}`,
      metadata: { labels: getObject(clique, 'labels') ?? {} },
      spec: getObject(clique, 'spec', 'podSpec')!,
    }));
}

function engineContainer(spec: JsonObject): JsonObject {
  return asArray(spec['containers'])
    .filter(isObject)
    .find((c) => c['name'] === 'engine')!;
}

const conditions = (found: JsonObject | undefined): JsonObject => ({
  status: { conditions: getIn(found, 'status', 'conditions') as JsonObject[] },
});

function asApplied(xr: JsonObject): JsonObject {
  const spec = Object.fromEntries<JsonValue | undefined>(
    Object.entries(getObject(xr, 'spec') ?? {}).filter(([field]) => field !== 'crossplane'),
  );
  return {
    apiVersion: getString(xr, 'apiVersion')!,
    kind: getString(xr, 'kind')!,
    metadata: { name: getString(xr, 'metadata', 'name')!, namespace: NAMESPACE },
    spec,
  };
}

/** What a controller would write: a LeaderWorkerSet's Available condition, a PodCliqueSet's counters for its generation. */
function reportAvailable(cluster: (typeof WORKLOAD)[keyof typeof WORKLOAD], workload: JsonObject): void {
  const kind = getString(workload, 'kind');
  const name = getString(workload, 'metadata', 'name')!;
  if (kind === 'Deployment') {
    kubelet(cluster, 'available', name);
    return;
  }
  const status =
    kind === 'LeaderWorkerSet'
      ? {
          conditions: [
            {
              type: 'Available',
              status: 'True',
              reason: 'AllGroupsReady',
              message: 'All replicas are ready',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
          replicas: 1,
          readyReplicas: 1,
        }
      : { observedGeneration: getIn(workload, 'metadata', 'generation') as number, replicas: 1, updatedReplicas: 1, availableReplicas: 1 };
  patchStatus(cluster, kind === 'LeaderWorkerSet' ? 'leaderworkerset' : 'podcliqueset', name, status, REMOTE);
}

// --- the story ----------------------------------------------------------------

describe.skipIf(!standInPlane('serving-shapes.e2e.ts'))('PrefillDecode and the Dynamo stack on a real control plane', () => {
  beforeAll(() => {
    for (const cluster of Object.values(WORKLOAD)) {
      kubectlOk(cluster, ['apply', '--server-side', '-f', STAND_INS]);
      kubectlOk(cluster, [
        'wait',
        '--for',
        'condition=Established',
        '--timeout',
        '60s',
        'crd/leaderworkersets.leaderworkerset.x-k8s.io',
        'crd/podcliquesets.grove.io',
      ]);
    }
  });

  // The next e2e file gets the plane as it found it.
  afterAll(async () => {
    kubectl('control-plane', ['delete', 'modelreplicas', '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually('the replicas gone', () => list('control-plane', 'modelreplicas', NAMESPACE).length === 0, {
      timeoutMs: 180_000,
    }).catch(() => undefined);
    kubectl('control-plane', ['delete', 'modelcaches', '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually(
      'every XR gone',
      () => ['modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, NAMESPACE).length === 0),
      { timeoutMs: 180_000 },
    ).catch(() => undefined);
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', STANDARD, DYNAMO, '--ignore-not-found']);
    for (const cluster of Object.values(WORKLOAD)) {
      kubectl(cluster, ['delete', 'pvc', CLAIM, '-n', REMOTE, '--ignore-not-found']);
      kubectl(cluster, ['delete', '-f', STAND_INS, '--ignore-not-found']);
    }
  });

  it('both replicas wait for the cache, composing no engine, while its claim is not Bound', async () => {
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    apply('control-plane', clusterOn(STANDARD, 'Standard'), clusterOn(DYNAMO, 'Dynamo'));
    for (const [name, workload] of Object.entries(WORKLOAD)) setInferenceClusterStatus(name, { providerConfigRef: { name: workload } });
    for (const cluster of Object.values(WORKLOAD)) {
      apply(cluster, {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: CLAIM, namespace: REMOTE },
        spec: { accessModes: ['ReadOnlyMany'], resources: { requests: { storage: '800Gi' } }, storageClassName: 'platform-ro' },
      });
    }
    apply(
      'control-plane',
      modelCache(NAMESPACE, CACHE, { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: CLAIM } }, { [TIER]: 'h100' }),
    );
    apply('control-plane', PD, GANG);
    excerpt('pd-replica', asApplied(PD));
    excerpt('gang-replica', asApplied(GANG));

    for (const name of [PD_REPLICA, GANG_REPLICA]) {
      const waiting = await eventually(
        `${name} waiting for the cache (Hydrating)`,
        () => {
          // Until the cache's child has looked at the claim; then the replica relays what it found (a stable state).
          const found = settled(replicaOf(name));
          const message = getString(condition(found, 'ModelAccepted') ?? {}, 'message') ?? '';
          return reasonOf(found, 'ModelAccepted') === 'Hydrating' &&
            new RegExp(`claim ${CLAIM} in namespace \\S+ on \\S+ is Pending`).test(message)
            ? found
            : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replicaOf(name), 'status', 'conditions')) },
      );
      expect(reasonOf(waiting, 'ModelReady')).toBe('WaitingForModel');
      if (name === PD_REPLICA) excerpt('pd-waiting', conditions(waiting));
    }
    for (const cluster of Object.values(WORKLOAD)) expect(names(engineWorkloads(cluster)), cluster).toEqual([]);
  });

  it('once the claim is Bound, every engine pod template carries the contract', async () => {
    for (const cluster of Object.values(WORKLOAD)) kubelet(cluster, 'bind-claims');
    for (const cluster of [STANDARD, DYNAMO]) {
      await eventually(`the cache Ready on ${cluster}`, () => entryOf(cluster)?.['phase'] === 'Ready', STEP_WAIT);
    }
    const mount = getObject(entryOf(STANDARD), 'mount')!;
    expect(mount['volumes']).toEqual([{ name: 'model-cache', persistentVolumeClaim: { claimName: CLAIM, readOnly: true } }]);

    const pd = await eventually(
      'the prefill Deployment and the decode LeaderWorkerSet on cluster-a',
      () => {
        const found = engineWorkloads('cluster-a');
        return found.length === 2 ? found : undefined;
      },
      { ...STEP_WAIT, describe: () => names(engineWorkloads('cluster-a')).join(', ') },
    );
    const grove = await eventually(
      'the PodCliqueSet on cluster-b',
      () => {
        const found = engineWorkloads('cluster-b');
        return found.length === 1 ? found : undefined;
      },
      STEP_WAIT,
    );
    expect(pd.map((w) => getString(w, 'kind')).sort()).toEqual(['Deployment', 'LeaderWorkerSet']);
    expect(getString(grove[0], 'kind')).toBe('PodCliqueSet');
    expect((getString(grove[0], 'metadata', 'name') ?? '').length).toBeLessThanOrEqual(24);

    const templates = [...pd, ...grove].flatMap(podTemplates);
    expect(templates).toHaveLength(5); // prefill; decode leader and worker; Grove leader and worker cliques
    for (const { at, spec } of templates) {
      // dshm first, then the contract's volume, then the writable HOME (the claim is read-only).
      expect(asArray(spec['volumes']).slice(0, 3), at).toEqual([
        { name: 'dshm', emptyDir: { medium: 'Memory' } },
        ...(mount['volumes'] as JsonObject[]),
        { name: 'modelplane-home', emptyDir: { sizeLimit: '20Gi' } },
      ]);
      const container = engineContainer(spec);
      expect(container['volumeMounts'], at).toEqual([
        { name: 'dshm', mountPath: '/dev/shm' },
        ...(mount['volumeMounts'] as JsonObject[]),
        { name: 'modelplane-home', mountPath: '/modelplane-home' },
      ]);
      expect(asArray(container['env'])[0], at).toEqual({ name: 'MODELPLANE_MODEL', value: '/mnt/models' });
      expect(asArray(container['env']), at).toContainEqual({ name: 'HOME', value: '/modelplane-home' });
    }
    // The Dynamo gang's engines, and only theirs, get ModelExpress and IPC_LOCK.
    for (const { at, spec } of templates) {
      const container = engineContainer(spec);
      const mx = asArray(container['env']).some((e) => isObject(e) && e['name'] === 'MX_SERVER_ADDRESS');
      expect(mx, at).toBe(at.startsWith('PodCliqueSet'));
      expect(container['securityContext'] !== undefined, at).toBe(at.startsWith('PodCliqueSet'));
    }

    const lws = pd.find((w) => getString(w, 'kind') === 'LeaderWorkerSet')!;
    const leader = getObject(lws, 'spec', 'leaderWorkerTemplate', 'leaderTemplate')!;
    expect(asArray(getIn(leader, 'spec', 'containers')).map((c) => getString(c, 'name'))).toEqual(['engine', 'pd-sidecar']);
    expect(
      asArray(getIn(lws, 'spec', 'leaderWorkerTemplate', 'workerTemplate', 'spec', 'containers')).map((c) => getString(c, 'name')),
    ).toEqual(['engine']);
    excerpt('pd-decode-leader', { spec: { leaderWorkerTemplate: { leaderTemplate: leader } } });
    excerpt('grove-cliques', {
      metadata: { name: getString(grove[0], 'metadata', 'name')! },
      spec: { template: { cliques: getIn(grove[0], 'spec', 'template', 'cliques') as JsonObject[] } },
    });
    const picker = read('cluster-a', 'configmap', eppOf(PD_REPLICA), REMOTE);
    expect(getString(picker, 'data', 'epp-config.yaml')).toContain('prefix-based-pd-decider');
  });

  it('both serve once their workloads report Available', async () => {
    for (const cluster of Object.values(WORKLOAD)) for (const workload of engineWorkloads(cluster)) reportAvailable(cluster, workload);
    // And each replica's endpoint picker, so the XRs are Ready too.
    kubelet(WORKLOAD[STANDARD], 'available', eppOf(PD_REPLICA));
    kubelet(WORKLOAD[DYNAMO], 'available', eppOf(GANG_REPLICA));
    for (const name of [PD_REPLICA, GANG_REPLICA]) {
      const serving = await eventually(
        `${name} Serving`,
        () => {
          const found = settled(replicaOf(name));
          return reasonOf(found, 'ModelReady') === 'Serving' && reasonOf(found, 'Ready') === 'Available' ? found : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(getIn(replicaOf(name), 'status', 'conditions')) },
      );
      expect(reasonOf(serving, 'ModelAccepted')).toBe('Accepted');
      if (name === GANG_REPLICA) excerpt('gang-serving', conditions(serving));
    }
  });

  it('docs/walkthrough-serving-shapes.md shows what the plane held', async () => {
    expect(
      await checkOrUpdate(DOC, excerpts),
      'run the e2e file with UPDATE_DOCS=1 to refresh the excerpts, then read the story around them',
    ).toEqual([]);
  });
});
