// Which names a replica's objects go by on its workload cluster, and whether
// each is this replica's to write (docs/design/names.md).
//
// Everything new goes by this release's names (lib replicaNames), which carry
// the replica's namespace. What a replica already runs under upstream's
// names, which leave the namespace out, keeps them: an engine with its claim
// templates, and the routing with the serving label, each as one, since they
// name each other. Kept only while nothing says another replica's Object
// wrote the object too: then this replica leaves it to that one and composes
// its own under its new names. An object under a new name that another XR
// owns is never written: it is observed only, and the replica serves nothing.

import {
  composedManifest,
  getString,
  ownershipOf,
  remoteTitle,
  upstreamReplicaNames,
  type JsonObject,
  type Owner,
  type ReplicaNameSet,
} from '#lib';
import type { Observed } from './conditions.js';
import { GROVE_KIND } from './grove.js';
import { EPP_KEYS, POOL_KEY, ROUTE_KEY, claimKey, memberRole, workloadKey } from './names.js';
import type { Engine, Member, Replica, ReplicaNaming } from './spec.js';

/** An object of another owner this replica no longer writes: moved away from (upstream name), or left observe-only. */
export interface OwnedElsewhere {
  key: string;
  /** "Deployment qwen-chat-a-main-a3fe4". */
  title: string;
  owner: string;
}

export interface NamingDecision {
  naming: ReplicaNaming;
  /** Upstream-named objects another replica also wrote: this one composes its own instead (a Warning each). */
  movedAway: (OwnedElsewhere & { now: string })[];
  /** Objects under this release's names that another XR owns: observed only, nothing served. */
  conflicts: OwnedElsewhere[];
}

/** The replica as the owner its remote objects name. */
export function replicaOwner(replica: Pick<Replica, 'namespace' | 'name'>): Owner {
  return { kind: 'ModelReplica', namespace: replica.namespace, name: replica.name };
}

/** Each key of a group, with its remote name under a name set. */
type Group = { key: string; name: (set: ReplicaNameSet) => string }[];

function members(engine: Engine): Member[] {
  return engine.shape === 'Standalone' ? [engine.member] : [engine.leader, engine.worker];
}

/** The workload's name by the kind it was composed as (a gang is a LeaderWorkerSet or a PodCliqueSet by stack). */
function workloadName(engine: Engine, kind: string | undefined): (set: ReplicaNameSet) => string {
  if (engine.shape === 'Standalone') return (set) => set.deployment(engine.name);
  return kind === GROVE_KIND ? (set) => set.podCliqueSet(engine.name) : (set) => set.leaderWorkerSet(engine.name);
}

function engineGroup(engine: Engine, observed: Observed): Group {
  const kind = getString(composedManifest(observed.get(workloadKey(engine))), 'kind');
  return [
    { key: workloadKey(engine), name: workloadName(engine, kind) },
    ...members(engine).map((member) => ({
      key: claimKey(engine, member),
      name: (set: ReplicaNameSet) => set.claimTemplate(engine.name, memberRole(member)),
    })),
  ];
}

const ROUTING_GROUP: Group = [
  { key: POOL_KEY, name: (set) => set.pool },
  { key: ROUTE_KEY, name: (set) => set.route },
  { key: EPP_KEYS.serviceAccount, name: (set) => set.epp },
  { key: EPP_KEYS.role, name: (set) => set.epp },
  { key: EPP_KEYS.roleBinding, name: (set) => set.epp },
  { key: EPP_KEYS.config, name: (set) => set.epp },
  { key: EPP_KEYS.deployment, name: (set) => set.epp },
  { key: EPP_KEYS.service, name: (set) => set.eppService },
];

function observedName(object: JsonObject | undefined): string | undefined {
  return getString(composedManifest(object), 'metadata', 'name');
}

export function decideNaming(replica: Replica, observed: Observed): NamingDecision {
  const owner = replicaOwner(replica);
  const fresh = replica.naming.fresh;
  const upstream = upstreamReplicaNames(replica.name);
  const movedAway: NamingDecision['movedAway'] = [];
  const conflicts: OwnedElsewhere[] = [];

  const decide = (group: Group): ReplicaNameSet => {
    // Upstream's names, when an Object of the group already uses them and no other replica's Object wrote any.
    const onUpstream = group.filter(({ key, name }) => {
      const seen = observedName(observed.get(key));
      return seen !== undefined && seen === name(upstream) && seen !== name(fresh);
    });
    if (onUpstream.length > 0) {
      const shared = onUpstream.flatMap(({ key, name }) => {
        const ownership = ownershipOf(observed.get(key), owner, { sharedName: true });
        return ownership.ours ? [] : [{ key, title: remoteTitle(observed.get(key)), owner: ownership.owner, now: name(fresh) }];
      });
      if (shared.length === 0) return upstream;
      movedAway.push(...shared);
    }
    for (const { key, name } of group) {
      const object = observed.get(key);
      if (observedName(object) !== name(fresh)) continue;
      const ownership = ownershipOf(object, owner);
      if (!ownership.ours) conflicts.push({ key, title: remoteTitle(object), owner: ownership.owner });
    }
    return fresh;
  };

  const engines = new Map<string, ReplicaNameSet>();
  for (const engine of replica.spec.engines) {
    const set = decide(engineGroup(engine, observed));
    if (set !== fresh) engines.set(engine.name, set);
  }
  const routing = decide(ROUTING_GROUP);
  return { naming: { fresh, engines, routing }, movedAway, conflicts };
}
