// Bad input gets a Fatal result naming the field, and Crossplane changes nothing.

import { describe, expect, it } from 'vitest';
import { parseReference, type JsonObject } from '#lib';
import { items, request } from '#testing';
import { CLUSTER_A, HF, HF_SOURCE, hydration, run } from './support.js';

async function fatal(spec: JsonObject, namespace?: string): Promise<string[]> {
  const xr = hydration(spec);
  // undefined in the change means "absent": remove it after the defaults are merged.
  xr.resource['spec'] = Object.fromEntries(Object.entries(xr.resource['spec'] as JsonObject).filter(([, v]) => v !== undefined));
  if (namespace) (xr.resource['metadata'] as JsonObject)['namespace'] = namespace;
  const rsp = await run(request({ observed: { composite: xr }, requiredResources: { cluster: items(CLUSTER_A) } }));
  expect(rsp.desired?.resources ?? {}).toEqual({});
  return rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL').map((r) => r.message);
}

const digest = 'a'.repeat(64);

describe('spec errors', () => {
  it.each<[string, JsonObject, string]>([
    ['no source', { source: undefined }, 'spec.source is required'],
    ['an unknown source', { source: 'S3' }, 'spec.source must be one of HuggingFace, OCI, PersistentVolumeClaim (got "S3")'],
    [
      'HuggingFace without its sibling',
      { source: 'HuggingFace', huggingFace: undefined },
      'spec.huggingFace is required when spec.source is HuggingFace',
    ],
    ['OCI without its sibling', { source: 'OCI', huggingFace: undefined }, 'spec.oci is required when spec.source is OCI'],
    [
      'PersistentVolumeClaim without its sibling',
      { source: 'PersistentVolumeClaim', huggingFace: undefined },
      'spec.persistentVolumeClaim is required when spec.source is PersistentVolumeClaim',
    ],
    [
      'a fractional size',
      { huggingFace: { ...HF_SOURCE, sizeGiB: 20.5 } },
      'spec.huggingFace.sizeGiB must be an integer from 1 to 100000 (got 20.5)',
    ],
    ['a cache name that is no DNS label', { cacheName: 'Qwen.Big' }, 'spec.cacheName must be a DNS label'],
    ['no cluster name', { clusterName: undefined }, 'spec.clusterName is required'],
    [
      'a repo that reads as an option',
      { huggingFace: { ...HF_SOURCE, repo: '--local-dir=/etc' } },
      'spec.huggingFace.repo must not start with "-"',
    ],
    [
      'a revision that reads as an option',
      { huggingFace: { ...HF_SOURCE, revision: '-x' } },
      'spec.huggingFace.revision must not start with "-"',
    ],
    ['a NUL in the repo', { huggingFace: { ...HF_SOURCE, repo: 'a\0b' } }, 'spec.huggingFace.repo must not contain a NUL character'],
    ['an @ in the repo', { huggingFace: { ...HF_SOURCE, repo: 'Qwen/x@y' } }, 'spec.huggingFace.repo must not contain "@"'],
    [
      'a token reference into another namespace',
      { authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: 'other-team' } },
      "spec.authSecret.namespace must be this ModelCacheHydration's own namespace ml-team (got other-team)",
    ],
    ['a bad token key', { authSecret: { name: 'hf-token', key: 'HF TOKEN' } }, 'spec.authSecret.key must be a Secret key'],
    [
      'an OCI digest that is too short',
      { source: 'OCI', huggingFace: undefined, oci: { ref: 'reg.io/m@sha256:abc' } },
      'spec.oci.ref must end in a well-formed digest',
    ],
    [
      'an OCI digest in upper case',
      { source: 'OCI', huggingFace: undefined, oci: { ref: `reg.io/m@sha256:${'A'.repeat(64)}` } },
      'spec.oci.ref must end in a well-formed digest',
    ],
    [
      'an OCI reference that is none',
      { source: 'OCI', huggingFace: undefined, oci: { ref: 'Reg.io/UPPER:tag' } },
      'spec.oci.ref must be an OCI reference',
    ],
    [
      'an OCI subPath that climbs out',
      { source: 'OCI', huggingFace: undefined, oci: { ref: 'reg.io/m:v1', subPath: '../etc' } },
      'spec.oci.subPath must be a relative path',
    ],
    [
      'an absolute claim subPath',
      { source: 'PersistentVolumeClaim', huggingFace: undefined, persistentVolumeClaim: { claimName: 'w', subPath: '/x' } },
      'spec.persistentVolumeClaim.subPath must be a relative path',
    ],
    [
      'a claim name that is no name',
      { source: 'PersistentVolumeClaim', huggingFace: undefined, persistentVolumeClaim: { claimName: 'My Claim' } },
      'spec.persistentVolumeClaim.claimName must be a DNS subdomain',
    ],
    [
      'a bad pull secret',
      { source: 'OCI', huggingFace: undefined, oci: { ref: 'reg.io/m:v1', imagePullSecrets: [{ name: 'Bad_Name' }] } },
      'spec.oci.imagePullSecrets[0].name must be a DNS subdomain',
    ],
  ])('refuses %s, naming the field', async (_name, change, message) => {
    const messages = await fatal({ ...HF, ...change });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(message);
  });

  it('refuses a namespace that is no DNS label (it names composed resources)', async () => {
    expect((await fatal(HF, 'Ml_Team'))[0]).toContain('metadata.namespace must be a DNS label');
  });
});

describe('parseReference', () => {
  it.each<[string, ReturnType<typeof parseReference>]>([
    ['ubuntu', { repository: 'ubuntu' }],
    ['ubuntu:24.04', { repository: 'ubuntu', tag: '24.04' }],
    ['registry.example.com:5000/models/qwen:v1', { repository: 'registry.example.com:5000/models/qwen', tag: 'v1' }],
    [`ghcr.io/acme/qwen@sha256:${digest}`, { repository: 'ghcr.io/acme/qwen', digest: `sha256:${digest}` }],
    [`localhost:5000/q:v1@sha256:${digest}`, { repository: 'localhost:5000/q', tag: 'v1', digest: `sha256:${digest}` }],
    ['us-docker.pkg.dev/acme/models/qwen__x:v1', { repository: 'us-docker.pkg.dev/acme/models/qwen__x', tag: 'v1' }],
  ])('%s', (ref, expected) => {
    expect(parseReference(ref)).toEqual(expected);
  });
  it.each(['', 'UPPER/case', 'a:', 'a@sha256:1', 'a//b', 'a:tag:more', '-a/b', `a@sha512:${digest}`])('refuses %j', (ref) => {
    expect(parseReference(ref)).toBeUndefined();
  });
});
