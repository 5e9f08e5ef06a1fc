// readInferenceCluster's `stack`: the serving stack a cluster runs
// (spec.stack, upstream's Standard or Dynamo), read as absent when unset or
// not a string, so a consumer can default it.

import { describe, expect, it } from 'vitest';
import { readInferenceCluster } from '#lib';

const clusterWith = (spec: unknown) => ({ metadata: { name: 'c' }, spec, status: { providerConfigRef: { name: 'pc' } } });

describe('readInferenceCluster stack', () => {
  it.each<[string, unknown, string | undefined]>([
    ['Dynamo', { stack: 'Dynamo' }, 'Dynamo'],
    ['Standard', { stack: 'Standard' }, 'Standard'],
    ['unset', {}, undefined],
    ['no spec at all', undefined, undefined],
    ['empty', { stack: '' }, undefined],
    ['not a string', { stack: 3 }, undefined],
  ])('%s', (_name, spec, want) => {
    const cluster = readInferenceCluster(clusterWith(spec));
    expect(cluster?.stack).toBe(want);
    expect(cluster?.providerConfigName).toBe('pc');
  });
});
