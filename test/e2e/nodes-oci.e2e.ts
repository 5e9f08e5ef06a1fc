// An OCI model image on a real node (issue 28.4), on a plane with real nodes
// (`make e2e`): the hub's small repository pushed to the plane's
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
import { requireTool } from '../support/tools.js';
import {
  ENGINE_TEST_TIMEOUT,
  ENGINE_WAIT as WAIT,
  HUB_FILE_SHAS,
  closeStory,
  engineFiles,
  nodeOf,
  openStory,
  readShas,
  servingPod,
  standinReplica,
} from './hub/engine.js';
import { HUB_FILES } from './hub/repo.js';
import { REGISTRY, apply, eventually, getObject, list, modelCache, reasonOf, nodesPlane } from './plane.js';

const NAMESPACE = 'e2e-node-oci';
const CACHE = 'image';
const REPLICA = 'image-chat';
const CLUSTER = 'cluster-b';
/** The story's InferenceCluster on it, a name of its own: the story plays beside others (docs/nodes.md, "Two lanes"). */
const INFERENCE_CLUSTER = 'oci-b';
const REPOSITORY = `${REGISTRY.pull}/modelplane-e2e/tiny-chat`;
const TAG = 'v1';

const hydration = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, INFERENCE_CLUSTER), NAMESPACE);
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
    const target = `${REGISTRY.push}/modelplane-e2e/tiny-chat:${TAG}`;
    execFileSync(crane, ['append', '--oci-empty-base', '-f', join(work, 'layer.tar'), '-t', target], { stdio: 'pipe' });
    execFileSync(crane, ['mutate', target, '--set-platform', 'linux/amd64', '-t', target], { stdio: 'pipe' });
    return execFileSync(crane, ['digest', target], { encoding: 'utf8' }).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe.skipIf(!nodesPlane('nodes-oci.e2e.ts'))(
  'real pods on real nodes: an OCI model image, resolved by its Job and mounted as an image volume',
  () => {
    let digest = '';

    afterAll(() => closeStory(NAMESPACE, REPLICA, CLUSTER, INFERENCE_CLUSTER));

    it('resolves the tag to its digest with the real resolver Job, from inside a pod on the node', async () => {
      digest = pushModelImage();
      openStory(NAMESPACE, CLUSTER, 'modelplane.ai/node-oci', INFERENCE_CLUSTER);
      apply(
        'control-plane',
        modelCache(NAMESPACE, CACHE, { source: 'OCI', oci: { ref: `${REPOSITORY}:${TAG}` } }, { 'modelplane.ai/node-oci': 'yes' }),
      );
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
        expect(getIn(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));
        expect(getIn(pod, 'status', 'phase')).toBe('Succeeded');
      }
    });

    it(
      'mounts the image pinned to that digest in the engine pod, which reads every file of it',
      { timeout: ENGINE_TEST_TIMEOUT },
      async () => {
        apply('control-plane', standinReplica(NAMESPACE, REPLICA, INFERENCE_CLUSTER, CACHE, ['--model=$(MODELPLANE_MODEL)']));
        const pod = await servingPod(NAMESPACE, REPLICA, CLUSTER);
        expect(getIn(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));
        const images = asArray(getIn(pod, 'spec', 'volumes'))
          .filter(isObject)
          .map((v) => getString(v, 'image', 'reference'))
          .filter(Boolean);
        expect(images).toEqual([`${REPOSITORY}@${digest}`]);

        const files = await engineFiles(pod);
        expect(getIn(files, 'source')).toBe('directory');
        expect(getString(files, 'model')).toBe(CACHE_MOUNT_PATH);
        expect(asArray(getIn(files, 'devices'))).toHaveLength(1);
        expect(readShas(files)).toEqual(HUB_FILE_SHAS);
      },
    );
  },
);
