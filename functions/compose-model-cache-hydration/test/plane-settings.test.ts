// The HydrationSettings `make up` writes into the packaged Composition with
// real nodes (common.sh's with_settings, MODELPLANE_UP_NODES=1), run here as
// it runs there: the function accepts them, every cluster downloads from the
// plane's hub, and a cluster labelled for the pip path (nodes-pip.e2e.ts) gets
// the stock Python image, which pip-installs the pinned huggingface_hub from
// the plane's package index (pypiserver) before the download. An OCI cache's
// resolver Job runs the default crane image (images/oci-tools/ builds it at
// that version) and the plane's own kubectl as its publisher.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HYDRATION_IMAGE, RESOLVER_IMAGE, STOCK_PYTHON_IMAGE, type JsonObject } from '#lib';
import { desiredResources, inferenceCluster, manifestOf } from '#testing';
import { HUGGINGFACE_HUB_VERSION, IMAGE_SCRIPT } from '../src/huggingface.js';
import { HF, hydration, resolved, run } from './support.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const PIP_LABEL = { 'modelplane.ai/e2e-install': 'pip' };
const INDEX_URL = 'http://10.209.255.1:15081/simple/';
const HUB_ENDPOINT = 'http://10.209.255.1:15080';
/** The kubectl the plane builds (tools/versions.env), on busybox: images/oci-tools/. */
const PLANE_KUBECTL = `registry.k8s.io/kubectl:${/^KUBERNETES_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, 'tools/versions.env'), 'utf8'))?.[1]}`;

/** The packaged Composition after with_settings, as up.sh builds it into the Configuration: its step's input. */
function planeInput(): JsonObject {
  const file = join(mkdtempSync(join(tmpdir(), 'plane-settings-')), 'composition.yaml');
  copyFileSync(join(ROOT, 'package/modelcachehydrations/composition.yaml'), file);
  execFileSync(
    'bash',
    [
      '-c',
      'set -euo pipefail; repo="$1"; source "$repo/test/e2e/control-plane/common.sh"; with_settings "$2" HydrationSettings',
      '-',
      ROOT,
      file,
    ],
    { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', MODELPLANE_UP_NODES: '1' }, stdio: 'pipe' },
  );
  const composition = parse(readFileSync(file, 'utf8')) as { spec: { pipeline: { input?: JsonObject }[] } };
  const input = composition.spec.pipeline[0]?.input;
  if (input === undefined) throw new Error('with_settings wrote no input');
  return input;
}

interface Container {
  image: string;
  command: string[];
  env: { name: string; value?: string }[];
}

async function hydrateContainer(input: JsonObject, labels: Record<string, string>): Promise<Container> {
  const cluster = inferenceCluster('cluster-b', { providerConfig: 'cluster-b-pc', storageClassName: 'modelplane-rwx', labels });
  const req = resolved({ xr: hydration(HF), cluster });
  req.input = input;
  const rsp = await run(req);
  expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
  const job = manifestOf(desiredResources(rsp)['hydrate']) as unknown as { spec: { template: { spec: { containers: Container[] } } } };
  return job.spec.template.spec.containers[0]!;
}

describe("make up's HydrationSettings with nodes (common.sh with_settings)", () => {
  const input = planeInput();

  it('are what the reference documents: the hub for every cluster, the pip path for the labelled ones', () => {
    expect(input).toEqual({
      apiVersion: 'fn.modelplane.ai/v1alpha1',
      kind: 'HydrationSettings',
      workloadNamespace: 'Shared',
      network: { hfEndpoint: HUB_ENDPOINT },
      images: { publisher: PLANE_KUBECTL },
      clusters: [{ clusterSelector: { matchLabels: PIP_LABEL }, install: { pip: true, indexUrl: INDEX_URL } }],
    });
  });

  it('give a cluster labelled modelplane.ai/e2e-install=pip the stock Python image, pip from the plane’s index', async () => {
    const container = await hydrateContainer(input, { ...PIP_LABEL, 'modelplane.ai/e2e': 'true' });
    expect(container.image).toBe(STOCK_PYTHON_IMAGE);
    expect(container.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    const pip = container.command[2]!.split('\n').find((line) => line.includes('pip install'));
    expect(pip).toMatch(
      new RegExp(
        `^if \\[ ! -f /mnt/artifact/\\.modelplane-hub-hydrated-[0-9a-f]{12} \\]; then pip install --quiet --disable-pip-version-check --index-url '${INDEX_URL}' --trusted-host '10\\.209\\.255\\.1:15081' 'huggingface_hub==${HUGGINGFACE_HUB_VERSION.replaceAll('.', '\\.')}'; fi$`,
      ),
    );
    expect(container.env.find((e) => e.name === 'HF_ENDPOINT')?.value).toBe(HUB_ENDPOINT);
  });

  it('leave every other cluster on the Modelplane hydration image, which installs nothing', async () => {
    const container = await hydrateContainer(input, { 'modelplane.ai/e2e-install': 'image' });
    expect(container.image).toBe(HYDRATION_IMAGE);
    expect(container.command.slice(0, 2)).toEqual(['python3', IMAGE_SCRIPT]);
    expect(container.command.join(' ')).not.toContain('pip');
    expect(container.env.find((e) => e.name === 'HF_ENDPOINT')?.value).toBe(HUB_ENDPOINT);
  });

  it('run an OCI cache’s resolver on the default crane image and the plane’s kubectl as its publisher', async () => {
    const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', imageVolumes: true });
    const req = resolved({ xr: hydration({ source: 'OCI', oci: { ref: '10.209.255.1:15000/modelplane-e2e/tiny-chat:v1' } }), cluster });
    req.input = input;
    const rsp = await run(req);
    expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
    const pod = (manifestOf(desiredResources(rsp)['resolve']) as unknown as { spec: { template: { spec: JsonObject } } }).spec.template
      .spec;
    const images = (key: string): [unknown, unknown][] =>
      ((pod[key] ?? []) as { name: string; image: string }[]).map((c) => [c.name, c.image]);
    expect(images('initContainers')).toEqual([['resolve', RESOLVER_IMAGE]]);
    expect(images('containers')).toEqual([['publish', PLANE_KUBECTL]]);
  });
});
