// Upstream Modelplane v0.3.1's 14 ModelCache cases (TestFunctionRunner.test_compose),
// ported to the split: where a case is about one cluster's resources (the PVC,
// the Job, the token Secret), the parent sees that cluster's ModelCacheHydration
// reporting the state the case describes, and the case checks what the parent
// makes of it. The names are upstream's, verbatim.

import { describe, expect, it } from 'vitest';
import { cacheNames, huggingFaceMount, toJson } from '#lib';
import { desiredResources, inProcessClient, type StatusName, type TestRequest, type TestResponse } from '#testing';
import { compose } from '../src/fn.js';
import {
  CACHE,
  NAMESPACE,
  cacheXr,
  checkExpected,
  childSpec,
  cluster,
  lastStatus,
  observedChild,
  resolved,
  summaryOf,
  type Expected,
} from './fixtures.js';
import { reconcileFleet, worldOf, type RequestParts } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);
const CHILD_A = 'modelcache-ml-team-qwen-cluster-a-d4283';
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const WITH_AUTH = { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, revision: 'main', authSecret: { name: 'hf-token' } } };
const AUTH_REF = { authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE } };
const NO_TOKEN =
  "authSecret ml-team/hf-token is missing or has no key 'HF_TOKEN': nothing is downloaded without it, staged weights are kept (an upgrade from upstream v0.3.1 downloads once more: docs/migration.md)";
const TOKEN = 'aGYtdG9rZW4tdmFsdWU='; // upstream's fixture token, base64

interface Case {
  name: string;
  /** One reconcile of both levels with these children (fleet.ts); or, with `raw`, one call of the cache alone. */
  req: RequestParts | { raw: TestRequest };
  expected: Expected;
  more?: (rsp: TestResponse) => void;
}

const T: StatusName = 'STATUS_CONDITION_TRUE';
const F: StatusName = 'STATUS_CONDITION_FALSE';
/** A cluster's entry on the first compose: its shard is composed in this very reconcile. */
const STAMPING = 'waiting for ModelCacheShard modelcache-ml-team-qwen-shard-0-bf0ec to stamp it';

const CASES: Case[] = [
  {
    name: 'GKE cluster first pass composes RWX PVC and hydration Job',
    req: {},
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      status: { summary: summaryOf('0/1', { pending: 1 }), clusters: [{ name: 'cluster-a', phase: 'Pending', message: STAMPING }] },
      conditions: {
        ClustersMatched: [T, 'Matched', '1 cluster selected: cluster-a'],
        ArtifactReady: [F, 'Hydrating', '0/1 clusters ready; waiting for cluster-a (Pending)'],
      },
      results: [['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B to 1 clusters: cluster-a']],
      compositeReady: 'READY_FALSE',
    },
    more: (rsp) => {
      expect(desiredResources(rsp)['hydration-cluster-a']).toEqual({
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCacheHydration',
        metadata: {
          name: CHILD_A,
          namespace: NAMESPACE,
          labels: { 'modelplane.ai/modelcache': 'qwen', 'modelplane.ai/cluster': 'cluster-a' },
        },
        spec: childSpec('cluster-a'),
      });
    },
  },
  {
    name: 'HuggingFace revision and auth secret wire --revision and HF_TOKEN',
    req: { xr: cacheXr(WITH_AUTH) },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      results: [['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B to 1 clusters: cluster-a']],
    },
    more: (rsp) => {
      // The revision and the token *reference* go down; the parent never asks for the Secret itself.
      expect(desiredResources(rsp)['hydration-cluster-a']?.['spec']).toEqual(
        childSpec('cluster-a', { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, revision: 'main' }, ...AUTH_REF }),
      );
      expect(Object.keys(rsp.requirements?.resources ?? {})).toEqual(['clusters', 'replicas']);
    },
  },
  {
    name: 'EKS cluster PVC sources the EFS class from status.cache',
    req: {
      clusters: [cluster('eks-a', { storageClassName: 'modelplane-rwx-efs' })],
    },
    expected: {
      desired: { 'hydration-eks-a': 'READY_UNSPECIFIED' },
      results: [['SEVERITY_NORMAL', 'Staging Qwen/Qwen3-0.6B to 1 clusters: eks-a']],
    },
    more: (rsp) => {
      // The class is the child's business (it reads its cluster): nothing of it in the child's spec.
      expect(desiredResources(rsp)['hydration-eks-a']?.['spec']).toEqual(childSpec('eks-a'));
    },
  },
  {
    name: 'PVC bound and Job complete reports Ready',
    req: {
      xr: cacheXr({}, lastStatus([{ name: 'cluster-a', phase: 'Hydrating' }], false)),
      observed: { 'hydration-cluster-a': observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }) },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_TRUE' },
      status: { summary: summaryOf('1/1'), clusters: [{ name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT }] },
      conditions: { ArtifactReady: [T, 'Staged', 'staged on all 1 cluster'] },
      results: [['SEVERITY_NORMAL', 'Artifact staged on all 1 clusters']],
      compositeReady: 'READY_TRUE',
    },
  },
  {
    name: 'PVC bound but Job running reports Hydrating',
    req: {
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', {
          phase: 'Hydrating',
          message: 'hydration Job modelcache-ml-team-qwen-hydrate-256ec is running',
          reason: 'Hydrating',
        }),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      status: {
        summary: summaryOf('0/1', { hydrating: 1 }),
        clusters: [{ name: 'cluster-a', phase: 'Hydrating', message: 'hydration Job modelcache-ml-team-qwen-hydrate-256ec is running' }],
      },
      conditions: { ArtifactReady: [F, 'Hydrating', '0/1 clusters ready; waiting for cluster-a (Hydrating)'] },
      results: [],
      compositeReady: 'READY_FALSE',
    },
  },
  {
    name: 'failed Job reports Failed and takes precedence over PVC binding',
    req: {
      xr: cacheXr({}, lastStatus([{ name: 'cluster-a', phase: 'Hydrating' }], false)),
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', {
          phase: 'Failed',
          message: 'hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
          reason: 'HydrationFailed',
        }),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      conditions: {
        ArtifactReady: [
          F,
          'HydrationFailed',
          'cluster-a: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
        ],
      },
      results: [
        [
          'SEVERITY_WARNING',
          'Staging failed on cluster-a: hydration Job modelcache-ml-team-qwen-hydrate-256ec failed: BackoffLimitExceeded',
        ],
      ],
      compositeReady: 'READY_FALSE',
    },
  },
  {
    name: 'one of two clusters ready reports partial',
    req: {
      clusters: [cluster('cluster-b'), cluster('cluster-a')],
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }),
        'hydration-cluster-b': observedChild('cluster-b', { phase: 'Hydrating', message: 'downloading', reason: 'Hydrating' }),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_TRUE', 'hydration-cluster-b': 'READY_UNSPECIFIED' },
      status: {
        summary: summaryOf('1/2', { hydrating: 1 }),
        clusters: [
          { name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT },
          { name: 'cluster-b', phase: 'Hydrating', message: 'downloading' },
        ],
      },
      conditions: {
        ClustersMatched: [T, 'Matched', '2 clusters selected: cluster-a, cluster-b'],
        ArtifactReady: [F, 'Partial', '1/2 clusters ready; waiting for cluster-b (Hydrating)'],
      },
      results: [],
      compositeReady: 'READY_FALSE',
    },
  },
  {
    name: 'hydrated cluster stays Ready after its Job is TTL-cleaned',
    req: {
      xr: cacheXr({}, lastStatus([{ name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT }], true)),
      observed: { 'hydration-cluster-a': observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }) },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_TRUE' },
      status: { summary: summaryOf('1/1'), clusters: [{ name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT }] },
      conditions: { ArtifactReady: [T, 'Staged'] },
      results: [], // the XR was Ready already: no second "Artifact staged"
      compositeReady: 'READY_TRUE',
    },
  },
  {
    name: 'authSecret unresolved requires it and returns early',
    // The parent's requirements are the clusters and the replicas: with one still unfetched it answers with both, and nothing else.
    req: {
      raw: {
        meta: { tag: 'test' },
        observed: { composite: cacheXr(WITH_AUTH) },
        requiredResources: { clusters: resolved([cluster('cluster-a')])!['clusters']! },
      },
    },
    expected: { desired: {}, results: [], requirementsOnly: true },
  },
  {
    name: 'authSecret resolved without the referenced key composes PVC and warns',
    req: {
      xr: cacheXr(WITH_AUTH),
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', {
          phase: 'Pending',
          message: NO_TOKEN,
          reason: 'AuthSecretMissing',
          reasonMessage: NO_TOKEN,
        }),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      status: { summary: summaryOf('0/1', { pending: 1 }), clusters: [{ name: 'cluster-a', phase: 'Pending', message: NO_TOKEN }] },
      conditions: { ClustersMatched: [T, 'Matched'], ArtifactReady: [F, 'AuthSecretMissing', `cluster-a: ${NO_TOKEN}`] },
      results: [], // the child warns, on its own XR; the parent shows the reason
      compositeReady: 'READY_FALSE',
    },
  },
  {
    name: 'authSecret resolved with an empty token value composes PVC and warns',
    req: {
      xr: cacheXr(WITH_AUTH),
      observed: {
        'hydration-cluster-a': observedChild('cluster-a', {
          phase: 'Hydrating',
          message: NO_TOKEN,
          reason: 'AuthSecretMissing',
          reasonMessage: NO_TOKEN,
        }),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_UNSPECIFIED' },
      conditions: { ArtifactReady: [F, 'AuthSecretMissing', `cluster-a: ${NO_TOKEN}`] },
      results: [],
      compositeReady: 'READY_FALSE',
    },
  },
  {
    name: 'Ready cluster drops the auth Secret with the Job',
    req: {
      xr: cacheXr(WITH_AUTH, lastStatus([{ name: 'cluster-a', phase: 'Hydrating' }], false)),
      observed: {
        'hydration-cluster-a': observedChild(
          'cluster-a',
          { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' },
          childSpec('cluster-a', { huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, revision: 'main' }, ...AUTH_REF }),
        ),
      },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_TRUE' },
      conditions: { ArtifactReady: [T, 'Staged'] },
      results: [['SEVERITY_NORMAL', 'Artifact staged on all 1 clusters']],
      compositeReady: 'READY_TRUE',
    },
    more: (rsp) => {
      // Dropping the Secret is the child's job; the parent keeps handing it the reference.
      expect(desiredResources(rsp)['hydration-cluster-a']?.['spec']).toMatchObject(AUTH_REF);
      expect(JSON.stringify(rsp)).not.toContain(TOKEN);
    },
  },
  {
    name: 'token rotated away after Ready keeps the PVC and stays Ready',
    req: {
      xr: cacheXr(WITH_AUTH, lastStatus([{ name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT }], true)),
      observed: { 'hydration-cluster-a': observedChild('cluster-a', { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }) },
    },
    expected: {
      desired: { 'hydration-cluster-a': 'READY_TRUE' },
      status: { summary: summaryOf('1/1'), clusters: [{ name: 'cluster-a', phase: 'Ready', mount: HF_MOUNT }] },
      conditions: { ArtifactReady: [T, 'Staged'] },
      results: [],
      compositeReady: 'READY_TRUE',
    },
  },
  {
    name: 'authSecret missing with no clusters reports NoClusters not AuthSecretMissing',
    req: { xr: cacheXr(WITH_AUTH), clusters: [] },
    expected: {
      desired: {},
      status: { summary: summaryOf('0/0', { shards: 0 }), clusters: [] },
      conditions: {
        ClustersMatched: [F, 'NoClusters', 'no provisioned InferenceCluster matches spec.clusterSelector'],
        ArtifactReady: [F, 'NoClusters', 'nothing to stage: no provisioned InferenceCluster matches spec.clusterSelector'],
      },
      results: [],
      compositeReady: 'READY_FALSE',
    },
  },
];

describe('upstream ModelCache cases, as the parent sees them', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const rsp =
      'raw' in c.req ? await client.run(c.req.raw) : (await reconcileFleet(client, worldOf(c.req, [cluster('cluster-a')]))).merged;
    checkExpected(rsp, c.expected);
    c.more?.(rsp);
  });
});
