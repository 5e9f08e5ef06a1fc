// The driver's two command lines: `render` (crossplane render's arguments and
// output, run from its bundle as `make render` runs it) and the examples tool
// behind make render / render-check / render-update, on a scratch repository.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fatalResult, newResponse, requireResources, selectByLabels, setCompositeStatus } from '#lib';
import { REPO_ROOT, startFakeFunction, type FakeFunction } from '#testing';
import { main, parseCommand, parseDuration } from './cli.js';
import { main as examplesMain } from './examples-cli.js';
import { parseYamlStream } from './yaml.js';

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

const XR_LINES = [
  'apiVersion: example.org/v1alpha1',
  'kind: XThing',
  'metadata:',
  '  name: thing',
  '  namespace: team',
  'spec:',
  '  tier: a100',
];
const COMPOSITION_LINES = [
  'apiVersion: apiextensions.crossplane.io/v1',
  'kind: Composition',
  'metadata:',
  '  name: things.example.org',
  'spec:',
  '  compositeTypeRef: {apiVersion: example.org/v1alpha1, kind: XThing}',
  '  mode: Pipeline',
  '  pipeline:',
  '  - step: only',
  '    functionRef: {name: fn}',
];
function functionLines(target: string): string[] {
  return [
    'apiVersion: pkg.crossplane.io/v1',
    'kind: Function',
    'metadata:',
    '  name: fn',
    '  annotations:',
    '    render.crossplane.io/runtime: Development',
    `    render.crossplane.io/runtime-development-target: ${target}`,
  ];
}

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['1m', 60_000],
    ['90s', 90_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(['', '10', '1x', '1m junk'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow('--timeout: invalid duration');
  });
});

describe('parseCommand', () => {
  it("maps render's flags onto the driver's options", () => {
    const command = parseCommand([
      'xr.yaml',
      'comp.yaml',
      'fns.yaml',
      '-o',
      'observed/',
      '--required-resources=req.yaml',
      '-x',
      '-r',
      '-c',
      '--context-values=example.org/env={"region": "eu"}',
      '-a',
      'render.crossplane.io/runtime-development-target=localhost:1',
      '--timeout=30s',
    ]);
    expect(command).toEqual({
      options: {
        compositeResource: 'xr.yaml',
        composition: 'comp.yaml',
        functions: 'fns.yaml',
        observedResources: 'observed/',
        requiredResources: 'req.yaml',
        includeFullXr: true,
        timeoutMs: 30_000,
        context: { 'example.org/env': { region: 'eu' } },
        functionAnnotations: { 'render.crossplane.io/runtime-development-target': 'localhost:1' },
      },
      includeFunctionResults: true,
      includeContext: true,
      help: false,
    });
  });
  it.each<[string[], string]>([
    [['xr.yaml'], 'expected <composite-resource> <composition> <functions> (got 1 argument)'],
    [['a', 'b', 'c', '--nope'], "Unknown option '--nope'"],
    [['a', 'b', 'c', '-a', 'novalue'], '--function-annotations: expected KEY=VALUE'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(message);
  });
});

describe('the render command', () => {
  let server: FakeFunction;
  let dir: string;
  beforeAll(async () => {
    server = await startFakeFunction((req) => {
      const rsp = newResponse(req);
      requireResources(rsp, { clusters: selectByLabels('example.org/v1alpha1', 'Cluster', { tier: 'a100' }) });
      const clusters = req.requiredResources['clusters']?.items ?? [];
      setCompositeStatus(rsp, { clusters: clusters.length });
      if (req.observed?.composite?.resource?.['spec'] === undefined) fatalResult(rsp, 'spec is required');
      return rsp;
    });
    dir = mkdtempSync(join(tmpdir(), 'render-cli-'));
    yamlFile(dir, 'xr.yaml', XR_LINES);
    yamlFile(dir, 'bad-xr.yaml', XR_LINES.slice(0, 5));
    yamlFile(dir, 'composition.yaml', COMPOSITION_LINES);
    yamlFile(dir, 'functions.yaml', functionLines(server.target));
    yamlFile(dir, 'required.yaml', [
      'apiVersion: example.org/v1alpha1',
      'kind: Cluster',
      'metadata: {name: a, labels: {tier: a100}}',
      '---',
      'apiVersion: example.org/v1alpha1',
      'kind: Cluster',
      'metadata: {name: b, labels: {tier: h100}}',
    ]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('prints the render as a YAML stream and exits 0', async () => {
    const { io, out, err } = capture();
    const code = await main(
      [join(dir, 'xr.yaml'), join(dir, 'composition.yaml'), join(dir, 'functions.yaml'), '-e', join(dir, 'required.yaml')],
      io,
    );
    expect(err()).toBe('');
    expect(code).toBe(0);
    expect(parseYamlStream(out(), 'stdout')).toEqual([
      {
        apiVersion: 'example.org/v1alpha1',
        kind: 'XThing',
        metadata: { name: 'thing', namespace: 'team' },
        status: {
          clusters: 1,
          conditions: [{ type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2024-01-01T00:00:00Z' }],
        },
      },
    ]);
  });

  it("exits 1 with render's wording when a step returns a Fatal result", async () => {
    const { io, err } = capture();
    const code = await main([join(dir, 'bad-xr.yaml'), join(dir, 'composition.yaml'), join(dir, 'functions.yaml')], io);
    expect(code).toBe(1);
    expect(err()).toBe('render: error: cannot render composite resource: pipeline step "only" returned a fatal result: spec is required\n');
  });

  it('exits 2 with the usage on bad arguments, 0 with --help', async () => {
    const bad = capture();
    expect(await main(['only-one.yaml'], bad.io)).toBe(2);
    expect(bad.err()).toContain('Usage: render <composite-resource> <composition> <functions>');
    const help = capture();
    expect(await main(['--help'], help.io)).toBe(0);
    expect(help.out()).toContain('--observed-resources');
  });

  it('runs from its bundle, as `make render` runs it', async () => {
    execFileSync(process.execPath, ['scripts/build-render.mjs'], { cwd: REPO_ROOT, stdio: 'pipe' });
    const bundle = join(REPO_ROOT, 'test/render/dist/render.mjs');
    const child = spawn(
      process.execPath,
      [bundle, join(dir, 'xr.yaml'), join(dir, 'composition.yaml'), join(dir, 'functions.yaml'), '-e', join(dir, 'required.yaml'), '-x'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(parseYamlStream(stdout, 'stdout')[0]).toMatchObject({ spec: { tier: 'a100' }, status: { clusters: 1 } });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => {
        resolve(port);
      });
    });
  });
}

describe('the examples tool (make render, render-check, render-update)', () => {
  const DRIVER = { PATH: process.env['PATH'] ?? '', RENDER_WITH: 'driver' };
  let root: string;
  let ports: number[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'render-examples-'));
    // The built servers of this checkout, as if they were built in the scratch repository.
    symlinkSync(join(REPO_ROOT, 'functions'), join(root, 'functions'));
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
    expect(await examplesMain([], io, root, DRIVER)).toBe(0);
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
    expect(await examplesMain([], printed.io, root, DRIVER)).toBe(0);
    expect(printed.out()).toContain(
      '# ==== examples/model-cache/first-compose ====\n---\napiVersion: modelplane.ai/v1alpha1\nkind: ModelCache\n',
    );
    expect(printed.err()).toContain("Rendering 1 example with the project's render driver");

    const missing = capture();
    expect(await examplesMain(['--check'], missing.io, root, DRIVER)).toBe(1);
    expect(missing.out()).toContain('MISSING  examples/model-cache/first-compose');
    expect(missing.err()).toContain('examples/model-cache/first-compose/expected.yaml is missing. Run `make render-update`');
    expect(missing.err()).not.toContain('intended');

    const updated = capture();
    expect(await examplesMain(['--update'], updated.io, root, DRIVER)).toBe(0);
    expect(updated.out()).toBe('wrote examples/model-cache/first-compose/expected.yaml\n');
    expect(existsSync(expected)).toBe(true);
    expect(readFileSync(expected, 'utf8')).toMatch(/^---\n# Written by `make render-update`/);

    const same = capture();
    expect(await examplesMain(['--check'], same.io, root, DRIVER)).toBe(0);
    expect(same.out()).toBe('ok       examples/model-cache/first-compose\n');

    writeFileSync(expected, readFileSync(expected, 'utf8').replace('name: qwen', 'name: llama'));
    const differs = capture();
    expect(await examplesMain(['--check'], differs.io, root, DRIVER)).toBe(1);
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
    expect(await examplesMain([], io, root, DRIVER)).toBe(1);
    expect(err()).toContain(
      'examples/model-replica/waiting: no Composition in package/ has compositeTypeRef modelplane.ai/v1alpha1 ModelReplica',
    );
  });

  it('says what to do when a port functions.yaml names is taken, and starts no server', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(ports[1], '127.0.0.1', resolve));
    try {
      const { io, err } = capture();
      expect(await examplesMain([], io, root, DRIVER)).toBe(1);
      expect(err()).toContain(
        `cannot start compose-model-cache-hydration on 127.0.0.1:${ports[1]!}: the port is taken. Is \`make run\` still running?`,
      );
    } finally {
      blocker.close();
    }
    // The server it had started on the first port was stopped: the port is free again.
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(ports[0], '127.0.0.1', resolve);
    });
    probe.close();
  });

  it('refuses RENDER_WITH=crossplane without the CLI, and unknown arguments', async () => {
    const noCli = capture();
    expect(await examplesMain([], noCli.io, root, { PATH: '/nonexistent', RENDER_WITH: 'crossplane' })).toBe(2);
    expect(noCli.err()).toContain('RENDER_WITH=crossplane, but there is no crossplane CLI on PATH');
    const bad = capture();
    expect(await examplesMain(['--frobnicate'], bad.io, root, DRIVER)).toBe(2);
  });
});
