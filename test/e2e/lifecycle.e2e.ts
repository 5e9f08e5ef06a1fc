// The model-cache lifecycle on a real control plane (`make up`): Crossplane
// runs our Compositions and calls our three servers over mutual TLS;
// provider-kubernetes puts what they compose on three workload clusters, each
// a real node (docs/nodes.md). Each step is asserted on what the API servers
// hold. Nothing plays a controller: claims bind when the Job's pod is
// scheduled, the pods download from the plane's hub (the stand-in for
// huggingface.co; it holds the weights while a step looks at a download in
// flight, and refuses cluster-c's pods when a step needs a download to fail),
// the Job, TTL and garbage-collection controllers finish and remove Jobs, the
// engine is a pod with a DRA device, and the OCI source is resolved by its
// real resolver Job against the plane's registry.
//
// The steps run in order and build on each other, as a platform team's day
// would: stage a model on two of three clusters, serve it on one, move the
// footprint, fail a download, stage from OCI and from an existing claim, and
// delete everything.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../support/tools.js';
import { REMOTE_NAMESPACE, asArray, cacheNames, getIn, getString, hydrationName, isObject, type JsonObject } from '#lib';
import {
  clusterEntry,
  E2E_HF_TOKEN,
  WORKLOAD_CLUSTERS,
  apply,
  hfTokenSecret,
  inferenceCluster,
  condition,
  eventually,
  getObject,
  kubectl,
  kubectlOk,
  list,
  names,
  type ApiServer,
  setInferenceClusterStatus,
  engineDeployments,
  reasonOf,
  standaloneReplica,
  tokenLeft,
  nodesPlane,
  REGISTRY,
  DEFAULT_POOL,
  modelCache as cacheManifest,
  ofStory,
} from './plane.js';
import { clusterClients, setFaults } from './hub/client.js';
import { ENGINE_TEST_TIMEOUT, ENGINE_WAIT, joinPool, leavePool } from './hub/engine.js';
import { HUB_WALKTHROUGH_REPO, hubRevision } from './hub/repo.js';

// Its own namespace: the walkthrough (another e2e file) plays its story in ml-team.
const NAMESPACE = 'e2e-lifecycle';
const REMOTE = REMOTE_NAMESPACE;
const TIER = 'modelplane.ai/tier';

/** What upstream's InferenceCluster composition would report once the cluster is provisioned. */
function provision(name: string): void {
  const status = { providerConfigRef: { name }, cache: { storageClassName: 'modelplane-rwx', imageVolumes: true } };
  setInferenceClusterStatus(name, status);
}

const modelCache = (name: string, source: JsonObject, selector: Record<string, string>): JsonObject =>
  cacheManifest(NAMESPACE, name, source, selector);

const HUGGING_FACE = {
  source: 'HuggingFace',
  huggingFace: { repo: HUB_WALKTHROUGH_REPO, revision: 'main', sizeGiB: 20, authSecret: { name: 'hf-token', key: 'HF_TOKEN' } },
};

/**
 * A ModelPack artifact (its config and weight media types, artifactType) pushed to the plane's registry from an
 * OCI layout written here; its digest. What the resolver Job resolves; the engine would mount it through the
 * ModelPack CSI driver, which is not on the nodes, so the story stops at the mount it publishes.
 */
function pushModelPack(repository: string): string {
  const work = mkdtempSync(join(tmpdir(), 'modelpack-'));
  try {
    mkdirSync(join(work, 'blobs', 'sha256'), { recursive: true });
    const blob = (content: Buffer | string): { digest: string; size: number } => {
      const bytes = Buffer.from(content);
      const hex = createHash('sha256').update(bytes).digest('hex');
      writeFileSync(join(work, 'blobs', 'sha256', hex), bytes);
      return { digest: `sha256:${hex}`, size: bytes.length };
    };
    const config = blob(JSON.stringify({ descriptor: { name: 'qwen' }, modelfs: { type: 'layers', diffIds: [] } }));
    const weights = blob(Buffer.alloc(1024, 7));
    const manifest = blob(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        artifactType: 'application/vnd.cncf.model.manifest.v1+json',
        config: { mediaType: 'application/vnd.cncf.model.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.cncf.model.weight.v1.tar', ...weights }],
      }),
    );
    const index = { schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest }] };
    writeFileSync(join(work, 'index.json'), JSON.stringify(index));
    writeFileSync(join(work, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    execFileSync(requireTool('CRANE'), ['push', work, `${REGISTRY.push}/${repository}`], { stdio: 'pipe' });
    return manifest.digest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const cacheOf = (name: string): JsonObject | undefined => getObject('control-plane', 'modelcache', name, NAMESPACE);
const replicaOf = (name: string): JsonObject | undefined => getObject('control-plane', 'modelreplica', name, NAMESPACE);
const hydrationOf = (cache: string, cluster: string): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, cache, cluster), NAMESPACE);

/** The story's objects of a kind on a workload cluster: what the functions label as its (docs/nodes.md, "Two lanes"). */
function remoteNames(cluster: ApiServer, resource: string): string[] {
  return names(list(cluster, resource, REMOTE, ofStory(NAMESPACE)));
}

describe.skipIf(!nodesPlane('lifecycle.e2e.ts'))('the lifecycle on a real control plane', () => {
  const hf = cacheNames(NAMESPACE, 'qwen');
  const replica = 'qwen-chat-a';

  // The weights held at the hub until a step lets the downloads finish; the replica's pool on cluster-a's node.
  beforeAll(async () => {
    await setFaults({ hold: 'model.safetensors', repo: HUB_WALKTHROUGH_REPO });
    joinPool('cluster-a', DEFAULT_POOL);
  });

  // The next e2e file gets the plane as it found it: no XR, no InferenceCluster, no token.
  afterAll(async () => {
    for (const kind of ['modelreplicas', 'modelcaches'])
      kubectl('control-plane', ['delete', kind, '--all', '-n', NAMESPACE, '--wait=false']);
    await eventually(
      'every XR gone',
      () => ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, NAMESPACE).length === 0),
      {
        timeoutMs: 180_000,
      },
    );
    kubectl('control-plane', ['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
    kubectl('control-plane', ['delete', 'inferenceclusters', ...WORKLOAD_CLUSTERS, '--ignore-not-found']);
    kubectl('cluster-b', ['delete', 'pod', 'platform-fill', '-n', REMOTE, '--ignore-not-found']);
    kubectl('cluster-b', ['delete', 'pvc', 'qwen-weights', '-n', REMOTE, '--ignore-not-found']);
    leavePool('cluster-a');
    await setFaults({});
  });

  it('stages a HuggingFace model on the two selected clusters of three, and on no other', async () => {
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    apply(
      'control-plane',
      inferenceCluster('cluster-a', { [TIER]: 'a100' }),
      inferenceCluster('cluster-b', { [TIER]: 'a100' }),
      inferenceCluster('cluster-c', { [TIER]: 'cpu' }),
    );
    for (const cluster of WORKLOAD_CLUSTERS) provision(cluster);
    apply('control-plane', hfTokenSecret(NAMESPACE));
    apply('control-plane', modelCache('qwen', HUGGING_FACE, { [TIER]: 'a100' }));

    const children = await eventually('two ModelCacheHydrations', () => {
      const found = list('control-plane', 'modelcachehydrations', NAMESPACE, 'modelplane.ai/modelcache=qwen');
      return found.length === 2 ? found : undefined;
    });
    expect(names(children)).toEqual([hydrationName(NAMESPACE, 'qwen', 'cluster-a'), hydrationName(NAMESPACE, 'qwen', 'cluster-b')].sort());

    for (const cluster of ['cluster-a', 'cluster-b'] as const) {
      await eventually(`the PVC, Job and token Secret on ${cluster}`, () => {
        const pvc = remoteNames(cluster, 'pvc').includes(hf.pvc);
        const job = remoteNames(cluster, 'jobs').includes(hf.job);
        const secret = remoteNames(cluster, 'secrets').includes(hf.authSecret);
        return pvc && job && secret;
      });
      // The token reached the workload Secret's data, and only there.
      const secret = getObject(cluster, 'secret', hf.authSecret, REMOTE)!;
      expect(Buffer.from(String(getIn(secret, 'data', 'HF_TOKEN')), 'base64').toString()).toBe(E2E_HF_TOKEN);
    }
    expect(remoteNames('cluster-c', 'pvc')).toEqual([]);
    expect(remoteNames('cluster-c', 'jobs')).toEqual([]);
    expect(remoteNames('cluster-c', 'secrets')).toEqual([]);

    // `kubectl get modelcaches` shows the columns the XRD declares (SOURCE; STAGED: clusters Ready
    // over clusters staged; PROGRESS), then Crossplane's own. (A column of ours named READY printed twice here.)
    const table = await eventually('the STAGED column to count two clusters', () => {
      const out = kubectlOk('control-plane', ['get', 'modelcaches', '-n', NAMESPACE]);
      return /\b0\/2\b/.test(out) ? out : undefined;
    });
    const [header, row] = table.trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'SOURCE', 'STAGED', 'PROGRESS', 'SYNCED', 'READY', 'COMPOSITION', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 3)).toEqual(['qwen', 'HuggingFace', '0/2']);
    const childTable = kubectlOk('control-plane', ['get', 'modelcachehydrations', '-n', NAMESPACE]).trim().split('\n');
    expect(childTable[0]!.split(/\s+/)).toEqual([
      'NAME',
      'CLUSTER',
      'SOURCE',
      'PHASE',
      'PROGRESS',
      'SYNCED',
      'READY',
      'COMPOSITION',
      'AGE',
    ]);
  });

  it('holds a replica back while its cluster is hydrating: no engine on the cluster', async () => {
    apply('control-plane', standaloneReplica(NAMESPACE, replica, 'cluster-a', 'qwen'));
    const waiting = await eventually('the replica to say why it waits', () => {
      const found = replicaOf(replica);
      const reason = reasonOf(found, 'ModelAccepted');
      return reason === 'Hydrating' || reason === 'WaitingForCache' ? found : undefined;
    });
    expect(getString(condition(waiting, 'ModelAccepted')!, 'reason')).toBe('Hydrating');
    expect(engineDeployments('cluster-a', replica)).toEqual([]);
  });

  it("turns Ready once the Jobs' pods have downloaded and verified the model: mount published, Job and token gone, PVC kept", async () => {
    for (const cluster of ['cluster-a', 'cluster-b'] as const) {
      await eventually(
        `${cluster} Hydrating (the claim Bound by the provisioner, the Job's pod at the held weights)`,
        () => reasonOf(hydrationOf('qwen', cluster), 'ArtifactReady') === 'Hydrating',
      );
      expect(getString(getObject(cluster, 'pvc', hf.pvc, REMOTE) ?? {}, 'status', 'phase')).toBe('Bound');
      expect(getIn(getObject(cluster, 'job', hf.job, REMOTE), 'status', 'active')).toBe(1);
    }
    await setFaults({});
    const cache = await eventually(
      'the ModelCache Ready on both clusters',
      () => {
        const found = cacheOf('qwen');
        return reasonOf(found, 'ArtifactReady') === 'Staged' ? found : undefined;
      },
      { describe: () => JSON.stringify(getIn(cacheOf('qwen'), 'status')) },
    );
    expect(getIn(cache, 'status', 'summary', 'ready')).toBe('2/2');
    for (const cluster of ['cluster-a', 'cluster-b'] as const) {
      const entry = clusterEntry(cache, cluster)!;
      expect(entry['phase']).toBe('Ready');
      expect(getIn(entry, 'mount', 'volumes')).toEqual([{ name: 'model-cache', persistentVolumeClaim: { claimName: hf.pvc } }]);
      expect(asArray(getIn(entry, 'mount', 'env'))).toContainEqual({ name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' });
      // The token leaves the cluster at once (its Secret emptied and handed to the Job, to go with it); the Job is
      // left to its TTL (checked at the end), the PVC stays.
      await eventually(`the token gone from ${cluster}`, () => tokenLeft(cluster, hf.authSecret, REMOTE));
      expect(remoteNames(cluster, 'pvc')).toContain(hf.pvc);
      const job = getObject(cluster, 'job', hf.job, REMOTE);
      if (job) expect(getIn(job, 'spec', 'ttlSecondsAfterFinished')).toBe(180);
    }
  });

  it('starts the replica once its cluster is Ready, with the mount in its pod template', { timeout: ENGINE_TEST_TIMEOUT }, async () => {
    const [deployment] = await eventually('the engine Deployment on cluster-a', () => {
      const found = engineDeployments('cluster-a', replica);
      return found.length > 0 ? found : undefined;
    });
    const pod = getIn(deployment, 'spec', 'template', 'spec');
    expect(asArray(getIn(pod, 'volumes'))).toContainEqual({ name: 'model-cache', persistentVolumeClaim: { claimName: hf.pvc } });
    const engine = asArray(getIn(pod, 'containers')).find((c) => isObject(c) && c['name'] === 'engine');
    expect(asArray(getIn(engine, 'volumeMounts'))).toContainEqual({ name: 'model-cache', mountPath: '/mnt/models' });
    // The contract: the repo, the staged revision, and the hub kept away (the engine never downloads here).
    expect(asArray(getIn(engine, 'env'))).toEqual(
      expect.arrayContaining([
        { name: 'MODELPLANE_MODEL', value: 'Qwen/Qwen3-0.6B' },
        // Pinned to the commit the Job's pod staged (its report), not the branch the cache names.
        { name: 'MODELPLANE_MODEL_REVISION', value: hubRevision().commit },
        { name: 'HF_HUB_OFFLINE', value: '1' },
        { name: 'HF_HUB_CACHE', value: '/mnt/models' },
      ]),
    );
    // Nothing was composed on the other clusters.
    expect(engineDeployments('cluster-b', replica)).toEqual([]);
    await eventually('the replica Accepted', () => reasonOf(replicaOf(replica), 'ModelAccepted') === 'Accepted');
    // The engine (the vLLM stand-in under vLLM's image name) scheduled on the node with a DRA device, and Ready.
    await eventually('the replica Serving', () => reasonOf(replicaOf(replica), 'ModelReady') === 'Serving', {
      ...ENGINE_WAIT,
      describe: () => JSON.stringify(getIn(replicaOf(replica), 'status', 'conditions')),
    });
  });

  it(
    "keeps a deselected cluster while a replica runs there, and reclaims it (PVC and all) once the replica is gone; the other cluster's PVC stays",
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      kubectlOk('control-plane', ['label', 'inferencecluster', 'cluster-a', `${TIER}=h100`, '--overwrite']);
      await eventually(
        'cluster-a retained',
        () => {
          const entry = clusterEntry(cacheOf('qwen'), 'cluster-a');
          return entry !== undefined && /retained/i.test(JSON.stringify(entry)) ? entry : undefined;
        },
        { describe: () => JSON.stringify(getIn(cacheOf('qwen'), 'status')) },
      );
      expect(hydrationOf('qwen', 'cluster-a')).toBeDefined();
      expect(remoteNames('cluster-a', 'pvc')).toContain(hf.pvc);

      kubectlOk('control-plane', ['delete', 'modelreplica', replica, '-n', NAMESPACE, '--wait=true', '--timeout=120s']);
      await eventually('the engine gone from cluster-a', () => engineDeployments('cluster-a', replica).length === 0);
      // The claim goes once nothing holds it, and the hydration with it: the finished Job's pod holds it until the
      // Job's TTL (180 s after it completed) removes both.
      await eventually("cluster-a's PVC deleted", () => !remoteNames('cluster-a', 'pvc').includes(hf.pvc), {
        ...ENGINE_WAIT,
        describe: () => JSON.stringify({ jobs: remoteNames('cluster-a', 'jobs'), pods: remoteNames('cluster-a', 'pods') }),
      });
      await eventually('cluster-a reclaimed: its hydration gone', () => hydrationOf('qwen', 'cluster-a') === undefined);
      expect(remoteNames('cluster-b', 'pvc')).toContain(hf.pvc);
      expect(clusterEntry(cacheOf('qwen'), 'cluster-b')?.['phase']).toBe('Ready');
    },
  );

  it(
    "reports a failed Job as HydrationFailed on the child, the parent and a replica, in the pod's own words",
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      const broken = cacheNames(NAMESPACE, 'qwen-cpu');
      // cluster-c's egress to the hub refused, as a proxy would: each try of the Job's pod ends in a 403 (for this
      // story's repository: a story beside it may download another on cluster-c).
      await setFaults({ refuseFrom: clusterClients('cluster-c'), repo: HUB_WALKTHROUGH_REPO });
      apply('control-plane', modelCache('qwen-cpu', HUGGING_FACE, { [TIER]: 'cpu' }));
      apply('control-plane', standaloneReplica(NAMESPACE, 'qwen-chat-c', 'cluster-c', 'qwen-cpu'));
      await eventually(
        'the PVC and Job on cluster-c',
        () => remoteNames('cluster-c', 'pvc').includes(broken.pvc) && remoteNames('cluster-c', 'jobs').includes(broken.job),
      );
      // The pod restarts on its node until the Job's backoff limit; the Job controller then fails the Job.
      const child = await eventually(
        'the child HydrationFailed',
        () => {
          const found = hydrationOf('qwen-cpu', 'cluster-c');
          return reasonOf(found, 'ArtifactReady') === 'HydrationFailed' ? found : undefined;
        },
        { ...ENGINE_WAIT, describe: () => JSON.stringify(getIn(hydrationOf('qwen-cpu', 'cluster-c'), 'status')) },
      );
      const failedJob = getObject('cluster-c', 'job', broken.job, REMOTE);
      expect(reasonOf(failedJob, 'Failed')).toBe('BackoffLimitExceeded');
      expect(getString(condition(child, 'ArtifactReady')!, 'message')).toMatch(/BackoffLimitExceeded|backoff limit/);
      expect(getString(condition(child, 'ArtifactReady')!, 'message')).toMatch(/403 Forbidden/);
      await setFaults({});
      const parent = await eventually('the parent HydrationFailed', () => {
        const found = cacheOf('qwen-cpu');
        return reasonOf(found, 'ArtifactReady') === 'HydrationFailed' ? found : undefined;
      });
      expect(getString(condition(parent, 'ArtifactReady')!, 'message')).toContain('cluster-c');
      const failed = await eventually('the replica HydrationFailed', () => {
        const found = replicaOf('qwen-chat-c');
        return reasonOf(found, 'ModelAccepted') === 'HydrationFailed' ? found : undefined;
      });
      expect(getString(condition(failed, 'ModelAccepted')!, 'message')).toMatch(/BackoffLimitExceeded|backoff limit/);
      expect(engineDeployments('cluster-c', 'qwen-chat-c')).toEqual([]);
    },
  );

  it(
    'refuses to delete a ModelCache while a replica uses it (the Usage webhook), and replays the deletion once the replica is gone',
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      const broken = cacheNames(NAMESPACE, 'qwen-cpu');
      await eventually(
        'qwen-cpu marked in use',
        () => getString(cacheOf('qwen-cpu') ?? {}, 'metadata', 'labels', 'crossplane.io/in-use') === 'true',
      );
      const deletion = kubectl('control-plane', ['delete', 'modelcache', 'qwen-cpu', '-n', NAMESPACE, '--wait=false']);
      expect(deletion.code).not.toBe(0);
      expect(deletion.stderr).toMatch(/denied the request/);
      expect(deletion.stderr).toContain('qwen-chat-c');
      expect(getIn(cacheOf('qwen-cpu'), 'metadata', 'deletionTimestamp')).toBeUndefined();
      expect(remoteNames('cluster-c', 'pvc')).toContain(broken.pvc);

      // The replica composes its Usage with replayDeletion: the refused delete happens by itself once the
      // replica (and so the Usage) is gone, and takes everything the cache composed with it.
      kubectlOk('control-plane', ['delete', 'modelreplica', 'qwen-chat-c', '-n', NAMESPACE, '--wait=true', '--timeout=120s']);
      await eventually('qwen-cpu deleted by the replayed deletion', () => cacheOf('qwen-cpu') === undefined, { timeoutMs: 180_000 });
      await eventually("qwen-cpu's hydration gone", () => hydrationOf('qwen-cpu', 'cluster-c') === undefined);
      // The failed Job's pod holds the claim until the Job's TTL removes both.
      await eventually("qwen-cpu's PVC gone from cluster-c", () => !remoteNames('cluster-c', 'pvc').includes(broken.pvc), {
        ...ENGINE_WAIT,
      });
    },
  );

  it(
    'stages an OCI ModelPack artifact: the real resolver Job resolves it in the registry, Ready with a CSI mount',
    { timeout: ENGINE_TEST_TIMEOUT },
    async () => {
      const repository = 'modelplane-e2e/qwen-modelpack';
      const digest = pushModelPack(`${repository}:v1`);
      const ref = `${REGISTRY.pull}/${repository}:v1`;
      apply('control-plane', modelCache('qwen-oci', { source: 'OCI', oci: { ref } }, { [TIER]: 'a100' }));
      const cache = await eventually(
        'the OCI cache Ready on cluster-b',
        () => {
          const found = cacheOf('qwen-oci');
          return clusterEntry(found, 'cluster-b')?.['phase'] === 'Ready' ? found : undefined;
        },
        { ...ENGINE_WAIT, describe: () => JSON.stringify(getIn(cacheOf('qwen-oci'), 'status')) },
      );
      expect(getIn(hydrationOf('qwen-oci', 'cluster-b'), 'status', 'digest')).toBe(digest);
      const volume = asArray(getIn(clusterEntry(cache, 'cluster-b'), 'mount', 'volumes'))[0];
      expect(getIn(volume, 'csi', 'driver')).toBe('model.csi.modelpack.org');
      expect(JSON.stringify(volume)).toContain(digest);
    },
  );

  it('observes an existing claim for a PersistentVolumeClaim source: Ready once Bound, never created by us', async () => {
    apply('cluster-b', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'qwen-weights', namespace: REMOTE },
      // The node's local-path class binds on its first consumer (ReadWriteOnce only): Pending until the platform's own pod uses it.
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } }, storageClassName: 'local-path' },
    });
    apply(
      'control-plane',
      modelCache('qwen-pvc', { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'qwen-weights' } }, { [TIER]: 'a100' }),
    );
    await eventually(
      'ClaimNotBound while the claim is Pending',
      () => reasonOf(hydrationOf('qwen-pvc', 'cluster-b'), 'ArtifactReady') === 'ClaimNotBound',
    );
    apply('cluster-b', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'platform-fill', namespace: REMOTE },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'fill',
            image: 'docker.io/library/busybox:1.35.0',
            command: ['sh', '-c', 'touch /weights/filled'],
            volumeMounts: [{ name: 'weights', mountPath: '/weights' }],
          },
        ],
        volumes: [{ name: 'weights', persistentVolumeClaim: { claimName: 'qwen-weights' } }],
      },
    });
    const cache = await eventually('the PVC cache Ready on cluster-b', () => {
      const found = cacheOf('qwen-pvc');
      return clusterEntry(found, 'cluster-b')?.['phase'] === 'Ready' ? found : undefined;
    });
    expect(getIn(clusterEntry(cache, 'cluster-b'), 'mount', 'volumes')).toEqual([
      { name: 'model-cache', persistentVolumeClaim: { claimName: 'qwen-weights', readOnly: true } },
    ]);
  });

  it("leaves a completed Job to its TTL: the workload cluster's controller removes it, and the cluster stays Ready", async () => {
    await eventually(
      'the hydration Job gone from cluster-b (ttlSecondsAfterFinished: 180)',
      () => !remoteNames('cluster-b', 'jobs').includes(hf.job),
      {
        timeoutMs: 240_000,
      },
    );
    // What the Job owned (its emptied token Secret, its report access) goes with it: the cluster's garbage collector.
    const owned = { secrets: hf.authSecret, serviceaccounts: hf.job, roles: hf.job, rolebindings: hf.job };
    await eventually("the Job's Secret and access gone from cluster-b with it", () =>
      Object.entries(owned).every(([resource, name]) => !remoteNames('cluster-b', resource).includes(name)),
    );
    await eventually('Crossplane to look again', () => {
      const entry = clusterEntry(cacheOf('qwen'), 'cluster-b');
      return entry?.['phase'] === 'Ready' && getIn(hydrationOf('qwen', 'cluster-b'), 'status', 'phase') === 'Ready';
    });
    expect(remoteNames('cluster-b', 'jobs')).not.toContain(hf.job);
  });

  it('removes everything a ModelCache composed, everywhere, when it is deleted', { timeout: ENGINE_TEST_TIMEOUT }, async () => {
    for (const name of ['qwen', 'qwen-oci', 'qwen-pvc']) {
      kubectlOk('control-plane', ['delete', 'modelcache', name, '-n', NAMESPACE, '--wait=false']);
    }
    await eventually('no ModelCacheHydration left', () => list('control-plane', 'modelcachehydrations', NAMESPACE).length === 0);
    await eventually('no Object left', () => list('control-plane', 'objects.kubernetes.m.crossplane.io', NAMESPACE).length === 0, {
      describe: () => names(list('control-plane', 'objects.kubernetes.m.crossplane.io', NAMESPACE)).join(', '),
    });
    await eventually('no ModelCache left', () => list('control-plane', 'modelcaches', NAMESPACE).length === 0);
    for (const cluster of WORKLOAD_CLUSTERS) {
      const staged = remoteNames(cluster, 'pvc').filter((name) => name.startsWith('modelcache-'));
      expect(staged, `staged claims left on ${cluster}`).toEqual([]);
      expect(
        remoteNames(cluster, 'configmaps').filter((name) => name.startsWith('modelcache-')),
        `ConfigMaps left on ${cluster}`,
      ).toEqual([]);
      expect(remoteNames(cluster, 'secrets'), `Secrets left on ${cluster}`).toEqual([]);
      // A Job is orphaned, never deleted (as upstream does: a reconcile must not kill a download), so
      // what is left is a finished Job whose own TTL removes it; the cluster's TTL controller does.
      for (const job of list(cluster, 'jobs', REMOTE, ofStory(NAMESPACE))) {
        expect(getIn(job, 'spec', 'ttlSecondsAfterFinished'), getString(job, 'metadata', 'name')).toBe(180);
        expect(getIn(job, 'status', 'completionTime') ?? condition(job, 'Failed'), getString(job, 'metadata', 'name')).toBeDefined();
      }
      await eventually(`the finished Jobs' TTL to remove them from ${cluster}`, () => remoteNames(cluster, 'jobs').length === 0, {
        timeoutMs: 240_000,
        describe: () => remoteNames(cluster, 'jobs').join(', '),
      });
    }
    // The platform's own claim was only ever observed: it stays.
    expect(names(list('cluster-b', 'pvc', REMOTE))).toContain('qwen-weights');
  });
});
