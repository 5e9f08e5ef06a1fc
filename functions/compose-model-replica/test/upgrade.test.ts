// Upgrading in place from the release before the shard level (commit d290b86,
// docs/migration.md): what that release composed for the e2e upgrade story
// (upgrade-d290b86.yaml, made by running it) is observed as applied, and this
// release must compose every object the same, but for metadata labels, which
// say whose it is. A Deployment's generation counts its annotations too (the
// API server copies them onto its ReplicaSets), so the engine's and the
// endpoint picker's keep theirs: `make e2e-upgrade` checks the generation on
// the plane, this checks the manifests.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hydrationName, ownerAnnotation, type JsonObject } from '#lib';
import { condition, desiredResources, manifestOf, type TestResponse } from '#testing';
import { asObserved, requestFor, run, standaloneEngine } from './support.js';

interface Fixture {
  request: { xr: JsonObject; cluster: JsonObject; cache: JsonObject };
  desired: Record<string, JsonObject>;
}

const OLD = parse(readFileSync(new URL('upgrade-d290b86.yaml', import.meta.url), 'utf8')) as Fixture;
const { xr, cluster, cache } = OLD.request;
const NAMESPACE = 'e2e-upgrade';
const OWNER = ownerAnnotation({ kind: 'ModelReplica', namespace: NAMESPACE, name: 'qwen-chat' });
const entry = ((cache['status'] as JsonObject)['clusters'] as JsonObject[]).find((e) => e['name'] === 'cluster-a')!;

/** The cluster's ModelCacheHydration after the hand-over to its shard, as this release's hydration reports itself. */
const HANDED_OVER: JsonObject = {
  apiVersion: 'modelplane.ai/v1alpha1',
  kind: 'ModelCacheHydration',
  metadata: { name: hydrationName(NAMESPACE, 'qwen', 'cluster-a'), namespace: NAMESPACE },
  spec: { cacheName: 'qwen', clusterName: 'cluster-a' },
  status: { phase: 'Ready', mount: entry['mount'], accessModes: entry['accessModes'], staged: 'Qwen/Qwen3-0.6B@main', verified: false },
};

/** What the old release composed on cluster-a: provider-kubernetes Objects (beside them, the cache's Usage). */
const REMOTE = Object.keys(OLD.desired).filter((key) => OLD.desired[key]!['kind'] === 'Object');

/** Everything the old release composed, as Crossplane observes it once applied and Ready. */
function observedOld(): Record<string, JsonObject> {
  return Object.fromEntries(Object.entries(OLD.desired).map(([key, object]) => [key, asObserved(object, true)]));
}

/** An Object as what its remote object's generation counts: everything but the manifest's metadata, and a Deployment's annotations. */
function generationView(object: JsonObject | undefined): JsonObject {
  const { metadata, ...manifest } = manifestOf(object);
  const spec = { ...(object?.['spec'] as JsonObject), forProvider: { manifest } };
  const view: JsonObject = { spec };
  if (manifest['kind'] === 'Deployment') view['annotations'] = (metadata as JsonObject | undefined)?.['annotations'] ?? {};
  return view;
}

// Where the replica finds its cluster's entry across the upgrade: the cache's status.clusters[] (the hand-over not
// stamped yet: no ModelCacheHydration of that name), then the cluster's ModelCacheHydration, the shard's.
const STAGES: [string, JsonObject | null][] = [
  ['its entry in the ModelCache’s status (before the hand-over)', null],
  ['its ModelCacheHydration, handed over to the shard', HANDED_OVER],
];

describe.each(STAGES)('upgraded from d290b86, reading %s', (_, hydration) => {
  const compose = (): Promise<TestResponse> =>
    run(requestFor({ xr: { resource: xr }, cluster, cache, hydration, observed: observedOld() }));

  it('serves, composing exactly the objects the old release did', async () => {
    const rsp = await compose();
    expect(condition(rsp, 'ModelAccepted')?.reason).toBe('Accepted');
    expect(Object.keys(desiredResources(rsp)).sort()).toEqual(Object.keys(OLD.desired).sort());
    expect(REMOTE.length).toBe(Object.keys(OLD.desired).length - 1);
    expect(desiredResources(rsp)['model-cache-usage']).toEqual(OLD.desired['model-cache-usage']);
  });

  it.each(REMOTE)('%s: the same object, the same spec (and a Deployment the same annotations)', async (key) => {
    const rsp = await compose();
    const now = desiredResources(rsp)[key];
    expect(generationView(now)).toEqual(generationView(OLD.desired[key]));
    // The same name, now marked as the replica's by its labels.
    const metadata = manifestOf(now)['metadata'] as JsonObject;
    expect(metadata['name']).toBe((manifestOf(OLD.desired[key])['metadata'] as JsonObject)['name']);
    expect(metadata['labels']).toMatchObject({ 'modelplane.ai/modelreplica': 'qwen-chat', 'modelplane.ai/namespace': NAMESPACE });
  });
});

describe('what an upgraded replica composes new carries the owner annotation', () => {
  it('an engine added after the upgrade: its Deployment is created with it; the one running keeps its annotations', async () => {
    const spec = xr['spec'] as JsonObject;
    const engines = [...(spec['engines'] as JsonObject[]), standaloneEngine('extra')];
    const added = { ...xr, spec: { ...spec, engines } };
    const rsp = await run(requestFor({ xr: { resource: added }, cluster, cache, hydration: HANDED_OVER, observed: observedOld() }));
    const annotations = (key: string) => (manifestOf(desiredResources(rsp)[key])['metadata'] as JsonObject)['annotations'];
    expect(annotations('model-serving-extra')).toEqual({ [OWNER.key]: OWNER.value });
    expect(annotations('model-serving-main')).toBeUndefined();
    // The routing keeps upstream's names, so every object of it but the picker's Deployment is annotated.
    expect(annotations('inference-pool')).toEqual({ [OWNER.key]: OWNER.value });
    expect(annotations('epp')).toBeUndefined();
  });
});
