// The fleet benchmark's rig at N = 3 on the e2e's own plane and clocks, so
// `make bench-fleet` (bench/fleet/) can't rot between its runs: three
// simulated clusters (InferenceClusters and ClusterProviderConfigs of their
// own, one on each workload API server), one HuggingFace ModelCache on them,
// a short at-rest window, the delete. On this plane the nodes do the work the
// benchmark's batched stand-in does at N = 1,000: each cluster's provisioner
// binds its claim, its Job's pod downloads from the plane's hub, its Job
// controller completes it; the rig only watches (bench/fleet/standin.ts
// JobWatch). The figures are printed, not judged: these clocks are not
// production's.

import { afterAll, describe, expect, it } from 'vitest';
import { openPlane, runFleet, type FleetResult } from '../../bench/fleet/fleet.js';
import type { Recorded } from '../support/fake-hub.js';
import { clusterClients, hub } from './hub/client.js';
import { ENGINE_TEST_TIMEOUT, ENGINE_WAIT } from './hub/engine.js';
import { HUB_FLEET_REPO } from './hub/repo.js';
import { STATE_DIR, WORKLOAD_CLUSTERS, kubectl, nodesPlane } from './plane.js';

const NAMESPACE = 'e2e-fleet';

describe.skipIf(!nodesPlane('fleet.e2e.ts'))('the fleet benchmark at N = 3', () => {
  const plane = openPlane(STATE_DIR);
  afterAll(() => {
    plane.close();
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  });

  it('converges, rests, and leaves nothing behind, with every figure measured', { timeout: ENGINE_TEST_TIMEOUT }, async () => {
    const lines: string[] = [];
    const result: FleetResult = await runFleet(plane, {
      n: 3,
      namespace: NAMESPACE,
      cache: 'fleet',
      restSeconds: 20,
      settleSeconds: 5,
      convergeTimeoutSeconds: ENGINE_WAIT.timeoutMs / 1000,
      goneTimeoutSeconds: 240,
      pollMs: 2000,
      jobs: 'nodes',
      repo: HUB_FLEET_REPO,
      log: (line) => lines.push(line),
    });
    console.log(JSON.stringify({ ...result, log: lines.slice(-5) }, null, 2));

    expect(result.timedOut).toBeUndefined();
    expect(result.ready).toBe(true);
    expect(result.summary['ready']).toBe('3/3');
    expect(result.shards).toBe(1);
    for (const phase of [
      result.applyToHydrations,
      result.applyToObjects,
      result.applyToLastJob,
      result.lastJobToReady,
      result.applyToReady,
    ])
      expect(phase).toBeGreaterThanOrEqual(0);
    expect(result.applyToHydrations!).toBeLessThanOrEqual(result.applyToObjects!);
    expect(result.applyToLastJob!).toBeLessThanOrEqual(result.applyToReady!);
    expect(result.jobs).toMatchObject({ by: 'nodes', claimsBound: 3, jobsCompleted: 3, errors: 0 });
    // The bytes moved: each workload cluster's pod fetched the weights from the hub (its history, which the resets
    // of the stories in the other lane leave; the repository is the rig's alone).
    const weights = ((await hub('history')) as Recorded[]).filter(
      (r) => r.method === 'GET' && r.url.startsWith(`/${HUB_FLEET_REPO}/resolve/`) && r.url.endsWith('/model.safetensors'),
    );
    for (const cluster of WORKLOAD_CLUSTERS) {
      const from = clusterClients(cluster);
      expect(weights.filter((r) => from.some((prefix) => r.from?.startsWith(prefix))).length, cluster).toBeGreaterThanOrEqual(1);
    }

    // What it reads off the plane is there: CPU of each component, the writes, the functions' logged sizes.
    const rest = result.rest!;
    expect(rest.stillReady).toBe(true);
    for (const component of [
      'apiserver (control plane)',
      'etcd',
      'crossplane',
      'provider-kubernetes',
      'compose-model-cache',
      'compose-model-cache-hydration',
    ])
      expect(rest.cpuSecondsPerMinute[component], component).toBeGreaterThanOrEqual(0);
    expect(result.converge.cpuSecondsPerMinute['apiserver (control plane)']).toBeGreaterThan(0);
    expect(result.functions['compose-model-cache']!.calls).toBeGreaterThan(0);
    expect(result.functions['compose-model-cache-hydration']!.maxResponseBytes).toBeGreaterThan(0);
    for (const kind of ['ModelCache', 'ModelCacheShard', 'ModelCacheHydration', 'Object']) {
      expect(result.largest[kind]!.bytes, kind).toBeGreaterThan(0);
      expect(result.largest[kind]!.bytes, kind).toBeLessThan(256 * 1024);
    }

    // Everything gone: on real nodes that waits for a finished Job's pod, which holds its deleted claim (and so the
    // claim's Object) until the Job's TTL (180 s) removes both (docs/troubleshooting.md).
    expect(result.delete.left).toBeUndefined();
    expect(result.delete.seconds).toBeGreaterThan(0);
    expect(result.delete.reappeared).toBe(false);
  });
});
