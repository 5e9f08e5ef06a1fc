// Issue 29, point 5, through gRPC: two teams, one name, two Deployments. Three
// ModelReplicas named qwen-chat-a in three namespaces composed one Deployment
// on cluster-a, because upstream's names leave the namespace out. Every name
// now carries it; what a replica already runs under upstream's names keeps
// them, unless another replica's Object wrote the same object; and an object
// another XR owns is never written (docs/design/names.md).

import { describe, expect, it } from 'vitest';
import { OBSERVE_ONLY, ownerAnnotation, upstreamReplicaNames, type JsonObject } from '#lib';
import { condition, desiredResources, manifestOf, serveForFile, type TestRequest, type TestResponse } from '#testing';
import {
  at,
  checkResponse,
  cluster,
  gangEngine,
  observeAll,
  podTemplates,
  replica,
  requestFor,
  standaloneEngine,
  underUpstreamNames,
} from './support.js';

const served = serveForFile('compose-model-replica');

async function run(req: TestRequest): Promise<TestResponse> {
  const rsp = await served.client.run(req);
  checkResponse(rsp);
  return rsp;
}

const NAME = 'qwen-chat-a';
const PD = { mode: 'PrefillDecode' };
const SHAPES: [string, JsonObject, string?][] = [
  ['a Standalone engine (Deployment)', { engines: [standaloneEngine('main')] }],
  ['a gang on the Standard stack (LeaderWorkerSet)', { engines: [gangEngine('main')] }],
  ['a gang on the Dynamo stack (PodCliqueSet)', { engines: [gangEngine('main')] }, 'Dynamo'],
  [
    'PrefillDecode (two Deployments, the disaggregated picker)',
    {
      serving: PD,
      engines: [
        { ...standaloneEngine('prefill'), phase: 'Prefill' },
        { ...standaloneEngine('decode'), phase: 'Decode' },
      ],
    },
  ],
];

function compose(namespace: string, shape: JsonObject, stack?: string, observed?: Record<string, JsonObject>) {
  return run(
    requestFor({
      xr: replica({ name: NAME, namespace, ...shape }),
      cluster: cluster('cluster-a', stack ? { stack } : {}),
      ...(observed ? { observed } : {}),
    }),
  );
}

/** "Kind namespace/name" of every remote object. */
function remoteIds(rsp: TestResponse): string[] {
  return Object.values(desiredResources(rsp)).map((object) => {
    const manifest = manifestOf(object) as { kind: string; metadata: { name: string; namespace?: string } };
    return `${manifest.kind} ${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}`;
  });
}

/** Every label value a selector of the replica matches on, and every such label its pods carry. */
function selectorValues(rsp: TestResponse): string[] {
  const values: string[] = [];
  for (const [key, object] of Object.entries(desiredResources(rsp))) {
    const manifest = manifestOf(object);
    for (const path of [
      ['spec', 'selector', 'matchLabels'],
      ['spec', 'selector'],
    ]) {
      const selector = at(manifest, ...path);
      if (selector && typeof selector === 'object' && !('matchLabels' in selector))
        values.push(...Object.values(selector as Record<string, string>));
    }
    if (key.startsWith('model-serving-') || key === 'epp') {
      for (const { template } of podTemplates(manifest)) {
        const labels = at(template, 'metadata', 'labels') as Record<string, string> | undefined;
        for (const label of ['modelplane.ai/serving', 'modelplane.ai/workload', 'app'])
          if (labels?.[label]) values.push(`${label}=${labels[label]}`);
      }
    }
  }
  return values;
}

describe('two replicas of one name in two namespaces, on one cluster, in default', () => {
  it.each(SHAPES)('%s: disjoint names for every remote object, and disjoint selectors', async (_what, shape, stack) => {
    const a = await compose('team-a', shape, stack);
    const b = await compose('team-b', shape, stack);
    const idsA = remoteIds(a);
    const idsB = remoteIds(b);
    expect(idsA.length).toBeGreaterThanOrEqual(10);
    for (const id of [...idsA, ...idsB]) expect(id).toContain(' default/');
    expect(idsA.filter((id) => idsB.includes(id))).toEqual([]);
    const valuesA = selectorValues(a);
    expect(valuesA.length).toBeGreaterThan(0);
    expect(valuesA.filter((v) => selectorValues(b).includes(v))).toEqual([]);
  });

  it('each remote object says whose it is', async () => {
    const rsp = await compose('team-b', { engines: [standaloneEngine('main')] });
    const owner = ownerAnnotation({ kind: 'ModelReplica', namespace: 'team-b', name: NAME });
    for (const object of Object.values(desiredResources(rsp))) {
      const metadata = (manifestOf(object) as { metadata: JsonObject }).metadata;
      expect(metadata['labels']).toEqual({ 'modelplane.ai/modelreplica': NAME, 'modelplane.ai/namespace': 'team-b' });
      expect(metadata['annotations']).toEqual({ [owner.key]: `ModelReplica ${NAME} in namespace team-b` });
    }
  });
});

const UPSTREAM = upstreamReplicaNames(NAME);
const STANDALONE = { engines: [standaloneEngine('main')] };

/**
 * What the release before this one left on cluster-a for replica qwen-chat-a
 * of `namespace`: every Object under upstream's names. `created`: its Object
 * made the remote objects; `sharedWith`: the other Objects whose field
 * managers wrote them too.
 */
async function before(namespace: string, options: { created?: boolean; sharedWith?: string[] } = {}) {
  const first = await compose(namespace, STANDALONE);
  const observed = underUpstreamNames(observeAll(first), NAME);
  for (const object of Object.values(observed)) {
    const self = `${namespace}-object`;
    (object['metadata'] as JsonObject)['name'] = self;
    if (options.created)
      ((object['metadata'] as JsonObject)['annotations'] as JsonObject)['crossplane.io/external-create-succeeded'] = 'then';
    const remote = at(object, 'status', 'atProvider', 'manifest', 'metadata') as JsonObject;
    remote['managedFields'] = [self, ...(options.sharedWith ?? [])].map((o) => ({
      manager: `provider-kubernetes/${o}`,
      operation: 'Apply',
    }));
  }
  return observed;
}

describe('upgrading: what runs under upstream’s names', () => {
  it('keeps them when nothing says another replica wrote them, and marks them as its own', async () => {
    const rsp = await compose('team-a', STANDALONE, undefined, await before('team-a'));
    expect(at(manifestOf(desiredResources(rsp)['model-serving-main']), 'metadata', 'name')).toBe(UPSTREAM.deployment('main'));
    expect(at(manifestOf(desiredResources(rsp)['inference-pool']), 'metadata', 'name')).toBe(UPSTREAM.pool);
    expect(at(manifestOf(desiredResources(rsp)['inference-pool']), 'spec', 'selector', 'matchLabels')).toEqual({
      'modelplane.ai/serving': NAME,
    });
    expect(at(manifestOf(desiredResources(rsp)['model-serving-main']), 'metadata', 'labels', 'modelplane.ai/namespace')).toBe('team-a');
    expect(rsp.results?.filter((r) => r.reason === 'OwnedElsewhere')).toEqual([]);
  });

  it('three teams’ Objects on one Deployment: the one that created it keeps it, the other two compose their own, a Warning naming the owner', async () => {
    const objects = ['team-a-object', 'team-b-object', 'team-c-object'];
    const others = (self: string) => objects.filter((o) => o !== self);
    const a = await compose(
      'team-a',
      STANDALONE,
      undefined,
      await before('team-a', { created: true, sharedWith: others('team-a-object') }),
    );
    const b = await compose('team-b', STANDALONE, undefined, await before('team-b', { sharedWith: others('team-b-object') }));
    const c = await compose('team-c', STANDALONE, undefined, await before('team-c', { sharedWith: others('team-c-object') }));
    const deployment = (rsp: TestResponse) => at(manifestOf(desiredResources(rsp)['model-serving-main']), 'metadata', 'name');
    expect(deployment(a)).toBe(UPSTREAM.deployment('main'));
    expect([deployment(b), deployment(c)]).not.toContain(UPSTREAM.deployment('main'));
    expect(new Set([deployment(a), deployment(b), deployment(c)]).size).toBe(3);
    const ids = [a, b, c].map(remoteIds);
    expect(ids[1]!.filter((id) => ids[0]!.includes(id) || ids[2]!.includes(id))).toEqual([]);
    for (const moved of [b, c]) {
      const warnings = moved.results?.filter((r) => r.reason === 'OwnedElsewhere' && r.severity === 'SEVERITY_WARNING') ?? [];
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings[0]!.message).toMatch(
        /^Deployment qwen-chat-a-main-[0-9a-f]{5} on cluster-a was also written by the XR of provider-kubernetes Object team-[ac]-object: it is left to it, and this replica composes its own, qwen-chat-a-main-[0-9a-f]{5}$/,
      );
      expect(condition(moved, 'ModelAccepted')?.reason).not.toBe('OwnedElsewhere');
    }
  });
});

describe('an object under this release’s name that another XR owns', () => {
  const theirs = ownerAnnotation({ kind: 'ModelReplica', namespace: 'team-z', name: 'other' });

  async function observedWithForeignOwner(created: boolean) {
    const first = await compose('team-a', STANDALONE);
    const observed = observeAll(first);
    const deployment = observed['model-serving-main']!;
    const remote = at(deployment, 'status', 'atProvider', 'manifest', 'metadata') as JsonObject;
    remote['annotations'] = { ...(remote['annotations'] as JsonObject), [theirs.key]: theirs.value };
    if (created) ((deployment['metadata'] as JsonObject)['annotations'] as JsonObject)['crossplane.io/external-create-succeeded'] = 'then';
    return observed;
  }

  it('is kept observe-only, never written or deleted; nothing is served; the condition names the owner', async () => {
    const observed = await observedWithForeignOwner(false);
    const rsp = await compose('team-a', STANDALONE, undefined, observed);
    expect((desiredResources(rsp)['model-serving-main']!['spec'] as JsonObject)['managementPolicies']).toEqual([...OBSERVE_ONLY]);
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(Object.keys(observed).sort());
    for (const type of ['ModelAccepted', 'ModelReady']) {
      expect(condition(rsp, type)?.reason).toBe('OwnedElsewhere');
      expect(condition(rsp, type)?.message).toMatch(
        /^Deployment qwen-chat-a-main-[0-9a-f]{5} on cluster-a belongs to ModelReplica other in namespace team-z:/,
      );
    }
    expect(rsp.desired?.composite?.ready).toBe('READY_FALSE');
  });

  it('…unless this replica’s own Object created it: then it goes on', async () => {
    const rsp = await compose('team-a', STANDALONE, undefined, await observedWithForeignOwner(true));
    expect((desiredResources(rsp)['model-serving-main']!['spec'] as JsonObject)['managementPolicies']).toBeUndefined();
    expect(condition(rsp, 'ModelAccepted')?.reason).toBe('Accepted');
  });
});
