// Each built server, started as Crossplane starts it and called over gRPC by an
// independent client: requirements, tag and TTL, Fatal on a broken XR (and the
// next call still answered), logs, exit codes, shutdown.

import { connect, type ClientHttp2Session } from 'node:http2';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECEIVE_WINDOW_BYTES, RUN_FUNCTION_METHOD } from '#lib';
import {
  FUNCTION_NAMES,
  functionClient,
  hydrationXr,
  items,
  inferenceCluster,
  modelCacheXr,
  parseLine,
  replicaXr,
  request,
  startServer,
  type FunctionClient,
  type FunctionName,
  type RunningServer,
  type TestRequest,
  type TestResource,
  type TestSelector,
} from '#testing';
import { V8_FLAGS_AT_START } from '../../bench/runtime.js';

interface Case {
  xr: TestResource;
  /** The requirements the function's spec names for this XR. */
  requirements: Record<string, TestSelector>;
  resolved: TestRequest['requiredResources'];
}

const CASES: Record<FunctionName, Case> = {
  'compose-model-cache': {
    xr: modelCacheXr(),
    requirements: {
      clusters: {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'InferenceCluster',
        matchLabels: { labels: { 'modelplane.ai/tier': 'a100' } },
      },
      replicas: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelReplica', matchLabels: { labels: {} }, namespace: 'ml-team' },
    },
    resolved: { clusters: items(), replicas: items() },
  },
  'compose-model-cache-hydration': {
    xr: hydrationXr({ authSecret: { name: 'hf-token', key: 'HF_TOKEN', namespace: 'ml-team' } }),
    requirements: {
      cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'cluster-a' },
      'auth-secret': { apiVersion: 'v1', kind: 'Secret', matchName: 'hf-token', namespace: 'ml-team' },
    },
    resolved: { cluster: items(inferenceCluster('cluster-a')), 'auth-secret': items() },
  },
  'compose-model-replica': {
    xr: replicaXr(),
    requirements: {
      cluster: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'InferenceCluster', matchName: 'cluster-a' },
      cache: { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache', matchName: 'qwen', namespace: 'ml-team' },
      hydration: {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCacheHydration',
        matchName: 'modelcache-ml-team-qwen-cluster-a-d4283',
        namespace: 'ml-team',
      },
    },
    resolved: { cluster: items(inferenceCluster('cluster-a')), cache: items(), hydration: items() },
  },
};

describe.each(FUNCTION_NAMES)('%s over gRPC', (name) => {
  let server: RunningServer;
  let client: FunctionClient;
  let startedMs: number;
  const fixture = CASES[name];

  beforeAll(async () => {
    const t0 = performance.now();
    server = await startServer(name);
    startedMs = performance.now() - t0;
    client = functionClient(server.address);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it('listens within 2 s of starting', () => {
    expect(startedMs).toBeLessThan(2000);
  });

  it('sets on itself the V8 flags its floor is benchmarked with, names them when it listens, and V8 takes them', () => {
    const listening = server.lines.map(parseLine).find((entry) => entry?.['msg'] === 'listening');
    expect(listening?.['v8Flags']).toEqual(V8_FLAGS_AT_START[name]);
    // V8 reports a flag it does not know on the process's output, and goes on without it.
    expect(server.stderr()).not.toMatch(/unrecognized flag/);
    expect(server.lines.join('\n')).not.toMatch(/unrecognized flag/);
  });

  it('answers with the requirements only, echoing the tag and setting the TTL', async () => {
    const rsp = await client.run({ meta: { tag: 'first-call' }, observed: { composite: fixture.xr } });
    expect(rsp.meta).toEqual({ tag: 'first-call', ttl: { seconds: 60, nanos: 0 } });
    expect(rsp.requirements?.resources).toEqual(fixture.requirements);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    expect(rsp.desired?.resources ?? {}).toEqual({});
    expect(rsp.desired?.composite).toBeUndefined();
  });

  it('asks for the same requirements once they are resolved, so the loop ends on the second call', async () => {
    const rsp = await client.run(request({ observed: { composite: fixture.xr }, requiredResources: fixture.resolved }));
    expect(rsp.requirements?.resources).toEqual(fixture.requirements);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
  });

  it.each<[string, TestRequest, string]>([
    ['no XR at all', { meta: { tag: 'bad-1' } }, 'observed composite resource must be an object'],
    [
      'an XR without metadata.name',
      { meta: { tag: 'bad-2' }, observed: { composite: { resource: { apiVersion: 'v1', kind: 'X', metadata: { namespace: 'n' } } } } },
      'metadata.name is missing',
    ],
    [
      'an XR without metadata',
      { meta: { tag: 'bad-3' }, observed: { composite: { resource: { spec: {} } } } },
      'metadata must be an object',
    ],
  ])('refuses %s with a Fatal result naming what is missing, and answers the next call', async (_case, bad, message) => {
    const rsp = await client.run(bad);
    expect(rsp.meta.tag).toBe(bad.meta?.tag);
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]).toMatchObject({ severity: 'SEVERITY_FATAL' });
    expect(rsp.results[0]!.message).toContain(message);
    const next = await client.run({ meta: { tag: 'after' }, observed: { composite: fixture.xr } });
    expect(next.meta.tag).toBe('after');
    expect(next.requirements?.resources).toEqual(fixture.requirements);
  });

  it('logs one JSON line per request with its tag and duration', async () => {
    await client.run({ meta: { tag: 'logged-call' }, observed: { composite: fixture.xr } });
    // The reply and the log line travel different pipes; give the line a moment to arrive.
    const logged = () => server.lines.map(parseLine).filter((e) => e?.['msg'] === 'RunFunction' && e['tag'] === 'logged-call');
    await expect.poll(() => logged().length, { timeout: 2000 }).toBeGreaterThan(0);
    const entries = logged();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'info',
      function: name,
      xr: `ml-team/${(fixture.xr.resource['metadata'] as { name: string }).name}`,
    });
    expect(typeof entries[0]!['durationMs']).toBe('number');
  });
});

describe('flow control', () => {
  // HTTP/2's default is 64 KiB (what gRPC-js's server announced); ours announces RECEIVE_WINDOW_BYTES, per call
  // and per connection, so a big request crosses in a few rounds (see server.ts).
  it.each(FUNCTION_NAMES)('%s lets a client send a whole window before it acknowledges', async (name) => {
    const server = await startServer(name);
    let session: ClientHttp2Session | undefined;
    try {
      session = connect(`http://${server.address}`);
      const opened = session;
      await new Promise<void>((resolve, reject) => {
        opened.once('remoteSettings', () => {
          resolve();
        });
        opened.once('error', reject);
      });
      expect(RECEIVE_WINDOW_BYTES).toBeGreaterThan(65_535);
      expect(opened.remoteSettings.initialWindowSize).toBe(RECEIVE_WINDOW_BYTES);
      // The connection's own window arrives as a WINDOW_UPDATE after the settings.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(opened.state.remoteWindowSize).toBe(RECEIVE_WINDOW_BYTES);
    } finally {
      session?.destroy();
      await server.stop();
    }
  });
});

describe('process lifecycle', () => {
  it('exits 0 on SIGTERM and on SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await startServer('compose-model-cache');
      const ended = await server.stop(signal);
      expect(ended).toEqual({ code: 0, signal: null });
      expect(server.lines.map(parseLine).some((e) => e?.['msg'] === 'stopped')).toBe(true);
    }
  });

  it('exits non-zero with a clear message when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const attempt = startServer('compose-model-replica', { args: ['--address', `127.0.0.1:${port}`] });
      await expect(attempt).rejects.toThrow(/exited \(code 1[,)][\s\S]*address already in use/);
    } finally {
      blocker.close();
    }
  });

  it('exits non-zero naming the missing certificate when TLS is on and no certificates are mounted', async () => {
    const attempt = startServer('compose-model-cache', { tls: true, env: { TLS_SERVER_CERTS_DIR: '/nonexistent/certs' } });
    await expect(attempt).rejects.toThrow(/exited \(code 1[\s\S]*cannot read \/nonexistent\/certs\/ca\.crt/);
  });
});

describe('undecodable requests', () => {
  it('answers bytes that are not a RunFunctionRequest with a gRPC error, and keeps serving', async () => {
    const { Client, credentials, status } = await import('@grpc/grpc-js');
    const server = await startServer('compose-model-cache');
    const raw = new Client(server.address, credentials.createInsecure());
    const identity = (value: Buffer): Buffer => value;
    const send = (bytes: Buffer) =>
      new Promise<string>((resolve) => {
        raw.makeUnaryRequest(RUN_FUNCTION_METHOD, identity, identity, bytes, (error) => {
          resolve(error ? `error ${error.code}` : 'ok');
        });
      });
    try {
      // A length prefix far past the end of the message.
      expect(await send(Buffer.from([0x12, 0xff, 0xff, 0x03, 0x00]))).toBe(`error ${status.INVALID_ARGUMENT}`);
      const client = functionClient(server.address);
      const rsp = await client.run({ meta: { tag: 'still-here' }, observed: { composite: modelCacheXr() } });
      expect(rsp.meta.tag).toBe('still-here');
      client.close();
    } finally {
      raw.close();
      await server.stop();
    }
  });
});
