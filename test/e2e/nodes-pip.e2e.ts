// The pip path on a real node (issue 28.2), on a plane with real nodes
// (`make e2e`, docs/nodes.md): a HuggingFace ModelCache on the one
// InferenceCluster labelled modelplane.ai/e2e-install=pip, whose
// HydrationSettings (common.sh with_settings: a per-cluster override,
// install.pip with the plane's index) give its Job the stock Python image
// (STOCK_PYTHON_IMAGE; on this plane a stand-in built from Debian,
// images/python/). The Job's pod pip-installs the pinned huggingface_hub from
// the plane's package index (pypiserver from PyPI, pypiserver.sh) at start,
// then runs the script inline against the plane's hub; the claim on the
// node's disk holds the files.
//
// On a plane without nodes it is skipped.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HYDRATION_MOUNT_PATH,
  REMOTE_NAMESPACE,
  STOCK_PYTHON_IMAGE,
  asArray,
  cacheNames,
  getIn,
  getString,
  hydrationName,
  isObject,
} from '#lib';
import type { JsonObject } from '#lib';
import { HUGGINGFACE_HUB_VERSION, artifactOf, hubMarker } from '../../functions/compose-model-cache-hydration/src/huggingface.js';
import { sha256 } from '../support/fake-hub.js';
import { cacheStaged, removeStory, snapshotDir, volumeOnNode, weightGets } from './hub/client.js';
import { HUB_FILES, HUB_PIP_REPO, hubRevision } from './hub/repo.js';
import {
  PYPI_INDEX_URL,
  STATE_DIR,
  apply,
  condition,
  eventually,
  getObject,
  inferenceCluster,
  list,
  setInferenceClusterStatus,
  nodesPlane,
} from './plane.js';

const NAMESPACE = 'e2e-node-pip';
const CACHE = 'pip';
/** The story's InferenceCluster (a name of its own: it plays beside other stories) and its workload cluster. */
const CLUSTER = 'pip-b';
const WORKLOAD = 'cluster-b';
/** The label common.sh's HydrationSettings select the pip path by (PIP_CLUSTER_LABEL_KEY=PIP_CLUSTER_LABEL_VALUE). */
const INSTALL = { 'modelplane.ai/e2e-install': 'pip' };
const REMOTE = REMOTE_NAMESPACE;
const COMMIT = hubRevision().commit;
// sizeGiB given: no sizing Job, so the one pod that installs is the download's.
const SOURCE = { repo: HUB_PIP_REPO, revision: 'main', sizeGiB: 1 };
const remote = cacheNames(NAMESPACE, CACHE);
/** pypiserver's log (up.sh's start): one line a request, the wheel by its file name. */
const PYPI_LOG = join(STATE_DIR, 'logs', 'pypiserver.log');
const HUB_WHEEL = `huggingface_hub-${HUGGINGFACE_HUB_VERSION}-py3-none-any.whl`;
/** A pod's start, pip's install and a download, on two shared cores: minutes, not seconds. */
const WAIT = { timeoutMs: 300_000 };

const podsOf = (job: string): JsonObject[] => list(WORKLOAD, 'pods', REMOTE, `job-name=${job}`);
/** What pypiserver logged since `from` (a byte offset). */
const pypiLogSince = (from: number): string => readFileSync(PYPI_LOG).subarray(from).toString('utf8');

describe.skipIf(!nodesPlane('nodes-pip.e2e.ts'))(
  'the pip path on a real node: the stock Python image installs huggingface_hub from the plane’s index',
  () => {
    let logStart = 0;
    let job: JsonObject | undefined;
    let pods: JsonObject[] = [];

    afterAll(() => removeStory(NAMESPACE, [CLUSTER]));

    it('stages the cache on the cluster labelled for pip with its Job’s own pod', async () => {
      expect(getString(condition(getObject(WORKLOAD, 'node', `${WORKLOAD}-node`), 'Ready') ?? {}, 'status')).toBe('True');
      logStart = statSync(PYPI_LOG).size;
      apply('control-plane', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      apply('control-plane', inferenceCluster(CLUSTER, INSTALL));
      setInferenceClusterStatus(CLUSTER, {
        providerConfigRef: { name: WORKLOAD },
        cache: { storageClassName: 'modelplane-rwx', imageVolumes: true },
      });
      apply('control-plane', {
        apiVersion: 'modelplane.ai/v1alpha1',
        kind: 'ModelCache',
        metadata: { name: CACHE, namespace: NAMESPACE },
        spec: { source: 'HuggingFace', huggingFace: SOURCE, clusterSelector: { matchLabels: INSTALL } },
      });
      job = await eventually(
        `the hydration Job on ${WORKLOAD} Complete`,
        () => {
          const found = getObject(WORKLOAD, 'job', remote.job, REMOTE);
          return getString(condition(found, 'Complete') ?? {}, 'status') === 'True' ? found : undefined;
        },
        {
          ...WAIT,
          describe: () =>
            JSON.stringify({
              job: getIn(getObject(WORKLOAD, 'job', remote.job, REMOTE), 'status'),
              pods: podsOf(remote.job).map((p) => getIn(p, 'status')),
              hydration: getIn(
                getObject('control-plane', 'modelcachehydration', hydrationName(NAMESPACE, CACHE, CLUSTER), NAMESPACE),
                'status',
              ),
            }),
        },
      );
      pods = podsOf(remote.job);
    });

    it('ran the stock Python image on the node, with pip from the plane’s index in its command', () => {
      const container = asArray(getIn(job, 'spec', 'template', 'spec', 'containers')).filter(isObject)[0];
      expect(getString(container, 'image')).toBe(STOCK_PYTHON_IMAGE);
      const command = asArray(getIn(container, 'command')).map(String);
      expect(command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
      expect(command[2]).toContain(`pip install --quiet --disable-pip-version-check --index-url '${PYPI_INDEX_URL}'`);
      expect(command[2]).toContain(`'huggingface_hub==${HUGGINGFACE_HUB_VERSION}'`);
      const pod = pods.find((p) => getIn(p, 'status', 'phase') === 'Succeeded');
      expect(pod, `a Succeeded pod of ${remote.job}`).toBeDefined();
      expect(getIn(pod, 'spec', 'nodeName')).toBe(`${WORKLOAD}-node`);
      const [status] = asArray(getIn(pod, 'status', 'containerStatuses')).filter(isObject);
      // containerd reports the name it resolved: a name without a registry is Docker Hub's library.
      expect([STOCK_PYTHON_IMAGE, `docker.io/library/${STOCK_PYTHON_IMAGE}`]).toContain(getString(status, 'image'));
      expect(getIn(status, 'state', 'terminated', 'exitCode')).toBe(0);
    });

    it('fetched the pinned huggingface_hub wheel from pypiserver', () => {
      const log = pypiLogSince(logStart);
      expect(log).toMatch(/"GET \/simple\/huggingface-hub\/ HTTP\/1\.1" 200/);
      expect(log).toContain(`"GET /packages/${HUB_WHEEL} HTTP/1.1" 200`);
    });

    it('downloaded from the hub, and the cache is Ready on the cluster', async () => {
      // The history (since the hub started): a story in the other lane may reset the requests.
      expect(await weightGets(HUB_PIP_REPO, COMMIT, 'history')).not.toHaveLength(0);
      const cache = await cacheStaged(NAMESPACE, CACHE, WAIT);
      expect(getIn(cache, 'status', 'summary', 'ready')).toBe('1/1');
      const [entry] = asArray(getIn(cache, 'status', 'clusters')).filter(isObject);
      expect(entry).toMatchObject({ name: CLUSTER, phase: 'Ready' });
    });

    it("wrote every file and the marker on the claim, on the node's disk", () => {
      const { pvc, dir } = volumeOnNode(WORKLOAD, remote.pvc);
      expect(getIn(pvc, 'status', 'phase')).toBe('Bound');
      expect(dir.startsWith(join(STATE_DIR, 'nodes', WORKLOAD, 'volumes'))).toBe(true);
      const snapshot = snapshotDir(dir, HUB_PIP_REPO, COMMIT);
      expect(readdirSync(snapshot).sort()).toEqual(HUB_FILES.map((f) => f.path).sort());
      for (const file of HUB_FILES) expect(sha256(readFileSync(join(snapshot, file.path))), file.path).toBe(sha256(file.content));
      const marker = hubMarker(artifactOf(SOURCE)).slice(HYDRATION_MOUNT_PATH.length + 1);
      expect(JSON.parse(readFileSync(join(dir, marker), 'utf8')) as JsonObject).toMatchObject({ state: 'Verified', commit: COMMIT });
    });
  },
);
