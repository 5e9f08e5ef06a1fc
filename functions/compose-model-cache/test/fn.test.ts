// compose-model-cache beyond upstream's cases: the footprint (selector
// expressions, unprovisioned clusters, names), stamping for each source, the
// roll-up of each source's contract, the reclaim guard, a cluster that turns
// unreadable, failures on several clusters, the token, determinism, and
// malformed caches refused naming the field.

import { describe, expect, it } from 'vitest';
import { cacheNames, childName, claimMount, huggingFaceMount, ociImageMount, ociModelArtifactMount, toJson, type JsonObject } from '#lib';
import {
  compositeStatus,
  condition,
  desiredResources,
  inProcessClient,
  items,
  request,
  type TestRequest,
  type TestResponse,
} from '#testing';
import { compose } from '../src/fn.js';
import {
  CACHE,
  CLAIM_SPEC,
  NAMESPACE,
  OCI_SPEC,
  TIER,
  cacheRequest,
  cacheXr,
  childSpec,
  cluster,
  expectWellFormed,
  lastStatus,
  observedChild,
  replica,
  summaryOf,
} from './fixtures.js';
import { reconcileFleet, worldOf, type RequestParts } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);

/** Both levels reconciled with the children given under `observed` (fleet.ts): what the fleet desires, as one level. */
async function run(parts: RequestParts): Promise<TestResponse> {
  const { cache, shards, merged } = await reconcileFleet(client, worldOf(parts, [cluster('cluster-a')]));
  for (const rsp of [cache, ...Object.values(shards)]) {
    expectWellFormed(rsp);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
  }
  return merged;
}

const desiredKeys = (rsp: TestResponse) => Object.keys(rsp.desired?.resources ?? {}).sort();
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));

describe('requirements', () => {
  it('asks for the clusters by the selector labels and every ModelReplica of the namespace, and nothing else until both are fetched', async () => {
    const partial: TestRequest['requiredResources'][] = [undefined, { clusters: items() }, { replicas: items() }];
    for (const required of partial) {
      const rsp = await client.run(request({ observed: { composite: cacheXr() }, ...(required ? { requiredResources: required } : {}) }));
      expectWellFormed(rsp);
      expect(rsp.requirements?.resources).toEqual({
        clusters: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchLabels: { labels: TIER } },
        replicas: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelReplica', matchLabels: { labels: {} }, namespace: NAMESPACE },
      });
      expect(rsp.desired?.resources).toEqual({});
      expect(rsp.desired?.composite).toBeUndefined();
      expect(rsp.conditions).toEqual([]);
      expect(rsp.results).toEqual([]);
    }
  });

  it('sends only the labels of a selector with expressions (an empty map lists every cluster)', async () => {
    const xr = cacheXr({ clusterSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] } });
    const rsp = await client.run(request({ observed: { composite: xr } }));
    expect(rsp.requirements?.resources['clusters']?.matchLabels).toEqual({ labels: {} });
  });
});

describe('footprint', () => {
  it('stamps three children named childName("modelcache", ns, cache, cluster), sorted, one per provisioned cluster', async () => {
    const rsp = await run({ clusters: [cluster('us-east'), cluster('eu-west'), cluster('ap-south')] });
    expect(desiredKeys(rsp)).toEqual(['hydration-ap-south', 'hydration-eu-west', 'hydration-us-east']);
    for (const name of ['ap-south', 'eu-west', 'us-east']) {
      const child = desiredResources(rsp)[`hydration-${name}`]!;
      expect(child['metadata']).toEqual({
        name: childName('modelcache', NAMESPACE, CACHE, name),
        namespace: NAMESPACE,
        labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/cluster': name },
      });
      expect(child['spec']).toEqual(childSpec(name));
    }
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('0/3', { pending: 3 }));
    expect(rsp.results).toEqual([
      { severity: 'SEVERITY_NORMAL', reason: 'Staging', message: 'Staging Qwen/Qwen3-0.6B to 3 clusters: ap-south, eu-west, us-east' },
    ]);
  });

  const labelled = (name: string, labels: Record<string, string>) => cluster(name, { labels: { ...TIER, ...labels } });
  const fleet = [
    labelled('us-1', { region: 'us', gpu: 'a100' }),
    labelled('us-2', { region: 'us' }),
    labelled('eu-1', { region: 'eu', gpu: 'a100' }),
    labelled('ap-1', { region: 'ap', spot: 'true' }),
  ];
  it.each<[string, JsonObject[], string[]]>([
    ['In', [{ key: 'region', operator: 'In', values: ['us', 'eu'] }], ['eu-1', 'us-1', 'us-2']],
    ['NotIn (a missing label matches)', [{ key: 'region', operator: 'NotIn', values: ['us'] }], ['ap-1', 'eu-1']],
    ['Exists', [{ key: 'gpu', operator: 'Exists' }], ['eu-1', 'us-1']],
    ['DoesNotExist', [{ key: 'spot', operator: 'DoesNotExist' }], ['eu-1', 'us-1', 'us-2']],
    [
      'all of them at once',
      [
        { key: 'region', operator: 'In', values: ['us', 'eu'] },
        { key: 'gpu', operator: 'Exists' },
        { key: 'spot', operator: 'DoesNotExist' },
        { key: 'region', operator: 'NotIn', values: ['eu'] },
      ],
      ['us-1'],
    ],
  ])('applies matchExpressions (%s) to the clusters the label requirement returned', async (_op, expressions, expected) => {
    const rsp = await run({ xr: cacheXr({ clusterSelector: { matchLabels: TIER, matchExpressions: expressions } }), clusters: fleet });
    expect(desiredKeys(rsp)).toEqual(expected.map((name) => `hydration-${name}`));
  });

  it('applies matchLabels too (Crossplane returns what matched them; render and old releases may not)', async () => {
    const rsp = await run({ clusters: [cluster('a'), cluster('b', { labels: { 'modelplane.ai/tier': 'h100' } })] });
    expect(desiredKeys(rsp)).toEqual(['hydration-a']);
  });

  it('names selected clusters that are not provisioned yet in ClustersMatched, and stamps nothing for them', async () => {
    const rsp = await run({
      clusters: [cluster('ready-a'), cluster('new-b', { provisioned: false }), cluster('new-c', { provisioned: false })],
    });
    expect(desiredKeys(rsp)).toEqual(['hydration-ready-a']);
    expect(condition(rsp, 'ClustersMatched')).toEqual({
      status: 'STATUS_CONDITION_TRUE',
      reason: 'Matched',
      message:
        '1 cluster selected: ready-a; selected but not provisioned yet (no status.providerConfigRef.name), so not staged: new-b, new-c',
    });
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('0/1', { pending: 1 }));
  });

  it('reports NoClusters, naming the unprovisioned ones, when no selected cluster is provisioned', async () => {
    const rsp = await run({ clusters: [cluster('new-b', { provisioned: false })] });
    expect(desiredKeys(rsp)).toEqual([]);
    expect(condition(rsp, 'ClustersMatched')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'NoClusters',
      message:
        'no provisioned InferenceCluster matches spec.clusterSelector; selected but not provisioned yet (no status.providerConfigRef.name), so not staged: new-b',
    });
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'NoClusters' });
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
    expect(rsp.results).toEqual([]);
  });

  it('cuts a long namespace, cache and cluster name to a 63-character child name, as the Python SDK does', async () => {
    const namespace = `team-${'n'.repeat(58)}`;
    const name = `cache-${'c'.repeat(57)}`;
    const clusterName = `cluster-${'x'.repeat(55)}`;
    const xr = cacheXr();
    const metadata = xr.resource['metadata'] as JsonObject;
    metadata['namespace'] = namespace;
    metadata['name'] = name;
    const rsp = await run({ xr, clusters: [cluster(clusterName)] });
    const child = desiredResources(rsp)[`hydration-${clusterName}`]!;
    const childMeta = child['metadata'] as JsonObject;
    expect(childMeta['name']).toBe(childName('modelcache', namespace, name, clusterName));
    expect(childMeta['name']).toBe(`modelcache-team-${'n'.repeat(41)}-9a3f0`);
    expect((childMeta['name'] as string).length).toBeLessThanOrEqual(63);
    expect(childMeta['labels']).toEqual({ 'modelplane.ai/modelcache': name, 'modelplane.ai/cluster': clusterName });
  });

  it('skips a selected cluster whose name is not a DNS label, naming it, and stages the others', async () => {
    const rsp = await run({ clusters: [cluster('good'), cluster('bad.name')] });
    expect(desiredKeys(rsp)).toEqual(['hydration-good']);
    expect(condition(rsp, 'ClustersMatched')?.message).toBe(
      '1 cluster selected: good; selected but not staged, their names are not DNS labels: bad.name',
    );
  });

  it('counts a cluster listed twice once', async () => {
    const rsp = await run({ clusters: [cluster('a'), cluster('a')] });
    expect(desiredKeys(rsp)).toEqual(['hydration-a']);
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('0/1', { pending: 1 }));
  });

  it('lists at most twenty names in a message and counts the rest', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const rsp = await run({ clusters: names.map((name) => cluster(name)) });
    expect(condition(rsp, 'ClustersMatched')?.message).toBe(`25 clusters selected: ${names.slice(0, 20).join(', ')}, and 5 more`);
    expect(desiredKeys(rsp)).toHaveLength(25);
  });
});

describe('stamping each source', () => {
  it.each<[string, JsonObject, JsonObject]>([
    [
      'HuggingFace with revision and authSecret (key defaulted, the cache namespace added, no token)',
      { huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'v2', sizeGiB: 40, authSecret: { name: 'hf-token' } } },
      {
        source: 'HuggingFace',
        huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'v2', sizeGiB: 40 },
        authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE },
      },
    ],
    [
      'HuggingFace with an authSecret key of its own',
      { huggingFace: { repo: 'org/m', sizeGiB: 1, authSecret: { name: 'tok', key: 'token' } } },
      {
        source: 'HuggingFace',
        huggingFace: { repo: 'org/m', sizeGiB: 1 },
        authSecret: { name: 'tok', key: 'token', namespace: NAMESPACE },
      },
    ],
    [
      'HuggingFace sizeGiB sent as a double (20.0) stays the integer 20',
      { huggingFace: { repo: 'org/m', sizeGiB: 20.0 } },
      { source: 'HuggingFace', huggingFace: { repo: 'org/m', sizeGiB: 20 } },
    ],
    ['OCI by tag', OCI_SPEC, { source: 'OCI', oci: { ref: 'us-docker.pkg.dev/acme/models/qwen:v1' } }],
    [
      'OCI by digest, with pull secrets and a subPath',
      {
        ...OCI_SPEC,
        oci: {
          ref: `reg.io/m/qwen@sha256:${'a'.repeat(64)}`,
          imagePullSecrets: [{ name: 'regcred' }, { name: 'backup' }],
          subPath: 'weights/q',
        },
      },
      {
        source: 'OCI',
        oci: {
          ref: `reg.io/m/qwen@sha256:${'a'.repeat(64)}`,
          imagePullSecrets: [{ name: 'regcred' }, { name: 'backup' }],
          subPath: 'weights/q',
        },
      },
    ],
    ['PersistentVolumeClaim', CLAIM_SPEC, { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights' } }],
    [
      'PersistentVolumeClaim with a subPath',
      { ...CLAIM_SPEC, persistentVolumeClaim: { claimName: 'qwen-weights', subPath: 'qwen' } },
      { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights', subPath: 'qwen' } },
    ],
  ])('%s', async (_name, spec, expected) => {
    const rsp = await run({ xr: cacheXr(spec) });
    expect(desiredResources(rsp)['hydration-cluster-a']?.['spec']).toEqual({ clusterName: 'cluster-a', cacheName: CACHE, ...expected });
  });

  it.each<[string, JsonObject, string]>([
    ['OCI', OCI_SPEC, 'Staging us-docker.pkg.dev/acme/models/qwen:v1 to 1 clusters: cluster-a'],
    ['PersistentVolumeClaim', CLAIM_SPEC, 'Staging qwen-weights to 1 clusters: cluster-a'],
  ])('names what %s stages in the first-compose event', async (_name, spec, message) => {
    const rsp = await run({ xr: cacheXr(spec) });
    expect(rsp.results.map((r) => r.message)).toEqual([message]);
  });
});

describe('roll-up of each source, the contract copied unchanged', () => {
  const digest = `sha256:${'b'.repeat(64)}`;
  it.each<[string, JsonObject, JsonObject]>([
    ['HuggingFace', {}, { phase: 'Ready', mount: HF_MOUNT }],
    [
      'OCI image',
      OCI_SPEC,
      {
        phase: 'Ready',
        mount: toJson(
          ociImageMount({ reference: `us-docker.pkg.dev/acme/models/qwen@${digest}`, subPath: 'w', imagePullSecrets: ['regcred'] }),
        ),
        digest,
        artifactKind: 'Image',
      },
    ],
    [
      'OCI model artifact',
      OCI_SPEC,
      {
        phase: 'Ready',
        mount: toJson(ociModelArtifactMount({ reference: `us-docker.pkg.dev/acme/models/qwen@${digest}` })),
        digest,
        artifactKind: 'ModelArtifact',
      },
    ],
    [
      'PersistentVolumeClaim (ReadWriteOnce reported for consumers)',
      CLAIM_SPEC,
      { phase: 'Ready', mount: toJson(claimMount({ claimName: 'qwen-weights', subPath: 'qwen' })), accessModes: ['ReadWriteOnce'] },
    ],
  ])('%s', async (_name, spec, report) => {
    const child = observedChild('cluster-a', { ...(report as object), reason: 'Staged' });
    const rsp = await run({ xr: cacheXr(spec), observed: { 'hydration-cluster-a': child } });
    expect(compositeStatus(rsp)['clusters']).toEqual([{ name: 'cluster-a', ...report }]);
    expect(condition(rsp, 'ArtifactReady')).toMatchObject({ status: 'STATUS_CONDITION_TRUE', reason: 'Staged' });
  });

  it('copies a non-Ready child as it reports (phase, message, latched digest), without a mount', async () => {
    const report = { phase: 'Pending', message: 'resolving us-docker.pkg.dev/acme/models/qwen:v1 on cluster-a', digest };
    const rsp = await run({ xr: cacheXr(OCI_SPEC), observed: { 'hydration-cluster-a': observedChild('cluster-a', report) } });
    expect(compositeStatus(rsp)['clusters']).toEqual([{ name: 'cluster-a', ...report }]);
  });

  it('reads an unknown phase as Pending and never marks that child ready', async () => {
    const rsp = await run({
      observed: { 'hydration-cluster-a': observedChild('cluster-a', { phase: 'Exploded', message: 'x', ready: false }) },
    });
    expect(compositeStatus(rsp)['clusters']).toEqual([{ name: 'cluster-a', phase: 'Pending', message: 'x' }]);
    expect(rsp.desired?.resources['hydration-cluster-a']?.ready).toBe('READY_UNSPECIFIED');
  });

  it('marks a child ready only on its Ready=True condition, and the XR ready only when every cluster is Ready', async () => {
    // The child says phase Ready but Crossplane has not called it Ready yet: roll up Ready, mark the key not ready.
    const rsp = await run({
      observed: { 'hydration-cluster-a': observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, ready: false, reason: 'Staged' }) },
    });
    expect(rsp.desired?.resources['hydration-cluster-a']?.ready).toBe('READY_UNSPECIFIED');
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
  });

  it('rolls three Ready clusters up to 3/3, Staged, ready, with one "Artifact staged" event', async () => {
    const names = ['c1', 'c2', 'c3'];
    const rsp = await run({
      clusters: names.map((n) => cluster(n)),
      observed: Object.fromEntries(
        names.map((n) => [`hydration-${n}`, observedChild(n, { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' })]),
      ),
    });
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('3/3'));
    expect(condition(rsp, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_TRUE',
      reason: 'Staged',
      message: 'staged on all 3 clusters',
    });
    expect(rsp.desired?.composite?.ready).toBe('READY_TRUE');
    expect(Object.values(rsp.desired?.resources ?? {}).map((r) => r.ready)).toEqual(['READY_TRUE', 'READY_TRUE', 'READY_TRUE']);
    expect(rsp.results).toEqual([{ severity: 'SEVERITY_NORMAL', reason: 'Staged', message: 'Artifact staged on all 3 clusters' }]);
  });
});

describe('failures', () => {
  const failed = (cluster: string, message: string) => observedChild(cluster, { phase: 'Failed', message, reason: 'HydrationFailed' });

  it('names every failed cluster in HydrationFailed and warns only for the ones that turned Failed now', async () => {
    const rsp = await run({
      xr: cacheXr(
        {},
        lastStatus(
          [
            { name: 'a', phase: 'Failed', message: 'old' },
            { name: 'b', phase: 'Hydrating' },
            { name: 'c', phase: 'Ready' },
          ],
          false,
        ),
      ),
      clusters: [cluster('a'), cluster('b'), cluster('c')],
      observed: {
        'hydration-a': failed('a', 'hydration Job x failed: BackoffLimitExceeded'),
        'hydration-b': failed('b', 'unsupported OCI artifact: application/vnd.example+json'),
        'hydration-c': observedChild('c', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }),
      },
    });
    expect(condition(rsp, 'ArtifactReady')).toEqual({
      status: 'STATUS_CONDITION_FALSE',
      reason: 'HydrationFailed',
      message: 'a: hydration Job x failed: BackoffLimitExceeded; b: unsupported OCI artifact: application/vnd.example+json',
    });
    expect(rsp.results).toEqual([
      {
        severity: 'SEVERITY_WARNING',
        reason: 'HydrationFailed',
        message: 'Staging failed on b: unsupported OCI artifact: application/vnd.example+json',
      },
    ]);
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('1/3', { failed: 2 }));
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('puts a failure ahead of a missing token', async () => {
    const rsp = await run({
      xr: cacheXr({ huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, authSecret: { name: 'hf-token' } } }),
      clusters: [cluster('a'), cluster('b')],
      observed: {
        'hydration-a': observedChild('a', {
          phase: 'Pending',
          message: 'no token',
          reason: 'AuthSecretMissing',
          reasonMessage: 'no token',
        }),
        'hydration-b': failed('b', 'boom'),
      },
    });
    expect(condition(rsp, 'ArtifactReady')).toEqual({ status: 'STATUS_CONDITION_FALSE', reason: 'HydrationFailed', message: 'b: boom' });
  });

  it('bounds the failure warnings when many clusters fail at once', async () => {
    const names = Array.from({ length: 23 }, (_, i) => `f${String(i).padStart(2, '0')}`);
    const rsp = await run({
      clusters: names.map((n) => cluster(n)),
      observed: Object.fromEntries(names.map((n) => [`hydration-${n}`, failed(n, 'registry unreachable')])),
    });
    expect(rsp.results).toHaveLength(21);
    expect(rsp.results[20]?.message).toBe('Staging also failed on 3 more clusters: f20, f21, f22');
  });
});

describe('the reclaim guard', () => {
  const staged = () => observedChild('cluster-b', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' });

  it('keeps the child of a cluster that left the selector while a ModelReplica of this cache runs there, exactly as observed', async () => {
    // The cache moved on (a new revision), cluster-b left the selector; r2 and r1 still serve from it.
    const rsp = await run({
      xr: cacheXr({ huggingFace: { repo: 'Qwen/Qwen3-0.6B', revision: 'v2', sizeGiB: 20 } }),
      clusters: [cluster('cluster-a')],
      replicas: [
        replica('r2', 'cluster-b'),
        replica('r1', 'cluster-b'),
        replica('other-cache', 'cluster-b', { cache: 'llama' }),
        replica('other-namespace', 'cluster-b', { namespace: 'elsewhere' }),
      ],
      observed: { 'hydration-cluster-b': staged() },
    });
    expect(desiredKeys(rsp)).toEqual(['hydration-cluster-a', 'hydration-cluster-b']);
    const kept = desiredResources(rsp)['hydration-cluster-b']!;
    expect(kept).toEqual({
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelCacheHydration',
      metadata: {
        name: 'modelcache-ml-team-qwen-cluster-b-a99c8',
        namespace: NAMESPACE,
        labels: { 'modelplane.ai/modelcache': CACHE, 'modelplane.ai/cluster': 'cluster-b' },
      },
      spec: childSpec('cluster-b'), // the observed revision, not v2; and never spec.crossplane
    });
    expect(rsp.desired?.resources['hydration-cluster-b']?.ready).toBe('READY_TRUE');
    expect(compositeStatus(rsp)['clusters']).toContainEqual({
      name: 'cluster-b',
      phase: 'Ready',
      message: 'retained: no longer selected; in use by ModelReplica r1, r2',
      mount: HF_MOUNT,
    });
    expect(compositeStatus(rsp)['summary']).toEqual(summaryOf('1/2', { pending: 1 }));
  });

  it('releases it once no replica of this cache runs there: the child is no longer desired', async () => {
    const rsp = await run({
      clusters: [cluster('cluster-a')],
      replicas: [replica('r1', 'cluster-a'), replica('other-cache', 'cluster-b', { cache: 'llama' })],
      observed: { 'hydration-cluster-b': staged() },
    });
    expect(desiredKeys(rsp)).toEqual(['hydration-cluster-a']);
    expect((compositeStatus(rsp)['clusters'] as JsonObject[]).map((c) => c['name'])).toEqual(['cluster-a']);
  });

  it('holds a cluster whose InferenceCluster is gone while a replica is there, and drops it after', async () => {
    const held = await run({ clusters: [], replicas: [replica('r1', 'cluster-b')], observed: { 'hydration-cluster-b': staged() } });
    expect(desiredKeys(held)).toEqual(['hydration-cluster-b']);
    // The footprint is empty: NoClusters, as the spec says, and the retained child still listed.
    expect(condition(held, 'ClustersMatched')).toMatchObject({ reason: 'NoClusters' });
    expect(compositeStatus(held)['summary']).toEqual(summaryOf('1/1'));

    const released = await run({ clusters: [], replicas: [], observed: { 'hydration-cluster-b': staged() } });
    expect(desiredKeys(released)).toEqual([]);
    // The shard stays, empty, until it has dropped the child.
    expect(compositeStatus(released)).toEqual({ summary: summaryOf('0/0'), clusters: [] });
  });
});

describe('a cluster that turns unreadable', () => {
  const hydrating = () => observedChild('cluster-a', { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' });

  it('keeps the child of a cluster that still matches but reports no provider config, as observed, and says so', async () => {
    const rsp = await run({
      clusters: [cluster('cluster-a', { provisioned: false }), cluster('cluster-b')],
      observed: { 'hydration-cluster-a': hydrating() },
    });
    expect(desiredKeys(rsp)).toEqual(['hydration-cluster-a', 'hydration-cluster-b']);
    expect(desiredResources(rsp)['hydration-cluster-a']?.['spec']).toEqual(childSpec('cluster-a'));
    expect((compositeStatus(rsp)['clusters'] as JsonObject[])[0]).toEqual({
      name: 'cluster-a',
      phase: 'Hydrating',
      message:
        'kept as it was: InferenceCluster cluster-a matches but reports no provider config (status.providerConfigRef.name); downloading',
    });
  });

  it('keeps it even when it was the only cluster (NoClusters, nothing deleted)', async () => {
    const rsp = await run({ clusters: [cluster('cluster-a', { provisioned: false })], observed: { 'hydration-cluster-a': hydrating() } });
    expect(desiredKeys(rsp)).toEqual(['hydration-cluster-a']);
    expect(condition(rsp, 'ClustersMatched')).toMatchObject({ status: 'STATUS_CONDITION_FALSE', reason: 'NoClusters' });
  });

  it('drops it when the cluster left the selector and nothing uses it there', async () => {
    const rsp = await run({
      clusters: [cluster('cluster-a', { labels: { 'modelplane.ai/tier': 'h100' } })],
      observed: { 'hydration-cluster-a': hydrating() },
    });
    expect(desiredKeys(rsp)).toEqual([]);
  });

  it('stamps the child afresh from the current spec once the cluster is readable again', async () => {
    const rsp = await run({
      xr: cacheXr({ huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 30 } }),
      observed: { 'hydration-cluster-a': hydrating() },
    });
    expect(desiredResources(rsp)['hydration-cluster-a']?.['spec']).toEqual(
      childSpec('cluster-a', { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 30 } }),
    );
  });
});

describe('secrets and determinism', () => {
  it('never copies a token: not from a Secret someone required, nor from a child, nor from a legacy Secret Object', async () => {
    const token = 'aGYtdG9rZW4tdmFsdWU=';
    const plain = Buffer.from(token, 'base64').toString();
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace: NAMESPACE }, data: { HF_TOKEN: token } };
    const req = cacheRequest({
      xr: cacheXr({ huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, authSecret: { name: 'hf-token' } } }),
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', { phase: 'Hydrating', message: 'downloading' }),
        'auth-cluster-b': {
          resource: {
            apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
            kind: 'Object',
            spec: {
              forProvider: {
                manifest: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'default' }, data: { HF_TOKEN: token } },
              },
            },
            status: { atProvider: { manifest: { apiVersion: 'v1', kind: 'Secret', data: { HF_TOKEN: token } } } },
          },
        },
      },
    });
    req.requiredResources!['auth-secret'] = items(secret);
    const rsp = await client.run(req);
    expectWellFormed(rsp);
    const text = JSON.stringify(rsp);
    expect(text).not.toContain(token);
    expect(text).not.toContain(plain);
  });

  it('answers the same request with the same bytes, whatever order clusters and replicas come in', async () => {
    const clusters = ['d', 'b', 'a', 'c'].map((n) => cluster(n));
    const replicas = [replica('r2', 'x'), replica('r1', 'x')];
    const observed = { 'hydration-x': observedChild('x', { phase: 'Ready', mount: HF_MOUNT }) };
    const first = await run({ clusters, replicas, observed });
    const again = await run({ clusters, replicas, observed });
    const shuffled = await run({ clusters: [...clusters].reverse(), replicas: [...replicas].reverse(), observed });
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    expect(JSON.stringify(shuffled)).toBe(JSON.stringify(first));
  });
});

describe('a malformed ModelCache is refused with a Fatal result naming the field', () => {
  const digestOk = `reg.io/m@sha256:${'a'.repeat(64)}`;
  it.each<[string, JsonObject, string]>([
    ['missing source sibling', { huggingFace: undefined }, 'spec.huggingFace is required when spec.source is HuggingFace'],
    ['missing OCI sibling (the missing one named first)', { source: 'OCI' }, 'spec.oci is required when spec.source is OCI'],
    ['missing claim sibling', { source: 'PersistentVolumeClaim', huggingFace: undefined }, 'spec.persistentVolumeClaim is required'],
    [
      'a second sibling',
      { oci: { ref: 'reg.io/m:v1' } },
      'spec.oci must be absent when spec.source is HuggingFace (only spec.huggingFace is read)',
    ],
    [
      'a claim sibling next to OCI',
      { ...OCI_SPEC, persistentVolumeClaim: { claimName: 'x' } },
      'spec.persistentVolumeClaim must be absent',
    ],
    ['no source', { source: undefined }, 'spec.source is required'],
    ['an unknown source', { source: 'S3' }, 'spec.source must be one of HuggingFace, OCI, PersistentVolumeClaim (got "S3")'],
    ['no selector', { clusterSelector: undefined }, 'spec.clusterSelector is required'],
    ['an empty selector', { clusterSelector: {} }, 'spec.clusterSelector must select on at least one label or expression'],
    [
      'an empty matchLabels',
      { clusterSelector: { matchLabels: {}, matchExpressions: [] } },
      'spec.clusterSelector must select on at least one label or expression',
    ],
    [
      'an In expression without values',
      { clusterSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      'spec.clusterSelector.matchExpressions[0].values must not be empty when operator is In',
    ],
    ['sizeGiB zero', { huggingFace: { repo: 'r', sizeGiB: 0 } }, 'spec.huggingFace.sizeGiB must be an integer from 1 to 100000 (got 0)'],
    [
      'sizeGiB fractional',
      { huggingFace: { repo: 'r', sizeGiB: 1.5 } },
      'spec.huggingFace.sizeGiB must be an integer from 1 to 100000 (got 1.5)',
    ],
    ['an empty repo', { huggingFace: { repo: '', sizeGiB: 1 } }, 'spec.huggingFace.repo must not be empty'],
    [
      'a bad token key',
      { huggingFace: { repo: 'r', sizeGiB: 1, authSecret: { name: 's', key: 'a b' } } },
      'spec.huggingFace.authSecret.key must be',
    ],
    [
      'a truncated digest',
      { ...OCI_SPEC, oci: { ref: 'reg.io/m@sha256:abc' } },
      'spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits',
    ],
    [
      'an upper-case digest',
      { ...OCI_SPEC, oci: { ref: digestOk.toUpperCase() } },
      'spec.oci.ref must end in a well-formed digest, @sha256: and 64 lower-case hex digits',
    ],
    [
      'a reference with a space',
      { ...OCI_SPEC, oci: { ref: 'reg.io/m :v1' } },
      'spec.oci.ref must be an OCI reference, [registry/]repository[:tag][@sha256:<digest>]',
    ],
    ['an absolute subPath', { ...OCI_SPEC, oci: { ref: 'r:v1', subPath: '/etc' } }, 'spec.oci.subPath must be a relative path'],
    [
      'a subPath climbing out',
      { ...CLAIM_SPEC, persistentVolumeClaim: { claimName: 'c', subPath: 'a/../../b' } },
      'spec.persistentVolumeClaim.subPath must be a relative path',
    ],
    [
      'a claim name that is no name',
      { ...CLAIM_SPEC, persistentVolumeClaim: { claimName: 'Bad_Name' } },
      'spec.persistentVolumeClaim.claimName must be',
    ],
  ])('%s', async (_name, spec, message) => {
    const rsp = await client.run(
      request({ observed: { composite: cacheXr(spec) }, requiredResources: { clusters: items(), replicas: items() } }),
    );
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
    expect(rsp.desired).toBeUndefined();
    expect(rsp.requirements).toBeUndefined();
  });

  it.each<[string, string, string, string]>([
    ['an upper-case name', 'metadata.name', 'Qwen', 'metadata.name must be a DNS label'],
    ['a dotted name', 'metadata.name', 'qwen.v1', 'metadata.name must be a DNS label'],
    ['a name too long for a label', 'metadata.name', 'q'.repeat(64), 'metadata.name must be a DNS label'],
    ['an upper-case namespace', 'metadata.namespace', 'ML-team', 'metadata.namespace must be a DNS label'],
  ])('%s', async (_name, field, value, message) => {
    const xr = cacheXr();
    (xr.resource['metadata'] as JsonObject)[field.split('.')[1]!] = value;
    const rsp = await client.run(request({ observed: { composite: xr } }));
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
  });

  it('accepts what is well formed: a digest (with a tag before it) and nested subPaths', async () => {
    const rsp = await run({ xr: cacheXr({ ...OCI_SPEC, oci: { ref: `reg.io/m:v1@sha256:${'0'.repeat(64)}`, subPath: 'a/b.c/d' } }) });
    expect(desiredKeys(rsp)).toEqual(['hydration-cluster-a']);
  });
});
