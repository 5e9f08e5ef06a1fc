// withOwner marks what a cache or replica writes on a workload cluster as its
// own (docs/design/names.md), except where the mark would change a running
// object's generation: a Deployment its Object composed without the owner
// annotation (a release before owners) keeps its annotations.

import { describe, expect, it } from 'vitest';
import { OBJECT_KIND, ownerAnnotation, withOwner, type JsonObject, type Owner } from '#lib';

const OWNER: Owner = { kind: 'ModelReplica', namespace: 'team-a', name: 'qwen' };
const MARK = ownerAnnotation(OWNER);
const LABELS = { 'modelplane.ai/modelreplica': 'qwen', 'modelplane.ai/namespace': 'team-a' };

function object(manifest: JsonObject): JsonObject {
  return { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind: OBJECT_KIND, spec: { forProvider: { manifest } } };
}

function workload(kind: string, name: string, annotations?: Record<string, string>): JsonObject {
  const apiVersion = kind === 'Deployment' ? 'apps/v1' : 'leaderworkerset.x-k8s.io/v1';
  const metadata: JsonObject = { name, namespace: 'default' };
  if (annotations) metadata['annotations'] = annotations;
  return { apiVersion, kind, metadata, spec: { replicas: 1 } };
}

const metadataOf = (resource: JsonObject): JsonObject =>
  ((resource['spec'] as JsonObject)['forProvider'] as { manifest: { metadata: JsonObject } }).manifest.metadata;

describe('withOwner', () => {
  const cases: { name: string; desired: JsonObject; observed?: JsonObject; annotated: boolean }[] = [
    { name: 'a new Deployment (nothing observed)', desired: workload('Deployment', 'qwen-main-a3fe4'), annotated: true },
    {
      name: 'a Deployment its Object composed with the annotation',
      desired: workload('Deployment', 'qwen-main-a3fe4'),
      observed: workload('Deployment', 'qwen-main-a3fe4', { [MARK.key]: MARK.value }),
      annotated: true,
    },
    {
      name: 'a Deployment its Object composed without it (a release before owners): left without',
      desired: workload('Deployment', 'qwen-main-a3fe4'),
      observed: workload('Deployment', 'qwen-main-a3fe4'),
      annotated: false,
    },
    {
      name: 'a Deployment under another name than the observed one (moved to new names): a new object',
      desired: workload('Deployment', 'qwen-main-4a818'),
      observed: workload('Deployment', 'qwen-main-a3fe4'),
      annotated: true,
    },
    {
      name: 'a LeaderWorkerSet composed without it: its generation is its spec’s alone',
      desired: workload('LeaderWorkerSet', 'qwen-main-a3fe4'),
      observed: workload('LeaderWorkerSet', 'qwen-main-a3fe4'),
      annotated: true,
    },
  ];

  it.each(cases)('$name', ({ desired, observed, annotated }) => {
    const marked = metadataOf(withOwner(object(desired), OWNER, observed === undefined ? undefined : object(observed)));
    expect(marked['labels']).toEqual(LABELS);
    expect(marked['annotations']).toEqual(annotated ? { [MARK.key]: MARK.value } : undefined);
  });

  it('keeps the annotations a manifest has, and adds none to a Deployment that runs without them', () => {
    const desired = workload('Deployment', 'qwen-main-a3fe4', { 'example.com/note': 'kept' });
    const marked = metadataOf(withOwner(object(desired), OWNER, object(workload('Deployment', 'qwen-main-a3fe4'))));
    expect(marked['annotations']).toEqual({ 'example.com/note': 'kept' });
  });
});
