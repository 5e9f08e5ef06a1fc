// The platform team's settings on a real control plane (issue 15): a
// Composition whose function step carries a HydrationSettings input with a
// per-team workload namespace and an internal mirror. The cache's claim and
// Job land in the team's namespace on the workload cluster, created by a
// Namespace Object without a Delete policy; deleting the cache leaves the
// namespace; and a cache staged in `default` before the switch stays there,
// its claim untouched.
//
// The packaged Composition belongs to the Configuration (its revision puts it
// back within a minute), so the settings live in a Composition of their own,
// which each ModelCacheHydration here names in spec.crossplane.compositionRef.
//
// On real nodes (docs/nodes.md), nothing stubbed: the "internal mirror" is the
// plane's hub and the package index its pypiserver, so the Job's pod, in the
// team's namespace, installs huggingface_hub from the index on the stock
// Python image and downloads through the mirror; the provisioner binds the
// claims.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  NAMESPACE_POLICIES,
  REMOTE_NAMESPACE,
  SETTINGS_API_VERSION,
  WORKLOAD_NAMESPACE_ENV,
  asArray,
  cacheNames,
  composedManifest,
  getIn,
  getString,
  isObject,
  workloadNamespace,
  type JsonObject,
} from '#lib';
import { parse as parseYaml } from 'yaml';
import { ENGINE_TEST_TIMEOUT, ENGINE_WAIT } from './hub/engine.js';
import { HUB_BESIDE_REPO } from './hub/repo.js';
import { REPO_ROOT } from '../support/server.js';
import {
  apply,
  eventually,
  getObject,
  kubectl,
  kubectlOk,
  list,
  reasonOf,
  setInferenceClusterStatus,
  nodesPlane,
  ofStory,
  PYPI_INDEX_URL,
  HUB_ENDPOINT,
} from './plane.js';

const NAMESPACE = 'e2e-settings';
/** childName("mp", "e2e-settings"): the team's namespace on every workload cluster. */
const TEAM = workloadNamespace('PerTeam', NAMESPACE, 'settings-a');
const CLUSTER = 'settings-a';
const LABELS = { 'modelplane.ai/tier': 'e2e-settings' };
const PER_TEAM_COMPOSITION = 'modelcachehydrations-per-team.modelplane.ai';
/** The platform's mirror of the hub, and its package index: the plane's. */
const MIRROR = HUB_ENDPOINT;

const mirrored = cacheNames(NAMESPACE, 'mirrored');
const legacy = cacheNames(NAMESPACE, 'legacy');

/** The packaged Composition, renamed, with the settings as its step's input. */
function perTeamComposition(): JsonObject {
  const packaged = parseYaml(readFileSync(join(REPO_ROOT, 'package', 'modelcachehydrations', 'composition.yaml'), 'utf8')) as JsonObject;
  const composition = structuredClone(packaged);
  (composition['metadata'] as JsonObject)['name'] = PER_TEAM_COMPOSITION;
  const [step] = getIn(composition, 'spec', 'pipeline') as JsonObject[];
  step!['input'] = {
    apiVersion: SETTINGS_API_VERSION,
    kind: 'HydrationSettings',
    workloadNamespace: 'PerTeam',
    network: { hfEndpoint: MIRROR },
    install: { indexUrl: PYPI_INDEX_URL },
  };
  return composition;
}

/** A ModelCacheHydration as compose-model-cache would stamp it, optionally on a Composition of our choice. */
function hydration(cache: string, composition?: string): JsonObject {
  const spec: JsonObject = {
    clusterName: CLUSTER,
    cacheName: cache,
    source: 'HuggingFace',
    huggingFace: { repo: HUB_BESIDE_REPO, revision: 'main', sizeGiB: 10 },
  };
  if (composition) spec['crossplane'] = { compositionRef: { name: composition } };
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'ModelCacheHydration',
    metadata: { name: `${cache}-${CLUSTER}`, namespace: NAMESPACE },
    spec,
  };
}

const xr = (cache: string): JsonObject | undefined => getObject('control-plane', 'modelcachehydration', `${cache}-${CLUSTER}`, NAMESPACE);

/** The control-plane Objects of one XR, by what they manage on the workload cluster. */
function objectsOf(cache: string): JsonObject[] {
  return list('control-plane', 'objects.kubernetes.m.crossplane.io', NAMESPACE).filter(
    (o) => getString(o, 'metadata', 'labels', 'crossplane.io/composite') === `${cache}-${CLUSTER}`,
  );
}

function describeXr(cache: string): () => string {
  return () =>
    JSON.stringify({ status: getIn(xr(cache), 'status'), objects: objectsOf(cache).map((o) => getIn(o, 'status', 'conditions')) });
}

describe.skipIf(!nodesPlane('settings.e2e.ts'))('settings on a real control plane: a per-team namespace and a mirror', () => {
  afterAll(async () => {
    kubectl('control-plane', ['delete', 'modelcachehydrations', '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually('every XR gone', () => list('control-plane', 'modelcachehydrations', NAMESPACE).length === 0);
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferencecluster', CLUSTER, '--ignore-not-found']);
    kubectl('control-plane', ['delete', 'composition', PER_TEAM_COMPOSITION, '--ignore-not-found']);
    // The story's Jobs only: the stories beside it run theirs in `default` on the same cluster.
    for (const namespace of [TEAM, REMOTE_NAMESPACE]) kubectl('cluster-a', ['delete', 'jobs', '-n', namespace, '-l', ofStory(NAMESPACE)]);
  });

  it(
    'stages a cache in the team namespace, through the mirror, creating the namespace without a Delete policy',
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      apply('control-plane', {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'InferenceCluster',
        metadata: { name: CLUSTER, labels: LABELS },
        spec: {},
      });
      setInferenceClusterStatus(CLUSTER, { providerConfigRef: { name: 'cluster-a' }, cache: { storageClassName: 'modelplane-rwx' } });
      apply('control-plane', perTeamComposition());
      apply('control-plane', hydration('mirrored', PER_TEAM_COMPOSITION));

      const namespace = await eventually('the team namespace on cluster-a', () => getObject('cluster-a', 'namespace', TEAM), {
        describe: describeXr('mirrored'),
      });
      expect(getString(namespace, 'metadata', 'labels', 'modelplane.ai/namespace')).toBe(NAMESPACE);
      const claim = await eventually('the claim in the team namespace', () => getObject('cluster-a', 'pvc', mirrored.pvc, TEAM), {
        describe: describeXr('mirrored'),
      });
      expect(getIn(claim, 'spec', 'accessModes')).toEqual(['ReadWriteMany']);
      const job = await eventually('the Job in the team namespace', () => getObject('cluster-a', 'job', mirrored.job, TEAM), {
        describe: describeXr('mirrored'),
      });
      const [container] = asArray(getIn(job, 'spec', 'template', 'spec', 'containers')).filter(isObject);
      const env = asArray(container?.['env']).filter(isObject);
      expect(env).toContainEqual({ name: 'HF_ENDPOINT', value: MIRROR });
      expect(asArray(container?.['command']).join(' ')).toContain(`--index-url '${PYPI_INDEX_URL}'`);
      // Nothing of this cache in default.
      expect(getObject('cluster-a', 'pvc', mirrored.pvc, REMOTE_NAMESPACE)).toBeUndefined();
      expect(getObject('cluster-a', 'job', mirrored.job, REMOTE_NAMESPACE)).toBeUndefined();

      const namespaceObject = objectsOf('mirrored').find((o) => getString(composedManifest(o), 'kind') === 'Namespace');
      const policies = asArray(getIn(namespaceObject, 'spec', 'managementPolicies'));
      expect(policies).toEqual([...NAMESPACE_POLICIES]);
      expect(policies).not.toContain('Delete');

      // The claim binds and the Job's pod installs, downloads through the mirror and verifies: Ready, and the mount
      // says where it lives.
      const ready = await eventually(
        'the cache Ready',
        () => (getString(xr('mirrored') ?? {}, 'status', 'phase') === 'Ready' ? xr('mirrored') : undefined),
        {
          ...ENGINE_WAIT,
          describe: describeXr('mirrored'),
        },
      );
      const pods = list('cluster-a', 'pods', TEAM).filter((p) => getString(p, 'metadata', 'labels', 'job-name') === mirrored.job);
      expect(pods.map((p) => getString(p, 'status', 'phase'))).toContain('Succeeded');
      expect(asArray(getIn(ready, 'status', 'mount', 'env'))).toContainEqual({ name: WORKLOAD_NAMESPACE_ENV, value: TEAM });
    },
  );

  it('leaves the namespace when the cache is deleted', { timeout: ENGINE_TEST_TIMEOUT }, async () => {
    kubectlOk('control-plane', ['delete', 'modelcachehydration', `mirrored-${CLUSTER}`, '-n', NAMESPACE, '--wait=false']);
    // The claim's Object goes once the claim does, and the finished Job's pod holds the claim until the Job's TTL
    // (180 s after it completed) removes both.
    await eventually('the XR and its Objects gone', () => xr('mirrored') === undefined && objectsOf('mirrored').length === 0, {
      ...ENGINE_WAIT,
      describe: describeXr('mirrored'),
    });
    // provider-kubernetes deleted what had Delete (the claim) and only removed its Object for the namespace.
    await sleep(10_000);
    const namespace = getObject('cluster-a', 'namespace', TEAM);
    expect(namespace, `namespace ${TEAM} on cluster-a`).toBeDefined();
    expect(getIn(namespace, 'metadata', 'deletionTimestamp')).toBeUndefined();
  });

  it('keeps a cache staged in default before the switch where it is: its claim is neither deleted nor moved', async () => {
    // Staged with the packaged Composition (Shared): claim in default, bound.
    apply('control-plane', hydration('legacy'));
    const claim = await eventually('the legacy claim in default', () => getObject('cluster-a', 'pvc', legacy.pvc, REMOTE_NAMESPACE), {
      describe: describeXr('legacy'),
    });
    await eventually(
      'the legacy claim Bound',
      () => getString(getObject('cluster-a', 'pvc', legacy.pvc, REMOTE_NAMESPACE) ?? {}, 'status', 'phase') === 'Bound',
    );
    const uid = getString(claim, 'metadata', 'uid');

    // The switch: the same XR now on the per-team Composition.
    kubectlOk('control-plane', [
      'patch',
      'modelcachehydration',
      `legacy-${CLUSTER}`,
      '-n',
      NAMESPACE,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { crossplane: { compositionRef: { name: PER_TEAM_COMPOSITION } } } }),
    ]);
    await eventually(
      'a StagedInOtherNamespace warning on the XR',
      () =>
        list('control-plane', 'events', NAMESPACE).some(
          (e) =>
            getString(e, 'involvedObject', 'name') === `legacy-${CLUSTER}` &&
            (getString(e, 'reason') === 'StagedInOtherNamespace' ||
              (getString(e, 'message') ?? '').includes('staged in namespace default before')),
        ),
      { describe: describeXr('legacy') },
    );
    await sleep(10_000); // a provider poll and an XR poll
    const still = getObject('cluster-a', 'pvc', legacy.pvc, REMOTE_NAMESPACE);
    expect(getString(still ?? {}, 'metadata', 'uid'), 'the same claim, never recreated').toBe(uid);
    expect(getIn(still, 'metadata', 'deletionTimestamp')).toBeUndefined();
    expect(getObject('cluster-a', 'pvc', legacy.pvc, TEAM), 'no second claim in the team namespace').toBeUndefined();
    for (const object of objectsOf('legacy')) {
      expect(getString(composedManifest(object), 'metadata', 'namespace')).toBe(REMOTE_NAMESPACE);
    }
    expect(reasonOf(xr('legacy'), 'ArtifactReady')).not.toBe('HydrationFailed');
  });
});
