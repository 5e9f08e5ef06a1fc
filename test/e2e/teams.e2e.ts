// Two teams, one name, on the live plane (issue 29, point 5;
// docs/design/names.md). In two namespaces, a ModelCache `qwen` (one
// HuggingFace repo, a revision and a size of each team's own) stages on the
// same two workload clusters, and a ModelReplica `qwen-chat` of each serves
// from its own team's cache on the same cluster, all in the shared workload
// namespace `default`. Upstream's names left the namespace out and the two
// replicas fought over one Deployment; here every remote object must exist
// once per team, be that team's (owner annotation, labels, content), stay
// still over a minute, and outlive the other team's deletion untouched.
//
// On real nodes (docs/nodes.md), nothing stubbed: the provisioner binds the
// claims, each team's Job pod downloads its own revision from the plane's hub
// (which holds the weights back while the first step looks at the Jobs), and
// both teams' engine pods run on cluster-a's node with a DRA device each.

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LABEL_MODELCACHE,
  LABEL_MODELREPLICA,
  LABEL_NAMESPACE,
  OWNER_ANNOTATION_PREFIX,
  REMOTE_NAMESPACE,
  asArray,
  cacheNames,
  getIn,
  getObject as field,
  getString,
  hydrationName,
  isObject,
  ownerAnnotation,
  replicaNames,
  type JsonObject,
  type Owner,
} from '#lib';
import {
  apply,
  eventually,
  getObject,
  hfTokenSecret,
  huggingFaceCache,
  inferenceCluster,
  kubectl,
  kubectlOk,
  list,
  names,
  ownedByJob,
  reasonOf,
  setInferenceClusterStatus,
  standaloneReplica,
  type ApiServer,
  nodesPlane,
  DEFAULT_POOL,
} from './plane.js';
import { setFaults } from './hub/client.js';
import { ENGINE_TEST_TIMEOUT, ENGINE_WAIT, joinPool, leavePool } from './hub/engine.js';
import { HUB_RELEASE_TAG, HUB_WALKTHROUGH_REPO, hubReleaseRevision, hubRevision } from './hub/repo.js';

const REMOTE = REMOTE_NAMESPACE;
const CACHE = 'qwen';
const REPLICA = 'qwen-chat';
/** Each team's content differs, so an object that shows another team's is caught: the commit is what each Job staged. */
const TEAMS = {
  'e2e-teams-a': { revision: 'main', sizeGiB: 20, commit: hubRevision().commit },
  'e2e-teams-b': { revision: HUB_RELEASE_TAG, sizeGiB: 10, commit: hubReleaseRevision().commit },
} as const;
type Team = keyof typeof TEAMS;
const TEAM_NAMES = Object.keys(TEAMS) as Team[];
const [TEAM_A, TEAM_B] = TEAM_NAMES as [Team, Team];
const TIER = 'modelplane.ai/tier';
const SELECTOR = { [TIER]: 'e2e-teams' };
/** InferenceCluster -> the workload cluster of `make up` it stands for. The replicas serve on the first. */
const CLUSTERS = { 'teams-a': 'cluster-a', 'teams-b': 'cluster-b' } as const satisfies Record<string, ApiServer>;
const SERVING = 'teams-a';
type Workload = (typeof CLUSTERS)[keyof typeof CLUSTERS];
const WORKLOADS = Object.values(CLUSTERS);
/** What our Compositions put on a workload cluster (the walkthrough's inventory). */
const KINDS = [
  'jobs',
  'persistentvolumeclaims',
  'secrets',
  'configmaps',
  'deployments',
  'services',
  'serviceaccounts',
  'roles',
  'rolebindings',
  'resourceclaimtemplates',
  'inferencepools',
  'httproutes',
] as const;
type Kind = (typeof KINDS)[number];
const STEP_WAIT = { timeoutMs: 180_000 };

const cacheOwner = (team: Team): Owner => ({ kind: 'ModelCache', namespace: team, name: CACHE });
const replicaOwner = (team: Team): Owner => ({ kind: 'ModelReplica', namespace: team, name: REPLICA });
const staged = (team: Team) => cacheNames(team, CACHE);
const serving = (team: Team) => replicaNames({ namespace: team, name: REPLICA });

const cacheOf = (team: Team): JsonObject | undefined => getObject('control-plane', 'modelcache', CACHE, team);
const replicaOf = (team: Team): JsonObject | undefined => getObject('control-plane', 'modelreplica', REPLICA, team);
const hydrationOf = (team: Team, cluster: string): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(team, CACHE, cluster), team);

/** One remote object as this test compares it: who it is, whose it says it is, and its generation. */
interface Remote {
  kind: Kind;
  name: string;
  uid: string;
  generation: number | undefined;
  object: JsonObject;
}

/** Everything on a workload cluster labelled as one of the two teams', by team. */
function inventory(cluster: Workload): Record<Team, Remote[]> {
  const byTeam = Object.fromEntries(TEAM_NAMES.map((team) => [team, [] as Remote[]])) as Record<Team, Remote[]>;
  for (const kind of KINDS) {
    for (const object of list(cluster, kind, REMOTE, `${LABEL_NAMESPACE} in (${TEAM_NAMES.join(',')})`)) {
      const team = getString(object, 'metadata', 'labels', LABEL_NAMESPACE) as Team;
      byTeam[team].push({
        kind,
        name: getString(object, 'metadata', 'name')!,
        uid: getString(object, 'metadata', 'uid')!,
        generation: getIn(object, 'metadata', 'generation') as number | undefined,
        object,
      });
    }
  }
  return byTeam;
}

const namesOf = (remotes: readonly Remote[], kind: Kind): string[] =>
  remotes
    .filter((r) => r.kind === kind)
    .map((r) => r.name)
    .sort();

/** The owner annotations an object carries (every key with the owner prefix). */
function ownersOf(object: JsonObject): Record<string, unknown> {
  const annotations = field(object, 'metadata', 'annotations') ?? {};
  return Object.fromEntries(Object.entries(annotations).filter(([key]) => key.startsWith(OWNER_ANNOTATION_PREFIX)));
}

/**
 * Both teams' objects on a cluster are apart: no name and no uid in both, the
 * same kinds for each, and each object marked as its own team's only (labels,
 * one owner annotation: its cache's or its replica's).
 */
function expectApart(cluster: Workload, byTeam: Record<Team, Remote[]>): void {
  const [a, b] = [byTeam[TEAM_A], byTeam[TEAM_B]];
  expect(a.length, `${cluster}: ${TEAM_A}'s objects`).toBeGreaterThan(0);
  expect(new Set(a.map((r) => r.kind)), `${cluster}: the kinds each team has`).toEqual(new Set(b.map((r) => r.kind)));
  for (const kind of KINDS) expect(namesOf(a, kind).length, `${cluster}: ${kind} of each team`).toBe(namesOf(b, kind).length);
  const key = (r: Remote): string => `${r.kind}/${r.name}`;
  expect(
    a.map(key).filter((k) => b.map(key).includes(k)),
    `${cluster}: names in both teams`,
  ).toEqual([]);
  expect(
    a.map((r) => r.uid).filter((uid) => b.some((r) => r.uid === uid)),
    `${cluster}: uids in both teams`,
  ).toEqual([]);
  for (const team of TEAM_NAMES) {
    for (const remote of byTeam[team]) {
      const where = `${cluster}: ${remote.kind}/${remote.name}`;
      const labels = field(remote.object, 'metadata', 'labels') ?? {};
      const owner = labels[LABEL_MODELREPLICA] === REPLICA ? replicaOwner(team) : cacheOwner(team);
      if (owner.kind === 'ModelCache') expect(labels[LABEL_MODELCACHE], where).toBe(CACHE);
      const { key: ownerKey, value } = ownerAnnotation(owner);
      expect(ownersOf(remote.object), `${where}: its owner annotations`).toEqual({ [ownerKey]: value });
    }
  }
}

/** The uids of every object (and the generation of every Deployment) of one team on one cluster, Jobs aside (their TTL ends them). */
/** A Job, or what a finished Job was handed (its access, its emptied Secret): it goes with the Job's TTL. */
function leftToJobTtl(r: Remote): boolean {
  return r.kind === 'jobs' || asArray(getIn(r.object, 'metadata', 'ownerReferences')).some((o) => getString(o, 'kind') === 'Job');
}

function fingerprint(remotes: readonly Remote[]): Record<string, string> {
  return Object.fromEntries(
    remotes
      .filter((r) => !leftToJobTtl(r))
      .map((r) => [`${r.kind}/${r.name}`, r.kind === 'deployments' ? `${r.uid} generation ${String(r.generation)}` : r.uid]),
  );
}

function volumesOf(object: JsonObject): JsonObject[] {
  return asArray(getIn(object, 'spec', 'template', 'spec', 'volumes')).filter(isObject);
}

function envOf(object: JsonObject, container: string): JsonObject[] {
  const found = asArray(getIn(object, 'spec', 'template', 'spec', 'containers')).find((c) => isObject(c) && c['name'] === container);
  return asArray(getIn(found, 'env')).filter(isObject);
}

describe.skipIf(!nodesPlane('teams.e2e.ts'))("two teams' caches and replicas of one name, on the same clusters", () => {
  afterAll(async () => {
    await setFaults({});
    leavePool(CLUSTERS[SERVING]);
    for (const team of TEAM_NAMES) kubectl('control-plane', ['delete', 'modelreplicas,modelcaches', '--all', '-n', team, '--wait=false']);
    await eventually(
      'every XR gone',
      () =>
        TEAM_NAMES.every((ns) =>
          ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, ns).length === 0),
        ),
      STEP_WAIT,
    );
    kubectl('control-plane', ['delete', 'namespace', ...TEAM_NAMES, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', ...Object.keys(CLUSTERS), '--ignore-not-found']);
    // A Job is orphaned, never deleted (its TTL ends it): the next file finds none of ours.
    for (const cluster of WORKLOADS)
      kubectl(cluster, ['delete', 'jobs', '-n', REMOTE, '-l', `${LABEL_NAMESPACE} in (${TEAM_NAMES.join(',')})`]);
  });

  it('stages each team its own claim, Job and token Secret on both clusters', async () => {
    await setFaults({ hold: 'model.safetensors', repo: HUB_WALKTHROUGH_REPO });
    joinPool(CLUSTERS[SERVING], DEFAULT_POOL);
    for (const [name, cluster] of Object.entries(CLUSTERS)) {
      apply('control-plane', inferenceCluster(name, SELECTOR));
      setInferenceClusterStatus(name, { providerConfigRef: { name: cluster }, cache: { storageClassName: 'modelplane-rwx' } });
    }
    for (const team of TEAM_NAMES) {
      apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: team } }, hfTokenSecret(team));
      const cache = huggingFaceCache(team, CACHE, SELECTOR);
      const { revision, sizeGiB } = TEAMS[team];
      Object.assign(field(cache, 'spec', 'huggingFace')!, { revision, sizeGiB });
      apply('control-plane', cache, standaloneReplica(team, REPLICA, SERVING, CACHE));
    }

    for (const cluster of WORKLOADS) {
      const byTeam = await eventually(
        `each team's claim, Job and token Secret on ${cluster}`,
        () => {
          const found = inventory(cluster);
          const there = TEAM_NAMES.every((team) => {
            const mine = found[team];
            return (
              namesOf(mine, 'persistentvolumeclaims').includes(staged(team).pvc) &&
              namesOf(mine, 'jobs').includes(staged(team).job) &&
              namesOf(mine, 'secrets').includes(staged(team).authSecret)
            );
          });
          // Until both teams' Objects have applied everything, the two may differ by what is still to come.
          if (there) expectApart(cluster, found);
          return there ? found : undefined;
        },
        { ...STEP_WAIT, describe: () => JSON.stringify(inventory(cluster), (k, v: unknown) => (k === 'object' ? undefined : v)) },
      );
      for (const team of TEAM_NAMES) {
        const { pvc, job, authSecret } = staged(team);
        const claim = byTeam[team].find((r) => r.kind === 'persistentvolumeclaims' && r.name === pvc)!.object;
        expect(getIn(claim, 'spec', 'resources', 'requests', 'storage'), `${cluster}: ${team}'s claim size`).toBe(
          `${TEAMS[team].sizeGiB}Gi`,
        );
        // The Job stages its own team's revision into its own team's claim, with its own team's token.
        const download = byTeam[team].find((r) => r.kind === 'jobs' && r.name === job)!.object;
        expect(
          volumesOf(download).map((v) => getIn(v, 'persistentVolumeClaim', 'claimName')),
          `${cluster}: ${team}'s Job`,
        ).toContain(pvc);
        const text = JSON.stringify(getIn(download, 'spec', 'template'));
        expect(text, `${cluster}: ${team}'s Job`).toContain(`--revision=${TEAMS[team].revision}`);
        expect(text, `${cluster}: ${team}'s Job`).toContain(authSecret);
        const other = TEAM_NAMES.find((t) => t !== team)!;
        expect(text, `${cluster}: ${team}'s Job names nothing of ${other}'s`).not.toMatch(
          new RegExp(`${staged(other).pvc}|${staged(other).authSecret}`),
        );
      }
    }
  });

  it(
    "serves each team's replica on the same cluster from its own team's claim, once its own cache is Ready",
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      // Each team's Job pod at the held weights, on its claim the provisioner bound; then the hub lets them finish.
      for (const name of Object.keys(CLUSTERS)) {
        for (const team of TEAM_NAMES) {
          await eventually(
            `${team} Hydrating on ${name}`,
            () => reasonOf(hydrationOf(team, name), 'ArtifactReady') === 'Hydrating',
            STEP_WAIT,
          );
        }
      }
      await setFaults({});
      for (const team of TEAM_NAMES)
        await eventually(`${team}'s cache Ready on both clusters`, () => getIn(cacheOf(team), 'status', 'summary', 'ready') === '2/2', {
          ...STEP_WAIT,
          describe: () => JSON.stringify(getIn(cacheOf(team), 'status')),
        });

      const cluster = CLUSTERS[SERVING];
      for (const team of TEAM_NAMES) {
        const wanted = [serving(team).deployment('main'), serving(team).epp].sort();
        await eventually(`${team}'s engine and endpoint picker on ${cluster}`, () => {
          const found = namesOf(inventory(cluster)[team], 'deployments');
          return wanted.every((name) => found.includes(name));
        });
      }
      // Both teams' engine pods (the vLLM stand-in, one fake GPU each) and endpoint pickers run on the node.
      for (const team of TEAM_NAMES)
        await eventually(`${team}'s replica Serving`, () => reasonOf(replicaOf(team), 'ModelReady') === 'Serving', {
          ...ENGINE_WAIT,
          describe: () => JSON.stringify(getIn(replicaOf(team), 'status', 'conditions')),
        });

      // Once Ready, a cache keeps only its claim there: the Job is left to its TTL, and the Job's access and the
      // token Secret, emptied, go with it (owned by that team's Job on the cluster).
      for (const workload of WORKLOADS)
        await eventually(
          `only each team's claim and finished Job left of its cache on ${workload}, and the Job's access owned by it`,
          () =>
            TEAM_NAMES.every((team) => {
              const mine = inventory(workload)[team];
              const job = mine.find((r) => r.kind === 'jobs')?.object;
              return mine.every(
                (r) =>
                  getString(r.object, 'metadata', 'labels', LABEL_MODELCACHE) === undefined ||
                  ['persistentvolumeclaims', 'jobs'].includes(r.kind) ||
                  (['serviceaccounts', 'roles', 'rolebindings', 'secrets'].includes(r.kind) &&
                    ownedByJob(r.object, job) &&
                    getIn(r.object, 'data') === undefined),
              );
            }),
          STEP_WAIT,
        );

      const byTeam = inventory(cluster);
      expectApart(cluster, byTeam);
      for (const team of TEAM_NAMES) {
        const mine = byTeam[team];
        expect(namesOf(mine, 'deployments'), `${team}'s Deployments`).toEqual([serving(team).deployment('main'), serving(team).epp].sort());
        expect(namesOf(mine, 'inferencepools'), `${team}'s InferencePool`).toEqual([serving(team).pool]);
        expect(namesOf(mine, 'httproutes'), `${team}'s HTTPRoute`).toEqual([serving(team).route]);
        expect(namesOf(mine, 'services'), `${team}'s Service`).toEqual([serving(team).eppService]);
        expect(namesOf(mine, 'resourceclaimtemplates'), `${team}'s ResourceClaimTemplate`).toEqual([
          serving(team).claimTemplate('main', 'standalone'),
        ]);
        // Content: the engine mounts its own team's claim, at the commit its own team's Job staged.
        const engine = mine.find((r) => r.name === serving(team).deployment('main'))!.object;
        expect(volumesOf(engine)).toContainEqual({ name: 'model-cache', persistentVolumeClaim: { claimName: staged(team).pvc } });
        expect(envOf(engine, 'engine')).toContainEqual({ name: 'MODELPLANE_MODEL_REVISION', value: TEAMS[team].commit });
        // The route sends to its own team's pool; the pool selects its own team's pods.
        const route = mine.find((r) => r.kind === 'httproutes')!.object;
        expect(JSON.stringify(getIn(route, 'spec', 'rules')), `${team}'s HTTPRoute`).toContain(serving(team).pool);
        const pool = mine.find((r) => r.kind === 'inferencepools')!.object;
        expect(JSON.stringify(getIn(pool, 'spec')), `${team}'s InferencePool`).toContain(serving(team).serving);
        expect(reasonOf(replicaOf(team), 'ModelAccepted'), `${team}'s replica`).toBe('Accepted');
      }
      expect(serving(TEAM_A).serving).not.toBe(serving(TEAM_B).serving);
    },
  );

  it('keeps every remote object still for a minute: no Deployment generation climbs, no uid changes', async () => {
    const before = Object.fromEntries(WORKLOADS.map((cluster) => [cluster, inventory(cluster)]));
    const start = Date.now();
    // A look every 5 s, the last at or after 60 s: several of provider-kubernetes' and Crossplane's polls.
    do {
      await sleep(5_000);
      for (const cluster of WORKLOADS) {
        const now = inventory(cluster);
        for (const team of TEAM_NAMES)
          expect(fingerprint(now[team]), `${cluster}: ${team}'s objects after ${Date.now() - start} ms`).toEqual(
            fingerprint(before[cluster]![team]),
          );
        expectApart(cluster, now);
      }
    } while (Date.now() - start < 60_000);
    for (const team of TEAM_NAMES) expect(reasonOf(replicaOf(team), 'ModelReady')).toBe('Serving');
  });

  it(
    "leaves one team's remote objects untouched when the other team's replica and cache are deleted",
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      const before = Object.fromEntries(WORKLOADS.map((cluster) => [cluster, fingerprint(inventory(cluster)[TEAM_A])]));
      kubectlOk('control-plane', ['delete', 'modelreplica', REPLICA, '-n', TEAM_B, '--wait=true', '--timeout=120s']);
      // The replica's Usage of its cache can outlive it by a moment; until it goes, the webhook refuses the cache's deletion.
      await eventually(`${TEAM_B}'s Usage gone`, () => list('control-plane', 'usages.protection.crossplane.io', TEAM_B).length === 0);
      kubectlOk('control-plane', ['delete', 'modelcache', CACHE, '-n', TEAM_B, '--wait=true', '--timeout=120s']);
      for (const cluster of WORKLOADS)
        // Jobs aside: a Job is orphaned, never deleted, and its TTL ends it and what it owns. The claim goes once
        // nothing holds it: the finished Job's pod does until that TTL (180 s).
        await eventually(`${TEAM_B}'s objects gone from ${cluster}`, () => inventory(cluster)[TEAM_B].every(leftToJobTtl), {
          ...ENGINE_WAIT,
          describe: () => names(inventory(cluster)[TEAM_B].map((r) => r.object)).join(', '),
        });
      for (const cluster of WORKLOADS)
        expect(fingerprint(inventory(cluster)[TEAM_A]), `${cluster}: ${TEAM_A}'s objects`).toEqual(before[cluster]);
      expect(reasonOf(replicaOf(TEAM_A), 'ModelReady')).toBe('Serving');
      expect(getIn(cacheOf(TEAM_A), 'status', 'summary', 'ready')).toBe('2/2');
    },
  );
});
