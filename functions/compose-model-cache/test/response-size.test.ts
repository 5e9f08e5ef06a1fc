// How many bytes each response takes per cluster, measured (issue 29, point
// 4; docs/limits.md quotes these figures): Crossplane takes at most 4 MiB
// from a function. A ModelCache's response grows with its fleet (one shard
// spec member per cluster); a shard's is bounded by its 100 children; a
// hydration's and a replica's are one cluster's. Sizes are protobuf bytes as
// the server sends them. MEASURE=1 prints the table.

import { describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BYTES, SHARD_CAPACITY, cacheNames, huggingFaceMount, toJson } from '#lib';
import { desiredResources, inProcessClient, responseBytes, type TestResource, type TestResponse } from '#testing';
import { compose } from '../src/fn.js';
import { CACHE, NAMESPACE, cluster, observedChild, type ChildReport } from './fixtures.js';
import { reconcileFleet } from './fleet.js';

const client = inProcessClient('compose-model-cache', compose);
const HF_MOUNT = toJson(huggingFaceMount({ claimName: cacheNames(NAMESPACE, CACHE).pvc, repo: 'Qwen/Qwen3-0.6B' }));
const size = (rsp: TestResponse): number => responseBytes.get(rsp) ?? Number.POSITIVE_INFINITY;
const MEASURE = process.env['MEASURE'] === '1';

/**
 * `count` cluster names `length` characters long. 63 is the longest a
 * cluster's name can be here: it is a label value on every child
 * (modelplane.ai/cluster), and Kubernetes bounds those at 63.
 */
function names(count: number, length: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const suffix = String(i).padStart(6, '0');
    return `${'c'.repeat(Math.max(1, length - suffix.length - 1))}-${suffix}`;
  });
}

/** A fleet at rest: every child Ready with its mount, its messages the longest a status entry keeps. */
function readyChildren(clusters: readonly string[]): Record<string, ChildReport> {
  return Object.fromEntries(clusters.map((name) => [name, { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' }]));
}

function hydratingChildren(clusters: readonly string[]): Record<string, ChildReport> {
  const message = `downloading ${'m'.repeat(600)}`;
  return Object.fromEntries(clusters.map((name) => [name, { phase: 'Hydrating', message, reason: 'Hydrating' }]));
}

interface Measured {
  what: string;
  clusters: number;
  bytes: number;
}

const table: Measured[] = [];
function record(what: string, clusters: number, bytes: number): number {
  table.push({ what, clusters, bytes });
  if (MEASURE) process.stdout.write(`${what}\t${clusters}\t${bytes}\n`);
  return bytes;
}

/** Bytes per cluster and the fixed part, from two fleet sizes. */
function line(small: Measured, large: Measured): { perCluster: number; fixed: number } {
  const perCluster = (large.bytes - small.bytes) / (large.clusters - small.clusters);
  return { perCluster, fixed: small.bytes - perCluster * small.clusters };
}

describe('a ModelCache: its response grows with its fleet, one shard member per cluster', () => {
  it.each([13, 63])(
    'with %i-character cluster names, first compose and at rest, N = 1,000 and 10,000',
    async (length) => {
      for (const state of ['first compose', 'at rest'] as const) {
        const rows: Measured[] = [];
        for (const count of [1000, 10_000]) {
          const clusters = names(count, length);
          const fleet = await reconcileFleet(client, {
            clusters: clusters.map((name) => cluster(name)),
            ...(state === 'at rest' ? { children: readyChildren(clusters) } : {}),
          });
          expect(Object.keys(desiredResources(fleet.cache))).toHaveLength(Math.ceil(count / SHARD_CAPACITY));
          expect(fleet.cache.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
          record(`ModelCache ${state}, names of ${length}`, count, size(fleet.cache));
          rows.push(table.at(-1)!);
        }
        const { perCluster, fixed } = line(rows[0]!, rows[1]!);
        const largest = Math.floor((MAX_RESPONSE_BYTES - fixed) / perCluster);
        if (MEASURE)
          process.stdout.write(`  ${perCluster.toFixed(1)} bytes per cluster, ${Math.round(fixed)} fixed: 4 MiB at ${largest} clusters\n`);
        // Each cluster is its name in one shard's spec and its share of one shard's fields: its name and about 20 bytes.
        expect(perCluster).toBeGreaterThan(length);
        expect(perCluster).toBeLessThan(length + 30);
        // The design point (10,000) fits with room; the response's bound comes after the request's (64 MiB, near 40,000 clusters).
        expect(largest).toBeGreaterThan(45_000);
      }
    },
    300_000,
  );

  it('mid-upgrade from the layout before shards (its flat children handed over 50 at a time): a child per cluster until handed over', async () => {
    const rows: Measured[] = [];
    for (const count of [500, 1000]) {
      const clusters = names(count, 63);
      const observed: Record<string, TestResource> = {};
      for (const name of clusters)
        observed[`hydration-${name}`] = observedChild(name, { phase: 'Ready', mount: HF_MOUNT, reason: 'Staged' });
      const fleet = await reconcileFleet(client, { clusters: clusters.map((name) => cluster(name)), observed });
      expect(fleet.cache.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
      record('ModelCache mid-upgrade, names of 63', count, size(fleet.cache));
      rows.push(table.at(-1)!);
    }
    // Every flat child stays desired on the cache until it is handed over: a hydration's spec per cluster, as the flat
    // layout itself composed (which stopped converging between 100 and 300 clusters, docs/design/fleet.md).
    const { perCluster, fixed } = line(rows[0]!, rows[1]!);
    const largest = Math.floor((MAX_RESPONSE_BYTES - fixed) / perCluster);
    if (MEASURE)
      process.stdout.write(
        `  ${perCluster.toFixed(1)} bytes per flat child, ${Math.round(fixed)} fixed: 4 MiB at ${largest} flat children\n`,
      );
    expect(largest).toBeGreaterThan(3000);
  }, 120_000);
});

describe('a ModelCacheShard: bounded by its 100 children, whatever the fleet', () => {
  it.each([
    ['at rest, every child Ready with its mount', readyChildren],
    ['every child Hydrating, its message at the 512-character bound', hydratingChildren],
  ] as const)(
    '%s, with the longest names',
    async (what, children) => {
      const clusters = names(SHARD_CAPACITY, 63);
      const fleet = await reconcileFleet(client, { clusters: clusters.map((name) => cluster(name)), children: children(clusters) });
      const shard = Object.values(fleet.shards)[0]!;
      expect(Object.keys(desiredResources(shard))).toHaveLength(SHARD_CAPACITY);
      const bytes = record(`ModelCacheShard, ${what}`, SHARD_CAPACITY, size(shard));
      expect(bytes).toBeLessThan(MAX_RESPONSE_BYTES / 8);
    },
    120_000,
  );
});
