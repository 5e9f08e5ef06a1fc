// A PersistentVolumeClaim source on a real node (issue 28.4), on a plane with
// real nodes (`make e2e`): a claim a team filled themselves (bound by
// local-path-provisioner on cluster-c, the model's files written into its
// volume's directory on the node, as any out-of-band copy would), a ModelCache
// that names it, and a ModelReplica whose engine (the vLLM stand-in, with a DRA
// device) mounts the claim through the cache's mount contract and reads the
// model as a directory (`--model=$(MODELPLANE_MODEL)`). Nothing of the claim is
// ours: deleting the cache and the replica leaves it, same uid, same files.
//
// On a plane without nodes it is skipped.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REMOTE_NAMESPACE, asArray, getIn, getString, hydrationName, isObject, modelDirectory } from '#lib';
import type { JsonObject } from '#lib';
import { sha256 } from '../support/fake-hub.js';
import { volumeOnNode } from './hub/client.js';
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
  standinPods,
  standinReplica,
} from './hub/engine.js';
import { HUB_FILES } from './hub/repo.js';
import { apply, engineDeployments, eventually, getObject, kubectl, list, modelCache, reasonOf, nodesPlane } from './plane.js';

const NAMESPACE = 'e2e-node-claim';
const CACHE = 'filled';
const REPLICA = 'filled-chat';
const CLUSTER = 'cluster-c';
/** The story's InferenceCluster on it, a name of its own: the story plays beside others (docs/nodes.md, "Two lanes"). */
const INFERENCE_CLUSTER = 'claim-c';
/** The team's own claim in the workload namespace, and the directory in it that holds the model. */
const CLAIM = 'team-weights';
const SUB_PATH = 'tiny-chat';

const hydration = (): JsonObject | undefined =>
  getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, INFERENCE_CLUSTER), NAMESPACE);
const filesOnDisk = (dir: string): Record<string, string> =>
  Object.fromEntries(HUB_FILES.map((f) => [f.path, sha256(readFileSync(join(dir, SUB_PATH, f.path)))]));

describe.skipIf(!nodesPlane('nodes-claim.e2e.ts'))(
  'real pods on real nodes: an engine reads a team’s own claim through the mount contract',
  () => {
    let claimUid: string | undefined;
    let volumeDir = '';

    afterAll(async () => {
      await closeStory(NAMESPACE, REPLICA, CLUSTER, INFERENCE_CLUSTER);
      kubectl(CLUSTER, ['delete', 'pvc', CLAIM, '-n', REMOTE_NAMESPACE, '--ignore-not-found', '--wait=false']);
    });

    it('observes a claim the team filled, and says the cache is Ready on that cluster', async () => {
      openStory(NAMESPACE, CLUSTER, 'modelplane.ai/node-claim', INFERENCE_CLUSTER);
      apply(CLUSTER, {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: CLAIM, namespace: REMOTE_NAMESPACE },
        spec: { storageClassName: 'modelplane-rwx', accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } } },
      });
      const volume = await eventually('the team’s claim Bound', () => {
        const found = volumeOnNode(CLUSTER, CLAIM);
        return getString(found.pvc, 'status', 'phase') === 'Bound' && found.dir !== '' ? found : undefined;
      });
      claimUid = getString(volume.pvc, 'metadata', 'uid');
      volumeDir = volume.dir;
      for (const file of HUB_FILES) {
        const path = join(volumeDir, SUB_PATH, file.path);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, file.content);
      }

      apply(
        'control-plane',
        modelCache(
          NAMESPACE,
          CACHE,
          { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: CLAIM, subPath: SUB_PATH } },
          { 'modelplane.ai/node-claim': 'yes' },
        ),
      );
      await eventually('the cache Ready on cluster-c', () => reasonOf(hydration(), 'ArtifactReady') === 'Staged', {
        ...WAIT,
        describe: () => JSON.stringify(getIn(hydration(), 'status')),
      });
      // Observed, not composed: no Job ran on the cluster for it.
      expect(list(CLUSTER, 'jobs', REMOTE_NAMESPACE).filter((j) => (getString(j, 'metadata', 'name') ?? '').includes(CACHE))).toEqual([]);
    });

    it(
      'schedules the engine with its device onto the node, and it reads the claim’s directory',
      { timeout: ENGINE_TEST_TIMEOUT },
      async () => {
        // A directory: vLLM reads it as it is (no revision).
        apply('control-plane', standinReplica(NAMESPACE, REPLICA, INFERENCE_CLUSTER, CACHE, ['--model=$(MODELPLANE_MODEL)']));
        const pod = await servingPod(NAMESPACE, REPLICA, CLUSTER);
        expect(getIn(pod, 'spec', 'nodeName')).toBe(nodeOf(CLUSTER));
        // The team's claim itself, mounted read-only at the contract's directory.
        const volumes = asArray(getIn(pod, 'spec', 'volumes')).filter(isObject);
        expect(volumes.map((v) => getString(v, 'persistentVolumeClaim', 'claimName')).filter(Boolean)).toEqual([CLAIM]);
        expect(engineDeployments(CLUSTER, REPLICA)).toHaveLength(1);

        const files = await engineFiles(pod);
        expect(getIn(files, 'source')).toBe('directory');
        expect(getString(files, 'model')).toBe(modelDirectory(SUB_PATH));
        expect(asArray(getIn(files, 'devices'))).toHaveLength(1);
        expect(readShas(files)).toEqual(HUB_FILE_SHAS);
      },
    );

    it('leaves the team’s claim and its files as they were once the cache and the replica are gone', async () => {
      kubectl('control-plane', ['delete', 'modelreplica', REPLICA, '-n', NAMESPACE, '--wait=false']);
      kubectl('control-plane', ['delete', 'modelcache', CACHE, '-n', NAMESPACE, '--wait=false']);
      await eventually(
        'the replica and the cache gone',
        () => ['modelreplicas', 'modelcaches', 'modelcachehydrations'].every((kind) => list('control-plane', kind, NAMESPACE).length === 0),
        { timeoutMs: 180_000 },
      );
      await eventually('no engine pod left on cluster-c', () => standinPods(CLUSTER, REPLICA).length === 0, { timeoutMs: 120_000 });
      const after = volumeOnNode(CLUSTER, CLAIM);
      expect(getString(after.pvc, 'metadata', 'uid')).toBe(claimUid);
      expect(getString(after.pvc, 'status', 'phase')).toBe('Bound');
      expect(filesOnDisk(volumeDir)).toEqual(HUB_FILE_SHAS);
    });
  },
);
