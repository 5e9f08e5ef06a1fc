// An OCI model image on a real node (issue 28.4), on a plane with real nodes
// (`make e2e-nodes`): the hub's small repository pushed to the plane's
// registry as an image (its files in one layer), a ModelCache naming it by tag
// on cluster-b, whose real resolver Job (crane at RESOLVER_IMAGE's version,
// images/oci-tools/) resolves the tag to a digest from inside a pod; then a
// ModelReplica whose engine (the vLLM stand-in, with a DRA device) mounts the
// image, pinned to that digest, as an image volume that containerd pulls
// through the plane's registry, and reads it as a directory.
//
// On a plane without nodes it is skipped.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_MOUNT_PATH, REMOTE_NAMESPACE, asArray, getIn, getString, hydrationName, isObject } from '#lib';
import type { JsonObject } from '#lib';
import { sha256 } from '../support/fake-hub.js';
import { requireTool } from '../support/tools.js';
import { PLANE_HAS_NODES, removeStory } from './hub/client.js';
import { HUB_FILES } from './hub/repo.js';
import {
  ENGINE_STANDIN_IMAGE,
  apply,
  condition,
  eventually,
  getObject,
  inferenceCluster,
  kubectl,
  kubectlOk,
  list,
  reasonOf,
  setInferenceClusterStatus,
} from './plane.js';

const NAMESPACE = 'e2e-node-oci';
const CACHE = 'image';
const REPLICA = 'image-chat';
const CLUSTER = 'cluster-b';
const NODE = `${CLUSTER}-node`;
const POOL = 'e2e-standin';
/** The plane's registry as the host pushes to it, and as a pod names it (common.sh's REGISTRY_PORT, NODE_PLANE_ADDRESS). */
const PUSH_TO = '127.0.0.1:15000';
const REPOSITORY = '10.209.255.1:15000/modelplane-e2e/tiny-chat';
const TAG = 'v1';
const WAIT = { timeoutMs: 300_000 };
const expected = Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(f.content)]));

const hydration = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, CLUSTER), NAMESPACE);
const replica = (): JsonObject | undefined => getObject('control-plane', 'modelreplica', REPLICA, NAMESPACE);
const enginePods = (): JsonObject[] =>
  list(CLUSTER, 'pods', REMOTE_NAMESPACE).filter(
    (pod) =>
      (getString(pod, 'metadata', 'name') ?? '').startsWith(`${REPLICA}-`) &&
      asArray(getIn(pod, 'spec', 'containers')).some((c) => isObject(c) && c['image'] === ENGINE_STANDIN_IMAGE),
  );

/** The hub repository's files as a one-layer image in the plane's registry; its digest. */
function pushModelImage(): string {
  const crane = requireTool('CRANE');
  const work = mkdtempSync(join(tmpdir(), 'nodes-oci-'));
  try {
    for (const file of HUB_FILES) {
      mkdirSync(dirname(join(work, 'layer', file.path)), { recursive: true });
      writeFileSync(join(work, 'layer', file.path), file.content);
    }
    execFileSync('tar', [
      '-C',
      join(work, 'layer'),
      '--sort=name',
      '--mtime=@0',
      '--owner=0',
      '--group=0',
      '-cf',
      join(work, 'layer.tar'),
      '.',
    ]);
    const target = `${PUSH_TO}/modelplane-e2e/tiny-chat:${TAG}`;
    execFileSync(crane, ['append', '--oci-empty-base', '-f', join(work, 'layer.tar'), '-t', target], { stdio: 'pipe' });
    execFileSync(crane, ['mutate', target, '--set-platform', 'linux/amd64', '-t', target], { stdio: 'pipe' });
    return execFileSync(crane, ['digest', target], { encoding: 'utf8' }).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe.skipIf(!PLANE_HAS_NODES)('real pods on real nodes: an OCI model image, resolved by its Job and mounted as an image volume', () => {
  let digest = '';

  afterAll(async () => {
    kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--wait=false']);
    await eventually('the replica gone', () => list('control-plane', 'modelreplicas', NAMESPACE).length === 0, { timeoutMs: 180_000 });
    await removeStory(NAMESPACE);
    kubectl(CLUSTER, ['label', 'node', NODE, 'modelplane.ai/pool-']);
  });

  it('resolves the tag to its digest with the real resolver Job, from inside a pod on the node', async () => {
    digest = pushModelImage();
    kubectlOk(CLUSTER, ['label', 'node', NODE, `modelplane.ai/pool=${POOL}`, '--overwrite']);
    apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    apply('control-plane', inferenceCluster(CLUSTER, { 'modelplane.ai/node-oci': 'yes' }));
    setInferenceClusterStatus(CLUSTER, {
      providerConfigRef: { name: CLUSTER },
      cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
    });
    apply('control-plane', {
      apiVersion: 'modelplane.ai/v1alpha1',
      kind: 'ModelCache',
      metadata: { name: CACHE, namespace: NAMESPACE },
      spec: { source: 'OCI', oci: { ref: `${REPOSITORY}:${TAG}` }, clusterSelector: { matchLabels: { 'modelplane.ai/node-oci': 'yes' } } },
    });
    const ready = await eventually(
      'the cache Ready on cluster-b',
      () => (reasonOf(hydration(), 'ArtifactReady') === 'Staged' ? hydration() : undefined),
      {
        ...WAIT,
        describe: () => JSON.stringify(getIn(hydration(), 'status')),
      },
    );
    expect(getIn(ready, 'status', 'digest')).toBe(digest);
    // The resolver's pod ran on the node and succeeded (the Job may be gone inside its TTL: then its result stands for it).
    const resolverPods = list(CLUSTER, 'pods', REMOTE_NAMESPACE).filter((p) =>
      (getString(p, 'metadata', 'name') ?? '').includes('-resolve-'),
    );
    for (const pod of resolverPods) {
      expect(getIn(pod, 'spec', 'nodeName')).toBe(NODE);
      expect(getIn(pod, 'status', 'phase')).toBe('Succeeded');
    }
  });

  it(
    'mounts the image pinned to that digest in the engine pod, which reads every file of it',
    { timeout: 2 * WAIT.timeoutMs + 60_000 },
    async () => {
      apply('control-plane', {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelReplica',
        metadata: { name: REPLICA, namespace: NAMESPACE },
        spec: {
          clusterName: CLUSTER,
          modelCacheRef: { name: CACHE },
          serving: { mode: 'Unified' },
          engines: [
            {
              name: 'main',
              copies: 1,
              members: [
                {
                  role: 'Standalone',
                  nodePoolName: POOL,
                  deviceRequests: [{ name: 'gpu', deviceClassName: 'gpu.example.com', count: 1 }],
                  template: {
                    spec: { containers: [{ name: 'engine', image: ENGINE_STANDIN_IMAGE, args: ['--model=$(MODELPLANE_MODEL)'] }] },
                  },
                },
              ],
            },
          ],
        },
      });
      const pod = await eventually(
        'the engine pod Ready on cluster-b',
        () => enginePods().find((p) => getString(condition(p, 'Ready') ?? {}, 'status') === 'True'),
        { ...WAIT, describe: () => JSON.stringify(enginePods().map((p) => getIn(p, 'status'))) },
      );
      expect(getIn(pod, 'spec', 'nodeName')).toBe(NODE);
      const images = asArray(getIn(pod, 'spec', 'volumes'))
        .filter(isObject)
        .map((v) => getString(v, 'image', 'reference'))
        .filter(Boolean);
      expect(images).toEqual([`${REPOSITORY}@${digest}`]);
      await eventually('the replica Serving', () => reasonOf(replica(), 'ModelReady') === 'Serving', {
        ...WAIT,
        describe: () => JSON.stringify(getIn(replica(), 'status', 'conditions')),
      });

      const ip = getString(pod, 'status', 'podIP');
      const files = (await (await fetch(`http://${ip}:8000/files`)).json()) as JsonObject;
      expect(getIn(files, 'source')).toBe('directory');
      expect(getString(files, 'model')).toBe(CACHE_MOUNT_PATH);
      expect(asArray(getIn(files, 'devices'))).toHaveLength(1);
      const read = asArray(getIn(files, 'files'))
        .filter(isObject)
        .map((f) => [getString(f, 'path'), getString(f, 'sha256')]);
      expect(Object.fromEntries(read)).toEqual(expected);
    },
  );
});
