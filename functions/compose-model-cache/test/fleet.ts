// Both levels of the fan-out at once, as Crossplane would leave them
// (docs/design/fleet.md): a ModelCache reconciled while its shards exist as
// they were last reconciled, each shard holding the children the test says
// exist. The children's reports are what the test describes; the shards'
// specs and statuses are what the two functions make of them, never written
// by hand, so a test of the cache's roll-up is also a test of the shard's.

import { KIND, MODELPLANE_API_VERSION, SHARD_CAPACITY, readComposite, type JsonObject } from '#lib';
import {
  compositeStatus,
  desiredResources,
  request,
  type FunctionClient as TestClient,
  type TestRequest,
  type TestResource,
  type TestResponse,
} from '#testing';
import { resolveFootprint } from '../src/footprint.js';
import { stampShard } from '../src/shards.js';
import { parseModelCache } from '../src/spec.js';
import { cacheXr, observedChild, resolved, type ChildReport } from './fixtures.js';

export interface World {
  xr?: TestResource;
  clusters?: JsonObject[];
  replicas?: JsonObject[];
  /** The children that exist under the shards, by cluster: a report (with the spec stamped) or the child itself. */
  children?: Record<string, ChildReport | TestResource>;
  /** What else the cache observes: the layout before shards, upstream's single-function Objects. */
  observed?: Record<string, TestResource>;
}

export interface Fleet {
  /** The cache's reconcile, observing its shards. */
  cache: TestResponse;
  /** Each shard's reconcile of that cache's desired shards, by key. */
  shards: Record<string, TestResponse>;
  /** The cache's response with its shards replaced by theirs children: what the fleet desires, as one level. */
  merged: TestResponse;
}

const uidOf = (key: string): string => `uid-${key}`;

function isResource(value: ChildReport | TestResource): value is TestResource {
  return 'resource' in value;
}

/** A shard as its cache composed it, as Crossplane observes it: a uid, and its own last status and Ready. */
function observedShard(key: string, desired: JsonObject, rsp: TestResponse): TestResource {
  const ready = rsp.desired?.composite?.ready === 'READY_TRUE';
  return {
    resource: {
      ...desired,
      metadata: { ...(desired['metadata'] as JsonObject), uid: uidOf(key) },
      status: {
        ...compositeStatus(rsp),
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' }],
      },
    },
  };
}

/** Which existing shard holds each cluster's child (existingShards), by shard key. */
type Holders = ReadonlyMap<string, string>;

/**
 * The children one shard observes: those it holds, and those of clusters it
 * lists that no other shard holds; under their desired keys, owned by it.
 */
function childrenOf(key: string, shard: JsonObject, world: World, holders: Holders): Record<string, TestResource> {
  const out: Record<string, TestResource> = {};
  const listed = ((shard['spec'] as JsonObject)['clusters'] as JsonObject[]).map((member) => member['name'] as string);
  const held = [...holders].filter(([, holder]) => holder === key).map(([cluster]) => cluster);
  for (const cluster of new Set([...held, ...listed.filter((name) => !holders.has(name))])) {
    const given = world.children?.[cluster];
    if (given === undefined) continue;
    const child = isResource(given) ? given : observedChild(cluster, given);
    const metadata = child.resource['metadata'] as JsonObject;
    out[`hydration-${cluster}`] = {
      resource: {
        ...child.resource,
        metadata: { ...metadata, ownerReferences: [{ kind: KIND.ModelCacheShard, uid: uidOf(key), controller: true }] },
      },
    };
  }
  return out;
}

async function reconcileShards(
  client: TestClient,
  cache: TestResponse,
  world: World,
  holders: Holders,
): Promise<Record<string, TestResponse>> {
  const out: Record<string, TestResponse> = {};
  for (const [key, desired] of Object.entries(desiredResources(cache))) {
    if (desired['kind'] !== KIND.ModelCacheShard) continue;
    const composite = { resource: { ...desired, metadata: { ...(desired['metadata'] as JsonObject), uid: uidOf(key) } } };
    out[key] = await client.run(request({ observed: { composite, resources: childrenOf(key, desired, world, holders) } }));
  }
  return out;
}

function cacheRequestOf(world: World, shards: Record<string, TestResource>): TestRequest {
  return request({
    observed: { composite: world.xr ?? cacheXr(), resources: { ...(world.observed ?? {}), ...shards } },
    requiredResources: resolved(world.clusters ?? [], world.replicas ?? []),
  });
}

/**
 * The shards that hold the world's children, as a cache would have composed
 * them while those clusters were its own: the children's clusters by name,
 * 100 to a shard, each shard reconciled with its children.
 */
async function existingShards(client: TestClient, world: World, holders: Map<string, string>): Promise<Record<string, TestResource>> {
  const children = Object.keys(world.children ?? {});
  if (children.length === 0) return {};
  const cache = parseModelCache(readComposite(cacheRequestOf(world, {}) as never));
  // What the last reconcile listed: every cluster with a child, and the footprint's.
  const footprint = resolveFootprint(cache, world.clusters ?? []).stamped;
  const clusters = [...new Set([...children, ...footprint])].sort();
  const out: Record<string, TestResource> = {};
  for (let index = 0; index * SHARD_CAPACITY < clusters.length; index += 1) {
    const members = clusters.slice(index * SHARD_CAPACITY, (index + 1) * SHARD_CAPACITY).map((name) => ({ name }));
    const key = `shard-${index}`;
    for (const member of members) holders.set(member.name, key);
    const desired = stampShard(cache, index, members, []);
    const composite = { resource: { ...desired, metadata: { ...(desired['metadata'] as JsonObject), uid: uidOf(key) } } };
    const rsp = await client.run(request({ observed: { composite, resources: childrenOf(key, desired, world, holders) } }));
    out[key] = observedShard(key, desired, rsp);
  }
  return out;
}

/**
 * Reconcile the cache of `world` once, with its shards as they stand: a
 * world with children has shards that hold them (existingShards); a world
 * without is the cache's first compose. Then each shard the cache desires is
 * reconciled with the children it holds.
 */
export async function reconcileFleet(client: TestClient, world: World): Promise<Fleet> {
  const holders = new Map<string, string>();
  const cache = await client.run(cacheRequestOf(world, await existingShards(client, world, holders)));
  const shardResponses = await reconcileShards(client, cache, world, holders);
  return { cache, shards: shardResponses, merged: merge(cache, shardResponses) };
}

function merge(cache: TestResponse, shards: Record<string, TestResponse>): TestResponse {
  const resources: NonNullable<TestResponse['desired']>['resources'] = {};
  for (const [key, value] of Object.entries(cache.desired?.resources ?? {})) {
    if (!(key in shards)) resources[key] = value;
  }
  for (const rsp of Object.values(shards)) Object.assign(resources, rsp.desired?.resources ?? {});
  return { ...cache, desired: { ...cache.desired, resources } };
}

/** A shard XR as its cache stamps it: `members` by name (or full entries), the default HuggingFace source. */
export function shardXr(members: (string | JsonObject)[], extra: JsonObject = {}, annotations?: Record<string, string>): TestResource {
  const metadata: JsonObject = { name: 'modelcache-ml-team-qwen-shard-0-bf0ec', namespace: 'ml-team', uid: 'uid-shard-0' };
  if (annotations) metadata['annotations'] = annotations;
  return {
    resource: {
      apiVersion: MODELPLANE_API_VERSION,
      kind: KIND.ModelCacheShard,
      metadata,
      spec: {
        cacheName: 'qwen',
        source: 'HuggingFace',
        huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 },
        clusters: members.map((member) => (typeof member === 'string' ? { name: member } : member)),
        ...extra,
      },
    },
  };
}

/** The parts of a one-level cache request (fixtures' cacheRequest), as a world: observed `hydration-*` children live under shards. */
export interface RequestParts {
  xr?: TestResource;
  clusters?: JsonObject[];
  replicas?: JsonObject[];
  observed?: Record<string, TestResource>;
}

export function worldOf(parts: RequestParts, defaultClusters: JsonObject[]): World {
  const children: Record<string, TestResource> = {};
  const observed: Record<string, TestResource> = {};
  for (const [key, value] of Object.entries(parts.observed ?? {})) {
    if (key.startsWith('hydration-')) children[key.slice('hydration-'.length)] = value;
    else observed[key] = value;
  }
  return {
    ...(parts.xr ? { xr: parts.xr } : {}),
    clusters: parts.clusters ?? defaultClusters,
    replicas: parts.replicas ?? [],
    children,
    observed,
  };
}

/** The XR as Crossplane leaves it after applying a response: its status, the conditions, and Ready. */
export function written(xr: TestResource, rsp: TestResponse): TestResource {
  const resourcesReady = Object.values(rsp.desired?.resources ?? {}).every((r) => r.ready === 'READY_TRUE');
  const ready = rsp.desired?.composite?.ready === 'READY_TRUE' && resourcesReady;
  const conditions: JsonObject[] = rsp.conditions.map((c) => ({
    type: c.type,
    status: c.status === 'STATUS_CONDITION_TRUE' ? 'True' : 'False',
    reason: c.reason,
    ...(c.message ? { message: c.message } : {}),
  }));
  conditions.push({ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Available' : 'Creating' });
  return { resource: { ...xr.resource, status: { ...compositeStatus(rsp), conditions } } };
}

export interface Step {
  clusters: JsonObject[];
  replicas?: JsonObject[];
  /** What each existing child reports now. */
  reports?: Record<string, ChildReport>;
}

/**
 * A lifecycle over both levels: each step reconciles the fleet (reconcileFleet)
 * with the XR as the step before left it, and each reporting child carrying
 * the spec its shard stamped the step before.
 */
export async function lifecycle(client: TestClient, xr: TestResource, steps: Step[]): Promise<Fleet[]> {
  const out: Fleet[] = [];
  let current = xr;
  let stamped: Record<string, JsonObject> = {};
  for (const step of steps) {
    const children: Record<string, TestResource> = {};
    for (const [cluster, report] of Object.entries(step.reports ?? {})) {
      const spec = stamped[`hydration-${cluster}`]?.['spec'] as JsonObject | undefined;
      children[cluster] = observedChild(cluster, report, ...(spec ? [spec] : []));
    }
    const fleet = await reconcileFleet(client, { xr: current, clusters: step.clusters, replicas: step.replicas ?? [], children });
    out.push(fleet);
    current = written(current, fleet.cache);
    stamped = desiredResources(fleet.merged);
  }
  return out;
}
