// The fleet benchmark's rig at N = 3 on the e2e's own plane and clocks, so
// `make bench-fleet` (bench/fleet/) can't rot between its runs: three
// simulated clusters (InferenceClusters and ClusterProviderConfigs of their
// own, one on each workload API server), one HuggingFace ModelCache on them,
// the batched stand-in (bench/fleet/standin.ts) binding claims and
// completing Jobs, a short at-rest window, the delete. The figures are
// printed, not judged: these clocks are not production's.

import { afterAll, describe, expect, it } from 'vitest';
import { openPlane, runFleet, type FleetResult } from '../../bench/fleet/fleet.js';
import { STATE_DIR, kubectl, standInPlane } from './plane.js';

const NAMESPACE = 'e2e-fleet';

describe.skipIf(!standInPlane('fleet.e2e.ts'))('the fleet benchmark at N = 3', () => {
  const plane = openPlane(STATE_DIR);
  afterAll(() => {
    plane.close();
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  });

  it('converges, rests, and leaves nothing behind, with every figure measured', async () => {
    const lines: string[] = [];
    const result: FleetResult = await runFleet(plane, {
      n: 3,
      namespace: NAMESPACE,
      cache: 'fleet',
      restSeconds: 20,
      settleSeconds: 5,
      convergeTimeoutSeconds: 150,
      goneTimeoutSeconds: 90,
      pollMs: 2000,
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
    expect(result.standIn).toMatchObject({ claimsBound: 3, jobsCompleted: 3, errors: 0 });

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

    expect(result.delete.left).toBeUndefined();
    expect(result.delete.seconds).toBeGreaterThan(0);
    expect(result.delete.reappeared).toBe(false);
  }, 330_000);
});
