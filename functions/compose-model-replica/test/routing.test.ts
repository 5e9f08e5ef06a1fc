// Unified routing (upstream's TestUnifiedRouting and TestKvBlockSize): the
// InferencePool, the HTTPRoute and the endpoint picker, whose config is
// byte-exact and whose checksum rolls the picker when it changes.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { desiredResources } from '#testing';
import { configChecksum, flagValue, kvBlockSize, unifiedEppConfig } from '../src/routing.js';
import {
  at,
  cluster,
  gangEngine,
  manifest,
  observeAll,
  replica,
  requestFor,
  run,
  standaloneEngine,
  underUpstreamNames,
  type ReplicaOptions,
} from './support.js';

/** This release's names for replica r of ml-team. */
const R = { serving: 'r-49ee1', pool: 'r-pool-479a9', epp: 'r-epp-0e422' };

/** Compose `options`' replica, then again observing all it composed under upstream's names (an upgrade). */
async function upgraded(options: ReplicaOptions) {
  const xr = replica(options);
  const first = await run(requestFor({ xr, cluster: cluster() }));
  return run(requestFor({ xr, cluster: cluster(), observed: underUpstreamNames(observeAll(first), options.name ?? 'test-replica') }));
}

const ROUTING_KEYS = [
  'epp',
  'epp-config',
  'epp-role',
  'epp-rolebinding',
  'epp-service',
  'epp-serviceaccount',
  'inference-pool',
  'model-route',
];

const compose = (options: ReplicaOptions = {}) => run(requestFor({ xr: replica({ name: 'r', ...options }), cluster: cluster() }));
const config = (rsp: Awaited<ReturnType<typeof compose>>) => at(manifest(rsp, 'epp-config'), 'data', 'epp-config.yaml') as string;

describe('unified routing', () => {
  it.each([1, 2])(
    'fronts the serving pods with a pool and the endpoint picker (copies %i: one surface, one pod or many)',
    async (copies) => {
      const rsp = await compose({ engines: [standaloneEngine('main', { copies })] });
      for (const key of ROUTING_KEYS) expect(desiredResources(rsp)).toHaveProperty(key);
      expect(desiredResources(rsp)).not.toHaveProperty('model-service');
      expect(manifest(rsp, 'inference-pool')['kind']).toBe('InferencePool');
      expect(at(manifest(rsp, 'inference-pool'), 'spec', 'endpointPickerRef', 'name')).toBe(R.epp);
    },
  );

  it('the pool selects the pods by the serving label they already carry', async () => {
    const rsp = await compose();
    expect(at(manifest(rsp, 'inference-pool'), 'spec', 'selector', 'matchLabels')).toEqual({ 'modelplane.ai/serving': R.serving });
    expect(at(manifest(rsp, 'model-serving-main'), 'spec', 'template', 'metadata', 'labels', 'modelplane.ai/serving')).toBe(R.serving);
  });

  it('the route targets the inference pool, with no request timeout', async () => {
    const rule = at(manifest(await compose(), 'model-route'), 'spec', 'rules', 0) as JsonObject;
    expect(at(rule, 'backendRefs', 0)).toEqual({ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: R.pool });
    expect(at(rule, 'timeouts', 'request')).toBe('0s');
  });

  it('the route path is the Modelplane namespace and replica, whatever the remote namespace', async () => {
    const rsp = await run(requestFor({ xr: replica({ name: 'qwen-0', namespace: 'team-b' }), cluster: cluster() }));
    expect(at(manifest(rsp, 'model-route'), 'spec', 'rules', 0, 'matches', 0, 'path')).toEqual({
      type: 'PathPrefix',
      value: '/team-b/qwen-0/',
    });
    expect(at(manifest(rsp, 'model-route'), 'metadata', 'name')).toBe('qwen-0-1660f');
    expect(at(manifest(rsp, 'model-route'), 'metadata', 'namespace')).toBe('default');
  });

  it.each<[string, JsonObject | undefined, { name: string; namespace: string }]>([
    [
      'no gateway reported: inference-gateway in modelplane-system',
      undefined,
      { name: 'inference-gateway', namespace: 'modelplane-system' },
    ],
    ['the cluster reports a gateway name', { name: 'cluster-gateway' }, { name: 'cluster-gateway', namespace: 'modelplane-system' }],
    ['the cluster reports a name and a namespace', { name: 'edge', namespace: 'gateways' }, { name: 'edge', namespace: 'gateways' }],
  ])('parent gateway: %s', async (_name, gateway, want) => {
    const rsp = await run(requestFor({ xr: replica(), cluster: cluster('cluster-a', gateway ? { gateway } : {}) }));
    expect(at(manifest(rsp, 'model-route'), 'spec', 'parentRefs')).toEqual([want]);
  });

  it('the epp config is unified, not disaggregated', async () => {
    const text = config(await compose());
    for (const plugin of ['prefix-cache-scorer', 'queue-scorer', 'approx-prefix-cache-producer']) expect(text).toContain(plugin);
    expect(text).not.toContain('prefill');
    expect(text).not.toContain('decider');
  });

  it('the epp image and config group are pinned', async () => {
    const rsp = await compose();
    expect(at(manifest(rsp, 'epp'), 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe(
      'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0',
    );
    expect(config(rsp)).toContain('apiVersion: llm-d.ai/v1alpha1');
  });

  it('the epp pod carries the config checksum: upstream’s, byte for byte, for block size 16', async () => {
    const rsp = await compose();
    const checksum = at(manifest(rsp, 'epp'), 'spec', 'template', 'metadata', 'annotations', 'modelplane.ai/epp-config-checksum');
    expect(checksum).toBe('20c1dfea3fc4ad41e335cc74edbeb1e8689a607bc4bf7395849ffd2cf0bb2ae1');
    expect(checksum).toBe(createHash('sha256').update(config(rsp)).digest('hex'));
  });

  it('a block size from the engine flags changes the config, and so the checksum (which rolls the picker)', async () => {
    const rsp = await compose({ engines: [standaloneEngine('main', { args: ['--model=x', '--block-size=32'] })] });
    expect(config(rsp)).toContain('    blockSizeTokens: 32\n');
    expect(config(rsp)).not.toContain('BLOCK_SIZE');
    const checksum = at(manifest(rsp, 'epp'), 'spec', 'template', 'metadata', 'annotations', 'modelplane.ai/epp-config-checksum');
    expect(checksum).toBe(configChecksum(unifiedEppConfig(32)));
    expect(checksum).not.toBe('20c1dfea3fc4ad41e335cc74edbeb1e8689a607bc4bf7395849ffd2cf0bb2ae1');
  });

  it('unified fronts a LeaderWorkerSet: the block size comes from the leader, the first engine', async () => {
    const gang = gangEngine('main', { leader: { args: ['--page-size', '64'] }, worker: { args: ['--block-size=8'] } });
    const rsp = await compose({ engines: [gang, standaloneEngine('other', { args: ['--block-size=128'] })] });
    for (const key of ROUTING_KEYS) expect(desiredResources(rsp)).toHaveProperty(key);
    expect(config(rsp)).toContain('blockSizeTokens: 64\n');
  });

  it('the picker runs against the pool it fronts, in the remote namespace', async () => {
    const args = at(manifest(await compose(), 'epp'), 'spec', 'template', 'spec', 'containers', 0, 'args');
    expect(args).toEqual([
      `--pool-name=${R.pool}`,
      '--pool-namespace=default',
      '--pool-group=inference.networking.k8s.io',
      '--config-file=/config/epp-config.yaml',
      '--grpc-port=9002',
    ]);
  });

  it('a replica name at the 63-character maximum gets names that still fit, differ and agree', async () => {
    const name = `${'a'.repeat(57)}-1b2c3`; // an opaque name at the 63-character maximum
    const rsp = await run(requestFor({ xr: replica({ name }), cluster: cluster() }));
    const pool = at(manifest(rsp, 'inference-pool'), 'metadata', 'name') as string;
    const epp = at(manifest(rsp, 'epp'), 'metadata', 'name') as string;
    const route = at(manifest(rsp, 'model-route'), 'metadata', 'name') as string;
    for (const n of [pool, epp, route]) expect(n).toMatch(/^a{57}-[0-9a-f]{5}$/);
    expect(new Set([pool, epp, route]).size).toBe(3);
    expect(at(manifest(rsp, 'model-route'), 'spec', 'rules', 0, 'backendRefs', 0, 'name')).toBe(pool);
    expect(at(manifest(rsp, 'inference-pool'), 'spec', 'endpointPickerRef', 'name')).toBe(epp);
    expect(at(manifest(rsp, 'epp-service'), 'metadata', 'name')).toBe(epp);
  });

  it('…and under upstream’s names (hashed past 63 characters, where upstream composes names Kubernetes refuses) keeps them', async () => {
    const name = `${'a'.repeat(57)}-1b2c3`;
    const rsp = await upgraded({ name });
    const pool = at(manifest(rsp, 'inference-pool'), 'metadata', 'name') as string;
    expect(pool).toMatch(/^a{57}-[0-9a-f]{5}$/);
    expect(at(manifest(rsp, 'model-route'), 'metadata', 'name')).toBe(name);
    expect(at(manifest(rsp, 'model-route'), 'spec', 'rules', 0, 'backendRefs', 0, 'name')).toBe(pool);
  });

  // Found by the hardening fuzzer: "7b-chat-…" is a valid replica name, and "7b-chat-…-epp" a Service name Kubernetes refuses.
  it('a replica name starting with a digit gets every name with a letter first', async () => {
    const rsp = await run(requestFor({ xr: replica({ name: '7b-chat', engines: [gangEngine('main')] }), cluster: cluster() }));
    const service = at(manifest(rsp, 'epp-service'), 'metadata', 'name') as string;
    expect(service).toMatch(/^mr-7b-chat-epp-[0-9a-f]{5}$/);
    expect(at(manifest(rsp, 'inference-pool'), 'spec', 'endpointPickerRef', 'name')).toBe(service);
    // A LeaderWorkerSet's controller makes a headless Service of the set's own name.
    expect(at(manifest(rsp, 'model-serving-main'), 'metadata', 'name')).toMatch(/^mr-7b-chat-main-[0-9a-f]{5}$/);
    for (const key of ['epp', 'epp-config', 'epp-role', 'epp-rolebinding', 'epp-serviceaccount']) {
      expect(at(manifest(rsp, key), 'metadata', 'name'), key).toBe(service);
    }
    expect(at(manifest(rsp, 'inference-pool'), 'metadata', 'name')).toMatch(/^mr-7b-chat-pool-[0-9a-f]{5}$/);
    expect(at(manifest(rsp, 'model-route'), 'metadata', 'name')).toMatch(/^mr-7b-chat-[0-9a-f]{5}$/);
  });

  it('…and under upstream’s names keeps them: a letter first only for the Services', async () => {
    const rsp = await upgraded({ name: '7b-chat', engines: [gangEngine('main')] });
    const service = at(manifest(rsp, 'epp-service'), 'metadata', 'name') as string;
    expect(service).toMatch(/^mr-7b-chat-epp-[0-9a-f]{5}$/);
    expect(at(manifest(rsp, 'inference-pool'), 'spec', 'endpointPickerRef', 'name')).toBe(service);
    expect(at(manifest(rsp, 'model-serving-main'), 'metadata', 'name')).toMatch(/^mr-7b-chat-main-[0-9a-f]{5}-[0-9a-f]{5}$/);
    for (const key of ['epp', 'epp-config', 'epp-role', 'epp-rolebinding', 'epp-serviceaccount']) {
      expect(at(manifest(rsp, key), 'metadata', 'name'), key).toBe('7b-chat-epp');
    }
    expect(at(manifest(rsp, 'inference-pool'), 'metadata', 'name')).toBe('7b-chat-pool');
    expect(at(manifest(rsp, 'model-route'), 'metadata', 'name')).toBe('7b-chat');
  });

  it('a Standalone engine’s Deployment under upstream’s name keeps it when the replica’s starts with a digit', async () => {
    const rsp = await upgraded({ name: '7b-chat' });
    expect(at(manifest(rsp, 'model-serving-main'), 'metadata', 'name')).toMatch(/^7b-chat-main-[0-9a-f]{5}$/);
  });

  it('upstream’s plain routing names are kept up to the last character', async () => {
    const name = 'b'.repeat(58); // `-pool` makes 63
    const rsp = await upgraded({ name });
    expect(at(manifest(rsp, 'inference-pool'), 'metadata', 'name')).toBe(`${name}-pool`);
    expect(at(manifest(rsp, 'epp'), 'metadata', 'name')).toBe(`${name}-epp`);
  });
});

describe('kv block size', () => {
  it.each<[string[], number]>([
    [[], 16],
    [['--model=/mnt/models'], 16],
    [['--block-size', '32'], 32],
    [['--model=/m', '--block-size=8'], 8],
    [['--page-size=64'], 64],
    [['--block-size', 'auto'], 16],
    [['--block-size'], 16],
    [['--page-size=64', '--block-size=32'], 64],
    [['--block-size=1_024'], 1024],
    [['--block-size= 32 '], 32],
  ])('%j gives %i', (args, want) => {
    expect(kvBlockSize(args)).toBe(want);
  });

  it('the rendered config uses the block size', () => {
    expect(unifiedEppConfig(32)).toContain('blockSizeTokens: 32');
    expect(flagValue(['--port', '9000'], '--port')).toBe('9000');
    expect(flagValue(['--portal=1'], '--port')).toBeUndefined();
  });
});
