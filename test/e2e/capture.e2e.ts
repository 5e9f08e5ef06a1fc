// The requests Crossplane really sends, captured on the local control plane
// (issue 17), and the benchmark's realistic requests held against them.
//
// A tap (tap.ts) sits between Crossplane and our three servers while a
// HuggingFace model is staged on three clusters and served on one. Once all
// is Ready, the last request each function received is the steady state the
// benchmark's `-realistic` scenarios model (bench/crossplane.ts builds them
// from the lean ones). Each is written, as JSON, to
// .test-results/captured/<function>.json; with UPDATE_CAPTURE=1 also to
// bench/captured/, where `make test` holds the builder to it
// (test/bench/calibration.test.ts). Here the live capture is held to the
// same rule, so a Crossplane or provider-kubernetes that starts sending more
// is found by `make e2e` first.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIND, REMOTE_NAMESPACE, cacheNames, decodeRequest, getIn, hydrationName, type JsonObject } from '#lib';
import { REPO_ROOT } from '../support/server.js';
import { CAPTURED_FUNCTIONS, calibrate, capturedJson, type CapturedFunction } from '../../bench/calibration.js';
import {
  E2E_HF_TOKEN,
  WORKLOAD_CLUSTERS,
  apply,
  engineDeployments,
  eventually,
  getObject,
  hfTokenSecret,
  huggingFaceCache,
  inferenceCluster,
  kubectl,
  kubelet,
  list,
  names,
  reasonOf,
  setInferenceClusterStatus,
  standaloneReplica,
  standInPlane,
} from './plane.js';
import { tapFunctions, type Tap } from './tap.js';

const NAMESPACE = 'e2e-capture';
const CACHE = 'qwen';
const REPLICA = 'qwen-chat';

const cacheOf = (): JsonObject | undefined => getObject('control-plane', 'modelcache', CACHE, NAMESPACE);
const replicaOf = (): JsonObject | undefined => getObject('control-plane', 'modelreplica', REPLICA, NAMESPACE);
const hydrationOf = (cluster: string): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, cluster), NAMESPACE);

/**
 * The request observes its XR at rest: Ready for a cache and a hydration;
 * serving for a replica (whose routing objects never turn Ready here: the
 * workload clusters run no gateway).
 */
function observesSteady(fn: CapturedFunction, request: JsonObject): boolean {
  const conditions = getIn(request, 'observed', 'composite', 'resource', 'status', 'conditions');
  const has = (type: string, field: string, value: string): boolean =>
    Array.isArray(conditions) && conditions.some((c) => getIn(c, 'type') === type && getIn(c, field) === value);
  return fn === 'compose-model-replica' ? has('ModelReady', 'reason', 'Serving') : has('Ready', 'status', 'True');
}

/** Write a capture to .test-results/captured/ (and, with UPDATE_CAPTURE=1, to bench/captured/). */
function keep(fn: CapturedFunction, json: JsonObject): void {
  const text = `${JSON.stringify(json, null, 2)}\n`;
  const out = join(REPO_ROOT, '.test-results', 'captured');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${fn}.json`), text);
  if (process.env['UPDATE_CAPTURE']) writeFileSync(join(REPO_ROOT, 'bench', 'captured', `${fn}.json`), text);
}

describe.skipIf(!standInPlane('capture.e2e.ts'))('requests as Crossplane sends them, captured on a real control plane', () => {
  let tap: Tap | undefined;
  const captured = new Map<CapturedFunction, JsonObject>();

  beforeAll(async () => {
    tap = await tapFunctions(CAPTURED_FUNCTIONS.map((fn) => `modelplane-${fn}`));
  });

  afterAll(async () => {
    await tap?.close();
    kubectl('control-plane', ['delete', 'modelreplicas,modelcaches', '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually(
      'every XR gone',
      () => ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, NAMESPACE).length === 0),
      { timeoutMs: 180_000 },
    );
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', ...WORKLOAD_CLUSTERS, '--ignore-not-found']);
    const pvc = cacheNames(NAMESPACE, CACHE).pvc;
    for (const cluster of WORKLOAD_CLUSTERS) kubectl(cluster, ['delete', 'pvc', pvc, '-n', REMOTE_NAMESPACE, '--ignore-not-found']);
  });

  it('stages a model on three clusters and serves it on one, every call passing through the tap', async () => {
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    for (const cluster of WORKLOAD_CLUSTERS) {
      apply('control-plane', inferenceCluster(cluster, { 'modelplane.ai/tier': 'a100' }));
      setInferenceClusterStatus(cluster, { providerConfigRef: { name: cluster }, cache: { storageClassName: 'modelplane-rwx' } });
    }
    apply('control-plane', hfTokenSecret(NAMESPACE));
    apply('control-plane', huggingFaceCache(NAMESPACE, CACHE, { 'modelplane.ai/tier': 'a100' }));
    apply('control-plane', standaloneReplica(NAMESPACE, REPLICA, 'cluster-a', CACHE));

    const job = cacheNames(NAMESPACE, CACHE).job;
    for (const cluster of WORKLOAD_CLUSTERS) {
      await eventually(`the claim on ${cluster}`, () => list(cluster, 'pvc', REMOTE_NAMESPACE).length > 0);
      kubelet(cluster, 'bind-claims');
    }
    for (const cluster of WORKLOAD_CLUSTERS) {
      await eventually(`${cluster} Hydrating`, () => reasonOf(hydrationOf(cluster), 'ArtifactReady') === 'Hydrating');
      kubelet(cluster, 'complete-job', job);
    }
    await eventually('the ModelCache Ready on three clusters', () => getIn(cacheOf(), 'status', 'summary', 'ready') === '3/3');
    const [deployment] = await eventually('the engine on cluster-a', () => {
      const found = engineDeployments('cluster-a', REPLICA);
      return found.length > 0 ? found : undefined;
    });
    kubelet('cluster-a', 'available', names([deployment!])[0]!);
    await eventually('the replica serving', () => reasonOf(replicaOf(), 'ModelReady') === 'Serving');

    // Steady: each function has received a request that observes its XR Ready (what the benchmark times).
    for (const fn of CAPTURED_FUNCTIONS) {
      const request = await eventually(
        `a steady request to ${fn}`,
        () => {
          const requests = tap!.tapped.get(`modelplane-${fn}`)?.requests ?? [];
          for (let i = requests.length - 1; i >= 0; i--) {
            const json = capturedJson(decodeRequest(requests[i]!));
            const name = getIn(json, 'observed', 'composite', 'resource', 'metadata', 'name');
            // The hydration's capture is cluster-a's, the one the replica serves on.
            if (fn === 'compose-model-cache-hydration' && name !== hydrationName(NAMESPACE, CACHE, 'cluster-a')) continue;
            // compose-model-cache serves the ModelCache and its shard alike; its capture is the ModelCache's (the
            // benchmark's steady-realistic), whichever of the two reconciled last.
            if (fn === 'compose-model-cache' && getIn(json, 'observed', 'composite', 'resource', 'kind') !== KIND.ModelCache) continue;
            if (observesSteady(fn, json)) return json;
          }
          return undefined;
        },
        { timeoutMs: 180_000 },
      );
      captured.set(fn, request);
      keep(fn, request);
    }

    for (const fn of CAPTURED_FUNCTIONS) expect(tap!.tapped.get(`modelplane-${fn}`)!.requests.length).toBeGreaterThan(3);
  });

  it("has every resource carry what the API server and Crossplane add: the benchmark's realistic requests have it all too", () => {
    expect([...captured.keys()].sort()).toEqual([...CAPTURED_FUNCTIONS].sort());
    for (const [fn, json] of captured) {
      // The token never leaves this test: the capture keeps no Secret's data.
      expect(JSON.stringify(json)).not.toContain(E2E_HF_TOKEN);
      expect(JSON.stringify(json)).not.toContain(Buffer.from(E2E_HF_TOKEN).toString('base64'));
      const report = calibrate(fn, json);
      expect(report.missing, `${fn}: what Crossplane sends and the benchmark's request lacks`).toEqual([]);
      expect(
        report.sizes.filter((s) => s.ratio < 0.5 || s.ratio > 2),
        `${fn}: kinds whose built size is off by over 2×`,
      ).toEqual([]);
    }
  });
});
