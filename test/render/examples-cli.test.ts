// The examples tool behind make render / render-check / render-update, run on
// a scratch repository with the real `crossplane render` (the pinned CLI of
// tools/versions.env, found through tools/build.sh).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, freePort } from '#testing';
import { main as examplesMain } from './examples-cli.js';

function capture(): { io: { stdout: (t: string) => void; stderr: (t: string) => void }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: {
      stdout: (text) => (out += text),
      stderr: (text) => (err += text),
    },
    out: () => out,
    err: () => err,
  };
}

function yamlFile(dir: string, name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('the examples tool (make render, render-check, render-update)', () => {
  let root: string;
  let ports: number[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'render-examples-'));
    // The built servers of this checkout, as if they were built in the scratch repository.
    symlinkSync(join(REPO_ROOT, 'functions'), join(root, 'functions'));
    // And the pinned tools: tools/build.sh says where the CLI is.
    symlinkSync(join(REPO_ROOT, 'tools'), join(root, 'tools'));
    mkdirSync(join(root, 'examples'));
    ports = [await freePort(), await freePort(), await freePort()];
    const names = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'];
    yamlFile(
      root,
      'examples/functions.yaml',
      names.flatMap((name, i) => [
        ...(i > 0 ? ['---'] : []),
        'apiVersion: pkg.crossplane.io/v1',
        'kind: Function',
        'metadata:',
        `  name: modelplane-${name}`,
        '  annotations:',
        '    render.crossplane.io/runtime: Development',
        `    render.crossplane.io/runtime-development-target: localhost:${ports[i]!}`,
        'spec:',
        `  package: xpkg.upbound.io/modelplane/${name}:v0.1.0`,
      ]),
    );
  });

  it('says there is nothing to render when there are no examples, and succeeds', async () => {
    const { io, out } = capture();
    expect(await examplesMain([], io, root)).toBe(0);
    expect(out()).toContain('No examples yet');
  });

  it('prints, checks and updates renders of every example', async () => {
    mkdirSync(join(root, 'package/modelcaches'), { recursive: true });
    yamlFile(root, 'package/modelcaches/composition.yaml', [
      'apiVersion: apiextensions.crossplane.io/v1',
      'kind: Composition',
      'metadata: {name: modelcaches.modelplane.ai}',
      'spec:',
      '  compositeTypeRef: {apiVersion: modelplane.ai/v1alpha1, kind: ModelCache}',
      '  mode: Pipeline',
      '  pipeline:',
      '  - step: compose-model-cache',
      '    functionRef: {name: modelplane-compose-model-cache}',
    ]);
    mkdirSync(join(root, 'examples/model-cache/first-compose'), { recursive: true });
    yamlFile(root, 'examples/model-cache/first-compose/xr.yaml', [
      'apiVersion: modelplane.ai/v1alpha1',
      'kind: ModelCache',
      'metadata: {name: qwen, namespace: ml-team}',
      'spec:',
      '  source: HuggingFace',
      '  huggingFace: {repo: Qwen/Qwen3-0.6B, sizeGiB: 20}',
      '  clusterSelector: {matchLabels: {modelplane.ai/tier: a100}}',
    ]);
    const expected = join(root, 'examples/model-cache/first-compose/expected.yaml');

    const printed = capture();
    expect(await examplesMain([], printed.io, root)).toBe(0);
    expect(printed.out()).toContain(
      '# ==== examples/model-cache/first-compose ====\n---\napiVersion: modelplane.ai/v1alpha1\nkind: ModelCache\n',
    );
    expect(printed.err()).toMatch(/^Rendering 1 example with \/.*\/crossplane render\.$/m);

    const missing = capture();
    expect(await examplesMain(['--check'], missing.io, root)).toBe(1);
    expect(missing.out()).toContain('MISSING  examples/model-cache/first-compose');
    expect(missing.err()).toContain('examples/model-cache/first-compose/expected.yaml is missing. Run `make render-update`');
    expect(missing.err()).not.toContain('intended');

    const updated = capture();
    expect(await examplesMain(['--update'], updated.io, root)).toBe(0);
    expect(updated.out()).toBe('wrote examples/model-cache/first-compose/expected.yaml\n');
    expect(existsSync(expected)).toBe(true);
    expect(readFileSync(expected, 'utf8')).toMatch(/^---\n# Written by `make render-update`/);

    const same = capture();
    expect(await examplesMain(['--check'], same.io, root)).toBe(0);
    expect(same.out()).toBe('ok       examples/model-cache/first-compose\n');

    writeFileSync(expected, readFileSync(expected, 'utf8').replace('name: qwen', 'name: llama'));
    const differs = capture();
    expect(await examplesMain(['--check'], differs.io, root)).toBe(1);
    expect(differs.out()).toContain('DIFFERS  examples/model-cache/first-compose');
    expect(differs.err()).toContain('-   name: llama\n+   name: qwen');
    expect(differs.err()).toContain('If the changes are intended, run `make render-update`');
  });

  it('fails clearly when an example has no Composition in package/', async () => {
    mkdirSync(join(root, 'examples/model-replica/waiting'), { recursive: true });
    yamlFile(root, 'examples/model-replica/waiting/xr.yaml', [
      'apiVersion: modelplane.ai/v1alpha1',
      'kind: ModelReplica',
      'metadata: {name: r, namespace: ml-team}',
      'spec: {}',
    ]);
    const { io, err } = capture();
    expect(await examplesMain([], io, root)).toBe(1);
    expect(err()).toContain(
      'examples/model-replica/waiting: no Composition in package/ has compositeTypeRef modelplane.ai/v1alpha1 ModelReplica',
    );
  });

  it('renders on ephemeral ports, so it runs while `make run` or `make up` holds the ports functions.yaml names', async () => {
    const blockers = await Promise.all(
      ports.map(async (port) => {
        const blocker = createServer();
        await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
        return blocker;
      }),
    );
    try {
      const { io, out, err } = capture();
      await examplesMain(['--check'], io, root);
      // (An example an earlier test left without a Composition still fails; every other one renders.)
      expect(out()).toMatch(/^(ok {7}|DIFFERS {2})examples\//m);
      expect(err()).not.toMatch(/port is taken|address already in use/);
    } finally {
      for (const blocker of blockers) blocker.close();
    }
  });

  it('refuses unknown arguments', async () => {
    const bad = capture();
    expect(await examplesMain(['--frobnicate'], bad.io, root)).toBe(2);
    expect(bad.err()).toBe('usage: examples.mjs [--check | --update]\n');
  });
});
