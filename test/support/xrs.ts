// One small, valid XR per function, for tests that exercise the servers rather
// than a function's behaviour.

import type { JsonObject } from '#lib';
import { composite } from './fixtures.js';
import type { TestResource } from './protocol.js';

export const NAMESPACE = 'ml-team';

export const HF_SOURCE: JsonObject = { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 };

export function modelCacheXr(spec: JsonObject = {}, status?: JsonObject): TestResource {
  return composite(
    'ModelCache',
    NAMESPACE,
    'qwen',
    { source: 'HuggingFace', huggingFace: HF_SOURCE, clusterSelector: { matchLabels: { 'modelplane.ai/tier': 'a100' } }, ...spec },
    status,
  );
}

export function hydrationXr(spec: JsonObject = {}, status?: JsonObject): TestResource {
  return composite(
    'ModelCacheHydration',
    NAMESPACE,
    'modelcache-ml-team-qwen-cluster-a-d4283',
    { clusterName: 'cluster-a', cacheName: 'qwen', source: 'HuggingFace', huggingFace: HF_SOURCE, ...spec },
    status,
  );
}

export const ENGINE_MEMBER: JsonObject = {
  role: 'Standalone',
  nodePoolName: 'frontier',
  deviceRequests: [{ name: 'gpu', deviceClassName: 'gpu.nvidia.com', count: 1 }],
  template: { spec: { containers: [{ name: 'engine', image: 'vllm/vllm-openai:latest', args: ['--model=$(MODELPLANE_MODEL)'] }] } },
};

export function replicaXr(spec: JsonObject = {}, status?: JsonObject): TestResource {
  return composite(
    'ModelReplica',
    NAMESPACE,
    'test-replica',
    {
      clusterName: 'cluster-a',
      modelCacheRef: { name: 'qwen' },
      engines: [{ name: 'main', copies: 1, members: [ENGINE_MEMBER] }],
      ...spec,
    },
    status,
  );
}
