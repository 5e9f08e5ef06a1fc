// The three Function packages: each package root's crossplane.yaml, and the
// one Dockerfile that builds every function's runtime image. The Dockerfile is
// parsed and checked (non-root user, the FUNCTION build argument, bases pinned
// by digest, an entrypoint that needs no flags), and its build stage is
// replayed here with only what it copies, to show the bundle it makes runs on
// its own.

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS_API_VERSION, SETTINGS_KIND, getString, getStringMap } from '#lib';
import {
  FUNCTION_NAMES,
  REPO_ROOT,
  functionClient,
  hydrationXr,
  modelCacheXr,
  replicaXr,
  startServer,
  type FunctionName,
  type TestResource,
} from '#testing';
import { glibcTunables, nodeOptions } from '../../scripts/node-options.mjs';
import { V8_FLAGS_AT_START } from '../../bench/runtime.js';
import { readYamlObject } from '../render/yaml.js';
import { FUNCTION_REGISTRY, INSTALLED_FUNCTION_NAMES, installedName } from './packaging.js';

const configuration = readYamlObject(join(REPO_ROOT, 'crossplane.yaml'));

/** The function input kind each function takes, if any. */
const INPUT_KINDS: Partial<Record<FunctionName, string>> = {
  'compose-model-cache-hydration': SETTINGS_KIND.hydration,
  'compose-model-replica': SETTINGS_KIND.replica,
};

describe.each(FUNCTION_NAMES.map((name) => [name]))('the %s Function package', (name) => {
  const root = join(REPO_ROOT, 'functions', name, 'package');
  const meta = readYamlObject(join(root, 'crossplane.yaml'));

  it('is a meta.pkg.crossplane.io/v1 Function named after the function', () => {
    expect(meta['apiVersion']).toBe('meta.pkg.crossplane.io/v1');
    expect(meta['kind']).toBe('Function');
    expect(getString(meta, 'metadata', 'name')).toBe(name);
  });

  it('carries maintainer, source, license, description and readme, as the Configuration does', () => {
    const annotations = getStringMap(meta, 'metadata', 'annotations');
    for (const key of ['maintainer', 'source', 'license', 'description', 'readme']) {
      expect(annotations[`meta.crossplane.io/${key}`]?.trim(), key).toBeTruthy();
    }
    expect(annotations['meta.crossplane.io/license']).toBe('Apache-2.0');
    const config = getStringMap(configuration, 'metadata', 'annotations');
    expect(annotations['meta.crossplane.io/source']).toBe(config['meta.crossplane.io/source']);
    expect(annotations['meta.crossplane.io/maintainer']).toBe(config['meta.crossplane.io/maintainer']);
    expect(annotations['meta.crossplane.io/readme']).toContain(`# ${name}`);
  });

  it('needs the Crossplane version the Configuration needs', () => {
    expect(getString(meta, 'spec', 'crossplane', 'version')).toBe(getString(configuration, 'spec', 'crossplane', 'version'));
  });

  it('is the package the Configuration depends on, installed under the name Compositions use', () => {
    expect(installedName(`${FUNCTION_REGISTRY}/${getString(meta, 'metadata', 'name') ?? ''}`)).toBe(INSTALLED_FUNCTION_NAMES[name]);
  });

  // The function input's schema, where the function takes one (docs/reference/hydrationsettings.md).
  const inputKind = INPUT_KINDS[name];

  it("holds its metadata and, when it takes an input, that input's CRD and nothing else (xpkg build packages every YAML file under the root)", () => {
    expect(readdirSync(root)).toEqual(inputKind === undefined ? ['crossplane.yaml'] : ['crossplane.yaml', 'input']);
    if (inputKind === undefined) return;
    const files = readdirSync(join(root, 'input'));
    expect(files).toEqual([`fn.modelplane.ai_${inputKind.toLowerCase()}.yaml`]);
    const crd = readYamlObject(join(root, 'input', files[0]!));
    expect(crd['kind']).toBe('CustomResourceDefinition');
    expect(getString(crd, 'spec', 'group')).toBe(SETTINGS_API_VERSION.split('/')[0]);
    expect(getString(crd, 'spec', 'names', 'kind')).toBe(inputKind);
    const versions = (crd['spec'] as { versions: { name: string; served: boolean; storage: boolean }[] }).versions;
    expect(versions.map((v) => [v.name, v.served, v.storage])).toEqual([[SETTINGS_API_VERSION.split('/')[1], true, true]]);
  });
});

// --- The Dockerfile -------------------------------------------------------------

interface Instruction {
  command: string;
  args: string;
  line: number;
}
interface Stage {
  from: string;
  platform?: string;
  alias?: string;
  instructions: Instruction[];
}
interface Dockerfile {
  /** ARGs before the first FROM, with their defaults. */
  globalArgs: Record<string, string | undefined>;
  stages: Stage[];
}

/** Instructions with continuation lines joined and comments dropped (parser directives included). */
function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === undefined && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== undefined && line.trimStart().startsWith('#')) return;
    const continued = line.endsWith('\\');
    const body = continued ? line.slice(0, -1) : line;
    pending =
      pending === undefined ? { text: body.trim(), line: index + 1 } : { text: `${pending.text} ${body.trim()}`, line: pending.line };
    if (!continued) {
      const [command = '', ...rest] = pending.text.split(/\s+/);
      instructions.push({ command: command.toUpperCase(), args: rest.join(' '), line: pending.line });
      pending = undefined;
    }
  });
  const result: Dockerfile = { globalArgs: {}, stages: [] };
  for (const instruction of instructions) {
    if (instruction.command === 'FROM') {
      const words = instruction.args.split(/\s+/);
      const platform = words.find((w) => w.startsWith('--platform='))?.slice('--platform='.length);
      const rest = words.filter((w) => !w.startsWith('--'));
      const stage: Stage = { from: rest[0] ?? '', instructions: [] };
      if (platform !== undefined) stage.platform = platform;
      if (rest[1]?.toUpperCase() === 'AS' && rest[2]) stage.alias = rest[2];
      result.stages.push(stage);
    } else if (result.stages.length === 0) {
      if (instruction.command !== 'ARG') throw new Error(`line ${instruction.line}: ${instruction.command} before the first FROM`);
      const [key, value] = instruction.args.split('=', 2) as [string, string | undefined];
      result.globalArgs[key] = value;
    } else {
      result.stages.at(-1)!.instructions.push(instruction);
    }
  }
  return result;
}

/** A FROM reference with ${ARG}s replaced by the global ARG defaults. */
function resolve(reference: string, args: Record<string, string | undefined>): string {
  return reference.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_match, name: string) => args[name] ?? '');
}

/** What .dockerignore keeps out of functions/: build outputs, tests, package metadata. */
const DOCKERIGNORED = /^functions\/[^/]+\/(dist|test|package)(\/|$)/;

const PINNED = /^[a-z0-9.\-/]+(?::[A-Za-z0-9._-]+)?@sha256:[0-9a-f]{64}$/;

describe('the Dockerfile', () => {
  const text = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const dockerfile = parseDockerfile(text);
  const [build, runtime] = dockerfile.stages;
  const commands = (stage: Stage | undefined, command: string) =>
    (stage?.instructions ?? []).filter((i) => i.command === command).map((i) => i.args);

  it('has two stages: a build and a runtime', () => {
    expect(dockerfile.stages).toHaveLength(2);
    expect(build?.alias).toBe('build');
  });

  it('pins both bases by digest (with a readable tag)', () => {
    for (const stage of dockerfile.stages) expect(resolve(stage.from, dockerfile.globalArgs)).toMatch(PINNED);
  });

  it('builds and runs on the Node major the project pins (tools/versions.env), distroless or slim', () => {
    const pinned = /^NODE_VERSION=(\d+)\.\d+\.\d+$/m.exec(readFileSync(join(REPO_ROOT, 'tools/versions.env'), 'utf8'));
    const major = pinned?.[1];
    expect(major, 'NODE_VERSION in tools/versions.env').toMatch(/^\d+$/);
    expect(resolve(build!.from, dockerfile.globalArgs)).toMatch(new RegExp(`^node:${major}\\.\\d+\\.\\d+-\\w+-slim@`));
    expect(resolve(runtime!.from, dockerfile.globalArgs)).toMatch(
      new RegExp(`^(gcr\\.io/distroless/nodejs${major}-debian\\d+(:nonroot)?|node:${major}\\.\\d+\\.\\d+-\\w+-slim)@`),
    );
    // package.json's engines admit the pinned Node and no other major.
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(new RegExp(`^>=${major}\\.\\d+\\.\\d+ <${Number(major) + 1}$`));
  });

  it('builds the function the FUNCTION build argument names: npm ci, then build.mjs for that function only', () => {
    expect(commands(build, 'ARG')).toContain('FUNCTION');
    expect(commands(runtime, 'ARG')).toContain('FUNCTION');
    const runs = commands(build, 'RUN');
    expect(runs.some((r) => /^npm ci\b/.test(r))).toBe(true);
    expect(runs).toContain('node scripts/build.mjs "$FUNCTION"');
    // An empty FUNCTION would build all three: it is refused first.
    expect(runs.findIndex((r) => r.includes('test -n "$FUNCTION"'))).toBe(0);
  });

  it('puts only the bundle (and its licence notices) in the runtime image, and runs nothing there', () => {
    expect(commands(runtime, 'RUN')).toEqual([]);
    expect(commands(runtime, 'COPY')).toEqual([
      '--from=build /src/functions/${FUNCTION}/dist/main.js /function/main.js',
      '--from=build /src/functions/${FUNCTION}/dist/main.js.LEGAL.txt /function/THIRD_PARTY_NOTICES.txt',
    ]);
    expect(commands(runtime, 'VOLUME')).toEqual([]);
  });

  it("runs Node with the function's flags: NODE_OPTIONS from the build argument make images passes", () => {
    expect(commands(runtime, 'ARG')).toContain('NODE_OPTIONS=""');
    expect(commands(runtime, 'ENV')).toContain('NODE_OPTIONS=${NODE_OPTIONS}');
    // Not in the build stage: npm ci and the bundler run with Node's defaults.
    expect(commands(build, 'ARG')).not.toContain('NODE_OPTIONS=""');
  });

  it.each(FUNCTION_NAMES.map((name) => [name]))("%s's node-options are flags Node takes as NODE_OPTIONS", (name) => {
    const flags = nodeOptions(name, REPO_ROOT).join(' ');
    // Node refuses, exiting non-zero, a flag it does not know or does not allow in NODE_OPTIONS.
    const out = execFileSync(process.execPath, ['-e', 'process.stdout.write("ok")'], {
      env: { ...process.env, NODE_OPTIONS: flags },
      encoding: 'utf8',
    });
    expect(out).toBe('ok');
  });

  it("runs glibc with the function's allocator settings: GLIBC_TUNABLES from the build argument make images passes", () => {
    // Empty by default: an empty GLIBC_TUNABLES sets nothing.
    expect(commands(runtime, 'ARG')).toContain('GLIBC_TUNABLES=""');
    expect(commands(runtime, 'ENV')).toContain('GLIBC_TUNABLES=${GLIBC_TUNABLES}');
    expect(commands(build, 'ARG')).not.toContain('GLIBC_TUNABLES=""');
  });

  // Only the functions that have any: for the others there is nothing to check.
  const withTunables = FUNCTION_NAMES.filter((name) => glibcTunables(name, REPO_ROOT) !== '');
  it.each(withTunables.map((name) => [name]))("%s's glibc-tunables are tunables glibc knows", (name) => {
    const tunables = glibcTunables(name, REPO_ROOT);
    // glibc ignores a tunable it does not know without a word; its dynamic loader lists those it knows.
    const loader = ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1'].find((path) => existsSync(path));
    expect(loader, 'a glibc dynamic loader').toBeDefined();
    const known = execFileSync(loader!, ['--list-tunables'], { encoding: 'utf8' });
    for (const tunable of tunables.split(':')) expect(known).toContain(`${tunable.slice(0, tunable.indexOf('='))}:`);
  });

  const withV8Flags = FUNCTION_NAMES.filter((name) => (V8_FLAGS_AT_START[name] ?? []).length > 0);
  it.each(withV8Flags.map((name) => [name]))('%s sets on itself only V8 flags that V8 knows and NODE_OPTIONS refuses', (name) => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of V8_FLAGS_AT_START[name]!) {
      const bare = flag.slice(2, flag.includes('=') ? flag.indexOf('=') : undefined);
      expect(known).toContain(`--${bare} `);
      // Were NODE_OPTIONS to take it, it would belong in node-options, which the image sets before V8 starts.
      expect(process.allowedNodeEnvironmentFlags.has(`--${bare}`)).toBe(false);
    }
  });

  it('runs as the non-root UID and GID 2000', () => {
    expect(commands(runtime, 'USER')).toEqual(['2000:2000']);
  });

  it('listens on 9443 and starts with no flags: TLS from /tls/server, as Crossplane mounts it', () => {
    expect(commands(runtime, 'EXPOSE')).toEqual(['9443']);
    expect(commands(runtime, 'ENV')).toContain('TLS_SERVER_CERTS_DIR=/tls/server');
    expect(commands(runtime, 'CMD')).toEqual([]);
    const entrypoints = commands(runtime, 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    const argv = JSON.parse(entrypoints[0]!) as string[];
    expect(argv).toEqual(['/nodejs/bin/node', '/function/main.js']);
    expect(argv.filter((arg) => arg.startsWith('-'))).toEqual([]);
  });

  it('sends the build context everything the build stage copies, and nothing else that matters', () => {
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');
    const copied = commands(build, 'COPY').flatMap((args) => args.split(/\s+/).slice(0, -1));
    for (const path of copied) expect(ignore, path).toMatch(new RegExp(`^!${path.replace(/[.*/]/g, (c) => `\\${c}`)}$`, 'm'));
    expect(ignore).toMatch(/^\*\*$/m);
    // The replay below leaves out the same, so it shows the build needs none of them.
    for (const excluded of ['functions/*/dist/', 'functions/*/test/', 'functions/*/package/'])
      expect(ignore.split('\n')).toContain(excluded);
  });

  describe('its build stage, replayed with only what it copies', () => {
    // The stage's working directory, holding exactly the COPY sources, with this checkout's node_modules for `npm ci`.
    const work = mkdtempSync(join(tmpdir(), 'docker-build-'));
    for (const args of commands(build, 'COPY')) {
      const parts = args.split(/\s+/);
      const destination = parts.at(-1)!;
      for (const source of parts.slice(0, -1)) {
        // Docker's COPY: a directory's contents go into the destination; a file into it (trailing /) or as it.
        const isDir = statSync(join(REPO_ROOT, source)).isDirectory();
        const target = isDir || !destination.endsWith('/') ? join(work, destination) : join(work, destination, basename(source));
        mkdirSync(isDir ? target : dirname(target), { recursive: true });
        cpSync(join(REPO_ROOT, source), target, { recursive: true, filter: (src) => !DOCKERIGNORED.test(relative(REPO_ROOT, src)) });
      }
    }
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(work, 'node_modules'));

    const requests: Record<FunctionName, TestResource> = {
      'compose-model-cache': modelCacheXr(),
      'compose-model-cache-hydration': hydrationXr(),
      'compose-model-replica': replicaXr(),
    };

    it.each(FUNCTION_NAMES.map((name) => [name]))(
      'builds %s into one file of our own source that serves on its own, writing nothing',
      async (name) => {
        execFileSync(process.execPath, ['scripts/build.mjs', name], { cwd: work, stdio: 'pipe' });
        // The runtime speaks gRPC and protobuf itself; the SDK's module that holds
        // the generated codecs would bring gRPC-js, protobufjs and pino (a bundle
        // ten times the size, loaded and never called). Only its types may be used.
        const map = JSON.parse(readFileSync(join(work, 'functions', name, 'dist', 'main.js.map'), 'utf8')) as { sources: string[] };
        expect(map.sources.filter((source) => source.includes('node_modules'))).toEqual([]);
        expect(map.sources.length).toBeGreaterThan(10);
        expect(readFileSync(join(work, 'functions', name, 'dist', 'main.js.LEGAL.txt'), 'utf8')).toContain('no third-party code');
        // The runtime image: /function/main.js and nothing else, no node_modules anywhere near.
        const image = mkdtempSync(join(tmpdir(), 'runtime-image-'));
        mkdirSync(join(image, 'functions', name, 'dist'), { recursive: true });
        cpSync(join(work, 'functions', name, 'dist', 'main.js'), join(image, 'functions', name, 'dist', 'main.js'));
        const before = readdirSync(image, { recursive: true }).sort();
        const server = await startServer(name, { root: image });
        const client = functionClient(server.address);
        try {
          const rsp = await client.run({ meta: { tag: 'image' }, observed: { composite: requests[name] } });
          expect(rsp.meta.tag).toBe('image');
          expect(rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL')).toEqual([]);
        } finally {
          client.close();
          await server.stop();
        }
        expect(readdirSync(image, { recursive: true }).sort()).toEqual(before);
      },
    );
  });
});
