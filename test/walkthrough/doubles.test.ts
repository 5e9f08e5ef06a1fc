// The doubles the walkthrough stands on, checked on their own: the simulated
// workload cluster and its provider-kubernetes (test/support/workload-cluster.ts),
// the control plane's loop against stand-in functions (test/support/control-plane.ts),
// and the doc's excerpt check (excerpts.ts). A double that lied would make the
// walkthrough prove nothing.

import { afterEach, describe, expect, it } from 'vitest';
import {
  JOB_POLICIES,
  OBSERVE_ONLY,
  READY_QUERY,
  celReadiness,
  desire,
  fatalResult,
  getIn,
  getString,
  newResponse,
  remoteObject,
  requireResources,
  requiredResources,
  selectByName,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  type JsonObject,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';
import { ControlPlane, ProviderKubernetes, WorkloadCluster, startFakeFunction, type FakeFunction } from '#testing';
import type { Composition } from '../render/load.js';
import { excerptProblems, withExcerpts } from './excerpts.js';

const PROVIDER_CONFIG = 'cluster-a';

function pvc(name = 'weights', storageClassName = 'rwx'): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { accessModes: ['ReadWriteMany'], storageClassName, resources: { requests: { storage: '20Gi' } } },
  };
}

function job(options: { claim?: string; secret?: string; ttl?: number } = {}): JsonObject {
  const container: JsonObject = { name: 'work', image: 'busybox' };
  if (options.secret) container['env'] = [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: options.secret, key: 'TOKEN' } } }];
  const pod: JsonObject = { restartPolicy: 'OnFailure', containers: [container] };
  if (options.claim) pod['volumes'] = [{ name: 'data', persistentVolumeClaim: { claimName: options.claim } }];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'download', namespace: 'default' },
    spec: { backoffLimit: 3, ttlSecondsAfterFinished: options.ttl ?? 180, template: { spec: pod } },
  };
}

function deployment(claim: string): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'engine', namespace: 'default' },
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [{ name: 'engine', image: 'vllm' }],
          volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: claim } }],
        },
      },
    },
  };
}

const secret: JsonObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'token', namespace: 'default' },
  data: { TOKEN: 'dG9rZW4=' },
};

function newCluster(): WorkloadCluster {
  return new WorkloadCluster({ providerConfig: PROVIDER_CONFIG, storageClasses: ['rwx'] });
}

function statusOf(cluster: WorkloadCluster, object: JsonObject): unknown {
  const [apiVersion, kind, name] = [getString(object, 'apiVersion')!, getString(object, 'kind')!, getString(object, 'metadata', 'name')!];
  return getIn(cluster.get(apiVersion, kind, 'default', name), 'status');
}

describe('the simulated workload cluster', () => {
  it('binds a claim a tick after it is created, and only with a StorageClass the cluster has', () => {
    const cluster = newCluster();
    cluster.create(pvc('weights', 'rwx'));
    cluster.create(pvc('elsewhere', 'no-such-class'));
    expect(statusOf(cluster, pvc('weights'))).toEqual({ phase: 'Pending' });
    cluster.advance(60);
    expect(statusOf(cluster, pvc('weights'))).toEqual({ phase: 'Bound', accessModes: ['ReadWriteMany'], capacity: { storage: '20Gi' } });
    expect(statusOf(cluster, pvc('elsewhere'))).toEqual({ phase: 'Pending' });
  });

  it('runs a Job once its claim is Bound, and finishes it a tick later: Complete, or Failed while jobs fail', () => {
    for (const failing of [false, true]) {
      const cluster = newCluster();
      if (failing) cluster.failJobs('the registry is down');
      cluster.create(pvc());
      cluster.create(job({ claim: 'weights' }));
      expect(statusOf(cluster, job())).toEqual({ active: 1 });
      cluster.advance(60); // the claim binds; the pod could not run before
      expect(statusOf(cluster, job())).toEqual({ active: 1 });
      cluster.advance(60);
      expect(statusOf(cluster, job())).toEqual(
        failing
          ? {
              failed: 4,
              conditions: [
                { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
              ],
            }
          : { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
      );
    }
  });

  it('never runs a Job whose claim or Secret is missing', () => {
    const cluster = newCluster();
    cluster.create(job({ claim: 'no-such-claim' }));
    for (let i = 0; i < 5; i++) cluster.advance(60);
    expect(statusOf(cluster, job())).toEqual({ active: 1 });

    const withSecret = newCluster();
    withSecret.create(job({ secret: 'token' }));
    withSecret.advance(60);
    expect(statusOf(withSecret, job())).toEqual({ active: 1 });
    withSecret.create(secret);
    withSecret.advance(60);
    expect(getIn(statusOf(withSecret, job()), 'succeeded')).toBe(1);
  });

  it('deletes a finished Job ttlSecondsAfterFinished after it finished, not before', () => {
    const cluster = newCluster();
    cluster.create(job({ ttl: 120 }));
    cluster.advance(60); // finishes
    cluster.advance(60);
    expect(cluster.inventory()).toEqual(['Job/download']);
    cluster.advance(60);
    expect(cluster.inventory()).toEqual([]);
  });

  it('makes a Deployment Available only once the claim its pods mount is Bound', () => {
    const cluster = newCluster();
    cluster.create(deployment('weights'));
    cluster.advance(60);
    expect(getIn(statusOf(cluster, deployment('weights')), 'conditions')).toEqual([
      {
        type: 'Available',
        status: 'False',
        reason: 'MinimumReplicasUnavailable',
        message: 'Deployment does not have minimum availability.',
      },
    ]);
    cluster.create(pvc());
    cluster.advance(60); // binds
    cluster.advance(60);
    expect(statusOf(cluster, deployment('weights'))).toMatchObject({
      availableReplicas: 2,
      conditions: [{ type: 'Available', status: 'True' }],
    });
  });
});

describe('the simulated provider-kubernetes', () => {
  const object = (manifest: JsonObject, options: Partial<Parameters<typeof remoteObject>[0]> = {}): JsonObject => ({
    ...remoteObject({ providerConfig: PROVIDER_CONFIG, manifest, ...options }),
    metadata: { name: 'object', namespace: 'ml-team' },
  });

  it('creates the remote object and reports it back, Ready as its readiness query says', () => {
    const cluster = newCluster();
    const provider = new ProviderKubernetes([cluster]);
    const claim = object(pvc(), { readiness: celReadiness(READY_QUERY.pvcBound) });
    expect(provider.reconcile('1', claim)).toEqual({
      atProvider: { manifest: { ...pvc(), status: { phase: 'Pending' } } },
      conditions: [
        { type: 'Ready', status: 'False', reason: 'Unavailable' },
        { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
      ],
    });
    cluster.advance(60);
    expect(getIn(provider.reconcile('1', claim), 'conditions')).toContainEqual({ type: 'Ready', status: 'True', reason: 'Available' });
    // Without a readiness policy, created is ready.
    expect(getIn(provider.reconcile('2', object(secret)), 'conditions')).toContainEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Available',
    });
  });

  it('never creates what an observe-only Object names, and says it is not there', () => {
    const cluster = newCluster();
    const status = new ProviderKubernetes([cluster]).reconcile('1', object(pvc(), { managementPolicies: OBSERVE_ONLY }));
    expect(cluster.inventory()).toEqual([]);
    expect(status['atProvider']).toBeUndefined();
    expect(getIn(status, 'conditions')).toMatchObject([
      { type: 'Ready', status: 'False' },
      { type: 'Synced', status: 'False', reason: 'ReconcileError' },
    ]);
  });

  it('updates a changed manifest only when the policies include Update', () => {
    for (const [policies, expected] of [
      [undefined, '30Gi'],
      [['Observe', 'Create'], '20Gi'],
    ] as const) {
      const cluster = newCluster();
      const provider = new ProviderKubernetes([cluster]);
      provider.reconcile('1', object(pvc(), policies ? { managementPolicies: policies } : {}));
      const bigger = pvc();
      (getIn(bigger, 'spec', 'resources', 'requests') as JsonObject)['storage'] = '30Gi';
      provider.reconcile('1', object(bigger, policies ? { managementPolicies: policies } : {}));
      expect(getIn(cluster.get('v1', 'PersistentVolumeClaim', 'default', 'weights'), 'spec', 'resources', 'requests', 'storage')).toBe(
        expected,
      );
    }
  });

  it('deletes the remote object with its Object only when the policies include Delete; else orphans it', () => {
    const cluster = newCluster();
    const provider = new ProviderKubernetes([cluster]);
    provider.reconcile('1', object(secret));
    provider.reconcile('2', object(job(), { managementPolicies: JOB_POLICIES }));
    provider.remove('1', object(secret));
    provider.remove('2', object(job(), { managementPolicies: JOB_POLICIES }));
    expect(cluster.inventory()).toEqual(['Job/download']);
  });

  it('creates again a remote object deleted under an Object that still asks for it (how a failed Job is retried after its TTL)', () => {
    const cluster = newCluster();
    const provider = new ProviderKubernetes([cluster]);
    const download = object(job({ ttl: 60 }), { managementPolicies: JOB_POLICIES });
    provider.reconcile('1', download);
    cluster.failJobs('no route to the hub');
    cluster.advance(60);
    expect(getIn(provider.reconcile('1', download), 'atProvider', 'manifest', 'status', 'failed')).toBe(4);
    cluster.advance(60); // the TTL controller removes it
    expect(cluster.inventory()).toEqual([]);
    expect(getIn(provider.reconcile('1', download), 'atProvider', 'manifest', 'status')).toEqual({ active: 1 });
  });

  it('refuses an Object whose provider config reaches no cluster', () => {
    const provider = new ProviderKubernetes([newCluster()]);
    expect(() =>
      provider.reconcile('1', {
        ...object(secret),
        spec: { ...(remoteObject({ providerConfig: 'nowhere', manifest: secret })['spec'] as JsonObject) },
      }),
    ).toThrow(/ClusterProviderConfig nowhere, which reaches no cluster/);
  });
});

describe('the control plane', () => {
  const XR_TYPE = { apiVersion: 'example.org/v1', kind: 'XThing' };
  const composition: Composition = {
    name: 'xthings.example.org',
    labels: {},
    compositeTypeRef: XR_TYPE,
    mode: 'Pipeline',
    pipeline: [{ step: 'compose', functionName: 'function-thing', credentials: [], requiredResources: [] }],
  };
  const xr: JsonObject = { ...XR_TYPE, metadata: { name: 'thing', namespace: 'team-a' }, spec: { size: 1 } };

  let fn: FakeFunction | undefined;
  let plane: ControlPlane | undefined;
  afterEach(async () => {
    plane?.close();
    await fn?.stop();
    plane = undefined;
    fn = undefined;
  });

  async function world(
    handler: (req: RunFunctionRequest, call: number) => RunFunctionResponse,
  ): Promise<{ plane: ControlPlane; cluster: WorkloadCluster }> {
    fn = await startFakeFunction(handler);
    const cluster = newCluster();
    plane = new ControlPlane({
      compositions: [composition],
      targets: { 'function-thing': fn.target },
      provider: new ProviderKubernetes([cluster]),
    });
    return { plane, cluster };
  }

  const get = (p: ControlPlane) => p.get(XR_TYPE.apiVersion, XR_TYPE.kind, 'team-a', 'thing')!;

  it('loops on requirements, fetching by name in the namespace a selector names, then applies the last answer', async () => {
    const seen: unknown[] = [];
    const { plane: p } = await world((req) => {
      const rsp = newResponse(req);
      requireResources(rsp, { token: selectByName('v1', 'Secret', 'token', 'team-a') });
      const found = requiredResources(req, 'token');
      seen.push(found.fetched ? found.items.map((item) => getString(item, 'metadata', 'namespace')) : 'not fetched');
      if (found.fetched) setCompositeStatus(rsp, { found: found.items.length });
      return rsp;
    });
    p.apply({ ...secret, metadata: { name: 'token', namespace: 'team-a' } });
    p.apply({ ...secret, metadata: { name: 'token', namespace: 'team-b' } });
    p.apply(xr);
    await p.settle();
    expect(seen.slice(0, 2)).toEqual(['not fetched', ['team-a']]);
    expect(p.reconciles[0]?.calls).toBe(2);
    expect(getIn(get(p), 'status', 'found')).toBe(1);
  });

  it('names, labels and owns what it composes as Crossplane does, keeps the name, and deletes what is no longer desired', async () => {
    let wanted = true;
    const { plane: p, cluster } = await world((req) => {
      const rsp = newResponse(req);
      desire(rsp, 'token', remoteObject({ providerConfig: PROVIDER_CONFIG, manifest: secret }));
      if (wanted)
        desire(rsp, 'download', remoteObject({ providerConfig: PROVIDER_CONFIG, manifest: job(), managementPolicies: JOB_POLICIES }));
      return rsp;
    });
    p.apply(xr);
    await p.settle();
    const composed = p.composed(get(p));
    expect(Object.keys(composed).sort()).toEqual(['download', 'token']);
    expect(composed['token']?.['metadata']).toMatchObject({
      name: expect.stringMatching(/^thing-[0-9a-f]{5}$/) as unknown,
      namespace: 'team-a',
      labels: { 'crossplane.io/composite': 'thing' },
      annotations: { 'crossplane.io/composition-resource-name': 'token' },
      ownerReferences: [{ kind: 'XThing', name: 'thing', controller: true }],
    });
    expect(cluster.inventory()).toEqual(['Job/download', 'Secret/token']);
    const name = getString(composed['token'], 'metadata', 'name');

    wanted = false;
    await p.advance(60);
    expect(Object.keys(p.composed(get(p)))).toEqual(['token']);
    expect(getString(p.composed(get(p))['token'], 'metadata', 'name')).toBe(name);
    // The Job's Object had no Delete policy: the Job stays on the cluster (until its TTL).
    expect(cluster.inventory()).toEqual(['Job/download', 'Secret/token']);
  });

  it("writes the XR's status as returned, with the function's conditions, Ready and Synced", async () => {
    let ready = false;
    const { plane: p } = await world((req) => {
      const rsp = newResponse(req);
      desire(rsp, 'token', remoteObject({ providerConfig: PROVIDER_CONFIG, manifest: secret }), ready);
      setCompositeStatus(rsp, ready ? { phase: 'Ready' } : { phase: 'Pending', message: 'waiting' });
      setCondition(rsp, { type: 'ArtifactReady', status: ready, reason: ready ? 'Staged' : 'Pending' });
      if (ready) setCompositeReady(rsp, true);
      return rsp;
    });
    p.apply(xr);
    await p.settle();
    expect(getIn(get(p), 'status')).toEqual({
      phase: 'Pending',
      message: 'waiting',
      conditions: [
        { type: 'ArtifactReady', status: 'False', lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'Pending' },
        {
          type: 'Ready',
          status: 'False',
          lastTransitionTime: '2025-01-01T00:00:00Z',
          reason: 'Creating',
          message: 'Unready resources: token',
        },
        { type: 'Synced', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'ReconcileSuccess' },
      ],
    });
    ready = true;
    await p.advance(60);
    expect(getIn(get(p), 'status')).toEqual({
      phase: 'Ready',
      conditions: [
        { type: 'ArtifactReady', status: 'True', lastTransitionTime: '2025-01-01T00:01:00Z', reason: 'Staged' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:01:00Z', reason: 'Available' },
        { type: 'Synced', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'ReconcileSuccess' },
      ],
    });
  });

  it('applies nothing from an answer with a Fatal result, and says why on the XR', async () => {
    let fatal = false;
    const { plane: p } = await world((req) => {
      const rsp = newResponse(req);
      if (fatal) {
        fatalResult(rsp, 'spec.size must be an integer');
        return rsp;
      }
      desire(rsp, 'token', remoteObject({ providerConfig: PROVIDER_CONFIG, manifest: secret }));
      setCompositeStatus(rsp, { phase: 'Pending' });
      return rsp;
    });
    p.apply(xr);
    await p.settle();
    fatal = true;
    await p.advance(60);
    expect(Object.keys(p.composed(get(p)))).toEqual(['token']);
    expect(getIn(get(p), 'status', 'phase')).toBe('Pending');
    expect((getIn(get(p), 'status', 'conditions') as JsonObject[]).find((c) => c['type'] === 'Synced')).toMatchObject({
      status: 'False',
      reason: 'ReconcileError',
      message: 'spec.size must be an integer',
    });
    expect(p.takeEvents().at(-1)).toMatchObject({ type: 'Warning', message: 'spec.size must be an integer' });
  });

  it('calls a world that never stops changing unstable, rather than settling on a whim', async () => {
    const { plane: p } = await world((req) => {
      const rsp = newResponse(req);
      const count = getIn(req.observed?.composite?.resource, 'status', 'count');
      setCompositeStatus(rsp, { count: typeof count === 'number' ? count + 1 : 1 });
      return rsp;
    });
    p.apply(xr);
    await expect(p.settle()).rejects.toThrow(/did not settle within 10 rounds/);
  });
});

describe('the doc excerpts', () => {
  const page = [
    '# Page',
    '',
    '<!-- excerpt: one -->',
    '',
    '```yaml',
    'a: 1',
    '```',
    '',
    '<!-- excerpt: two -->',
    '```yaml',
    '- x',
    '```',
    '',
  ].join('\n');
  const shown: [string, unknown][] = [
    ['one', { a: 1 }],
    ['two', ['x']],
  ];
  /** The values the page shows, with some changed or added. */
  const values = (...changes: [string, unknown][]) => new Map<string, unknown>([...shown, ...changes]);

  it('are current when every block shows its value, as data', () => {
    expect(excerptProblems(page, values())).toEqual([]);
  });

  it.each<[string, string, Map<string, unknown>, RegExp]>([
    ['a changed value', page, values(['one', { a: 2 }]), /^excerpt one differs/],
    ['a value without a block', page, values(['three', 3]), /^excerpt three is recorded by the test, but the page has no block/],
    ['a block without a value', page, new Map([shown[0]!]), /^excerpt two is on the page, but the test records no value/],
    ['a block twice', `${page}\n<!-- excerpt: one -->\n\`\`\`yaml\na: 1\n\`\`\`\n`, values(), /^excerpt one appears more than once/],
    ['a block that is not YAML', page.replace('a: 1', 'a: [1'), values(), /^excerpt one is not YAML/],
  ])('are not current with %s', (_case, markdown, changed, problem) => {
    const problems = excerptProblems(markdown, changed);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it('are rewritten from the values, formatted, and then current', async () => {
    const values = new Map<string, unknown>([
      ['one', { a: 2, b: 'yes' }],
      ['two', ['x', 'y']],
    ]);
    const rewritten = await withExcerpts(page, values, 'docs/page.md');
    expect(excerptProblems(rewritten, values)).toEqual([]);
    expect(rewritten).toContain('<!-- excerpt: one -->\n\n```yaml\na: 2\nb: yes\n```');
  });
});
