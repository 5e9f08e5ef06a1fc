// The roll-up of HuggingFace progress: per cluster (copied from each child,
// as the contract has it) and overall, and the commits the clusters staged.

import { describe, expect, it } from 'vitest';
import { cacheStateFields, readCacheState, type CacheProgress, type ClusterCacheState, type JsonObject } from '#lib';
import { desiredResources, serveForFile } from '#testing';
import { artifactReady } from '../src/conditions.js';
import { statusEntry, summary, type ClusterEntry } from '../src/rollup.js';
import { cacheXr, cluster } from './fixtures.js';
import { reconcileFleet } from './fleet.js';

const served = serveForFile('compose-model-cache');
const GIB = 1024 ** 3;
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function progress(done: number, total: number, summaryText: string): CacheProgress {
  return {
    percent: Math.floor((done * 100) / total),
    bytesDone: done,
    bytesTotal: total,
    filesDone: 1,
    filesTotal: 2,
    summary: summaryText,
  };
}

function entry(name: string, state: ClusterCacheState): ClusterEntry {
  return { name, state };
}

const footprint = (names: string[]) => ({ stamped: names, unprovisioned: [], badNames: [] });

describe('per cluster', () => {
  it('copies progress, verified, the commit and the claim size from the child, unchanged', () => {
    const child = { phase: 'Hydrating', progress: progress(37 * GIB, 100 * GIB, '37%'), commit: A, verified: false, sizeGiB: 112 };
    const entryFields = statusEntry(entry('cluster-a', readCacheState(child)));
    expect(entryFields).toEqual({ name: 'cluster-a', ...child });
  });

  it.each([
    ['a percent over 100', { ...progress(1, 2, '50%'), percent: 101 }],
    ['more bytes done than in total', progress(3, 2, '150%')],
    ['a summary that is not a string', { ...progress(1, 2, '50%'), summary: 5 }],
    ['a negative count', { ...progress(1, 2, '50%'), filesDone: -1 }],
  ])('drops progress with %s (a status someone edited is not shown as progress)', (_what, value) => {
    expect(cacheStateFields(readCacheState({ phase: 'Hydrating', progress: value }))).toEqual({ phase: 'Hydrating' });
  });

  it('drops a commit that is not 40 hex digits', () => {
    expect(readCacheState({ phase: 'Ready', commit: 'main' }).commit).toBeUndefined();
  });
});

describe('overall', () => {
  it('is the bytes over every reporting cluster, as a percent', () => {
    const entries = [
      entry('cluster-a', { phase: 'Hydrating', progress: progress(37 * GIB, 100 * GIB, '37%'), commit: A }),
      entry('cluster-b', { phase: 'Hydrating', progress: progress(37 * GIB, 100 * GIB, '37%'), commit: A }),
    ];
    expect(summary(entries)).toEqual({ ready: '0/2', progress: '37%', bytesDone: 74 * GIB, bytesTotal: 200 * GIB, commit: A });
  });

  it('weighs clusters by their bytes, and says verified only when every cluster is', () => {
    const done = progress(100 * GIB, 100 * GIB, '100%, verified');
    const entries = [
      entry('cluster-a', { phase: 'Ready', progress: done, verified: true, commit: A }),
      entry('cluster-b', { phase: 'Hydrating', progress: progress(0, 100 * GIB, '0%'), commit: A }),
    ];
    expect(summary(entries)['progress']).toBe('50%');
    entries[1] = entry('cluster-b', { phase: 'Ready', progress: done, verified: true, commit: A });
    expect(summary(entries)['progress']).toBe('100%, verified');
  });

  it('has no progress when no cluster reports any (OCI, PersistentVolumeClaim, or nothing started)', () => {
    expect(summary([entry('cluster-a', { phase: 'Ready' }), entry('cluster-b', { phase: 'Pending' })])).toEqual({ ready: '1/2' });
  });
});

describe('clusters that resolved a moving revision to different commits', () => {
  it('are said so on ArtifactReady, and the summary names no single commit', () => {
    const entries = [entry('cluster-a', { phase: 'Ready', commit: A }), entry('cluster-b', { phase: 'Ready', commit: B })];
    expect(summary(entries)).toEqual({ ready: '2/2' });
    expect(artifactReady(footprint(['cluster-a', 'cluster-b']), entries)).toEqual({
      type: 'ArtifactReady',
      status: true,
      reason: 'Staged',
      message: `staged on all 2 clusters; the revision resolved to 2 different commits: ${A.slice(0, 12)} on cluster-a; ${B.slice(0, 12)} on cluster-b`,
    });
  });

  it('are not mentioned when they agree', () => {
    const entries = [entry('cluster-a', { phase: 'Ready', commit: A }), entry('cluster-b', { phase: 'Ready', commit: A })];
    expect(artifactReady(footprint(['cluster-a', 'cluster-b']), entries).message).toBe('staged on all 2 clusters');
  });
});

describe('the ModelCache re-verify request', () => {
  it('is copied onto every child as modelplane.ai/cache-reverify, beside a retry request', async () => {
    const body = structuredClone(cacheXr().resource);
    (body['metadata'] as JsonObject)['annotations'] = { 'modelplane.ai/reverify': 'weekly-48', 'modelplane.ai/retry': 'r2' };
    const fleet = await reconcileFleet(served.client, { xr: { resource: body }, clusters: [cluster('cluster-a'), cluster('cluster-b')] });
    // On the shard, under the cache's keys, and so on every child.
    expect((desiredResources(fleet.cache)['shard-0']!['metadata'] as JsonObject)['annotations']).toEqual({
      'modelplane.ai/cache-retry': 'r2',
      'modelplane.ai/cache-reverify': 'weekly-48',
    });
    const rsp = fleet.merged;
    for (const key of ['hydration-cluster-a', 'hydration-cluster-b']) {
      expect((desiredResources(rsp)[key]!['metadata'] as JsonObject)['annotations']).toEqual({
        'modelplane.ai/cache-retry': 'r2',
        'modelplane.ai/cache-reverify': 'weekly-48',
      });
    }
  });
});
