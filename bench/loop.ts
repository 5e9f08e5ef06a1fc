// Calls per reconcile: how many RunFunction calls Crossplane's requirements
// loop makes on a function's first reconcile, until the requirements stop
// changing. A function that declares everything it needs in its first answer
// takes two (ask, then answer with them resolved). The loop and the selector
// matching are the render driver's, which follow Crossplane's.

import { spawn } from 'node:child_process';
import { Ready, type JsonObject, type ResourceSelector } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { selectRequired } from '../test/render/fetch.js';
import { connect, runWithRequirements, toSelector } from '../test/render/runner.js';
import { CACHE, NAMESPACE, clusters, inferenceCluster, modelCache } from './worlds.js';

/** Each function's first reconcile: its XR, and the objects its requirements can find. */
function firstReconciles(): Record<string, { xr: JsonObject; world: JsonObject[] }> {
  const token = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'hf-token', namespace: NAMESPACE },
    data: { HF_TOKEN: 'aGYtdG9rZW4=' },
  };
  const replica = {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelReplica',
    metadata: { name: 'qwen-chat-7d2e4', namespace: NAMESPACE },
    spec: {
      clusterName: 'cluster-0000',
      modelCacheRef: { name: CACHE },
      engines: [
        {
          name: 'main',
          members: [
            {
              role: 'Standalone',
              nodePoolName: 'a100',
              template: { spec: { containers: [{ name: 'engine', image: 'vllm/vllm-openai:v0.11.0' }] } },
            },
          ],
        },
      ],
    },
  };
  return {
    'compose-model-cache': { xr: modelCache(10, false), world: [...clusters(10), replica] },
    'compose-model-cache-hydration': {
      xr: {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCacheHydration',
        metadata: { name: 'modelcache-ml-team-qwen-cluster-0000-x', namespace: NAMESPACE },
        spec: {
          clusterName: 'cluster-0000',
          cacheName: CACHE,
          source: 'HuggingFace',
          huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 },
          authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: NAMESPACE },
        },
      },
      world: [inferenceCluster(0), token],
    },
    'compose-model-replica': { xr: replica, world: [inferenceCluster(0), modelCache(10, true)] },
  };
}

async function start(entry: string): Promise<{ address: string; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, '--insecure', '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /"msg":"listening".*?"port":(\d+)/.exec(buffered);
      if (match) {
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve({ address: `127.0.0.1:${match[1]}`, stop: () => child.kill('SIGTERM') });
      }
    });
    child.on('exit', (code) => {
      reject(new Error(`${entry} exited with ${code}`));
    });
  });
}

export async function callsPerReconcile(servers: Record<string, string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, { xr, world }] of Object.entries(firstReconciles())) {
    const entry = servers[name];
    if (!entry) continue;
    const server = await start(entry);
    const connection = connect(server.address, new Date(Date.now() + 30_000));
    try {
      const first = RunFunctionRequest.fromPartial({ meta: { tag: 'loop' }, observed: { composite: { resource: xr } }, desired: {} });
      const fetch = (selector: ResourceSelector) => ({
        items: selectRequired(world, toSelector(selector)).map((resource) => ({
          resource,
          connectionDetails: {},
          ready: Ready.READY_UNSPECIFIED,
        })),
      });
      const { calls } = await runWithRequirements((req) => connection.run(req), first, fetch);
      out[name] = calls;
    } finally {
      connection.close();
      server.stop();
    }
  }
  return out;
}
