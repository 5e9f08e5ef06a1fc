// `make images` and `make xpkg` (scripts/package.mjs), with stand-in docker,
// buildah and crossplane commands on a PATH of our making: what each runs when
// the tool is there, and what each says (exiting non-zero) when it is not.

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, REPO_ROOT } from '#testing';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each call a stand-in tool received: its name and arguments. */
  calls: string[];
}

/**
 * Run the script with PATH holding only stand-ins. Each stand-in logs its
 * arguments, then exits with the code `exits` gives for its first argument.
 */
function runScript(command: string, tools: Record<string, Record<string, number>>, env: Record<string, string> = {}): Run {
  const bin = mkdtempSync(join(tmpdir(), 'fake-bin-'));
  const log = join(bin, 'calls.log');
  for (const [tool, exits] of Object.entries(tools)) {
    const cases = Object.entries(exits)
      .map(([arg, code]) => `  ${arg}) echo "${tool} is failing on purpose" >&2; exit ${code} ;;`)
      .join('\n');
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> "${log}"\ncase "$1" in\n${cases}\nesac\nexit 0\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  const result = spawnSync(process.execPath, ['scripts/package.mjs', command], {
    cwd: REPO_ROOT,
    env: { PATH: bin, OUTPUT_DIR: join(bin, 'out'), ...env },
    encoding: 'utf8',
  });
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    calls: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [],
  };
}

/** Each function's Node flags, as functions/<name>/node-options give them: the image's NODE_OPTIONS. */
const NODE_OPTIONS: Record<string, string> = {
  'compose-model-cache': '--max-semi-space-size=1',
  'compose-model-cache-hydration': '--max-semi-space-size=1',
  'compose-model-replica': '--max-semi-space-size=1',
};
/** And its allocator settings, as functions/<name>/glibc-tunables give them: the image's GLIBC_TUNABLES. */
const GLIBC_TUNABLES: Record<string, string> = {
  'compose-model-cache': 'glibc.malloc.mmap_threshold=16384',
  'compose-model-cache-hydration': '',
  'compose-model-replica': '',
};
const buildArgs = (fn: string): string =>
  `--build-arg FUNCTION=${fn} --build-arg NODE_OPTIONS=${NODE_OPTIONS[fn]} --build-arg GLIBC_TUNABLES=${GLIBC_TUNABLES[fn]}`;

describe('make images', () => {
  it('explains, and exits non-zero, when neither docker nor buildah is installed', () => {
    const run = runScript('images', {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('make images needs a container image builder, and none is usable here:');
    expect(run.stderr).toContain('docker:  not found on PATH');
    expect(run.stderr).toContain('buildah: not found on PATH');
    expect(run.stderr).toContain('https://docs.docker.com/engine/install/');
  });

  it('explains when docker is installed but no engine answers', () => {
    const run = runScript('images', { docker: { info: 1 } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/docker: {2}found at .*\/docker, but it cannot reach a Docker engine \(docker is failing on purpose\)/);
    expect(run.calls).toEqual(['docker info --format {{.ServerVersion}}']);
  });

  it('builds and saves each image with docker when its engine answers', () => {
    const run = runScript('images', { docker: {} }, { REGISTRY: 'registry.example.org/team', VERSION: 'v9.9.9' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.calls).toEqual([
      'docker info --format {{.ServerVersion}}',
      ...FUNCTION_NAMES.flatMap((fn): unknown[] => [
        `docker build ${buildArgs(fn)} -t registry.example.org/team/${fn}:v9.9.9 -f Dockerfile .`,
        expect.stringMatching(new RegExp(`^docker save -o .*/out/images/${fn}\\.tar registry\\.example\\.org/team/${fn}:v9\\.9\\.9$`)),
      ]),
    ]);
  });

  it('falls back to buildah, pushing each image to a docker-archive for make xpkg', () => {
    const run = runScript('images', { docker: { info: 1 }, buildah: {} });
    expect(run.code).toBe(0);
    const version = `v${(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
    expect(run.calls.slice(1)).toEqual(
      FUNCTION_NAMES.flatMap((fn): unknown[] => [
        `buildah build ${buildArgs(fn)} -t xpkg.upbound.io/modelplane/${fn}:${version} -f Dockerfile .`,
        expect.stringMatching(
          new RegExp(`^buildah push xpkg\\.upbound\\.io/modelplane/${fn}:${version} docker-archive:.*/out/images/${fn}\\.tar:`),
        ),
      ]),
    );
  });

  it('stops at the first failing build, exiting non-zero', () => {
    const run = runScript('images', { docker: { build: 3 } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('docker build failed (exit 3)');
    expect(run.calls).toHaveLength(2);
  });
});

describe('make xpkg', () => {
  it('explains, and exits non-zero, when the crossplane CLI is not installed', () => {
    const run = runScript('xpkg', {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('make xpkg needs the crossplane CLI (`crossplane xpkg build`), which is not on PATH.');
    expect(run.stderr).toContain('https://docs.crossplane.io/latest/cli/');
    expect(run.stderr).toContain('run `make images` first');
  });

  it('asks for make images first when the image tarballs are missing', () => {
    const run = runScript('xpkg', { crossplane: {} });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /make xpkg embeds each function's runtime image, and .*compose-model-cache\.tar.* are missing: run `make images` first\./,
    );
    expect(run.calls).toEqual([]);
  });

  it('builds each Function package with its image, then the Configuration from crossplane.yaml and package/ only', () => {
    const out = mkdtempSync(join(tmpdir(), 'xpkg-out-'));
    mkdirSync(join(out, 'images'));
    for (const fn of FUNCTION_NAMES) writeFileSync(join(out, 'images', `${fn}.tar`), 'image');
    const run = runScript('xpkg', { crossplane: {} }, { OUTPUT_DIR: out, VERSION: 'v1.2.3' });
    expect(run.stderr.replace(/^note: .*\n/m, '')).toBe('');
    expect(run.code).toBe(0);
    expect(run.calls).toEqual([
      ...FUNCTION_NAMES.map(
        (fn) =>
          `crossplane xpkg build --package-root=functions/${fn}/package --embed-runtime-image-tarball=${out}/images/${fn}.tar ` +
          `--examples-root=functions/${fn}/package/examples --package-file=${out}/xpkg/${fn}-v1.2.3.xpkg`,
      ),
      `crossplane xpkg build --package-root=${out}/configuration --examples-root=${out}/configuration/examples --package-file=${out}/xpkg/modelplane-model-cache-v1.2.3.xpkg`,
    ]);
    const staged = readdirSync(join(out, 'configuration'));
    expect(staged.filter((name) => name !== 'package')).toEqual(['crossplane.yaml']);
    expect(readFileSync(join(out, 'configuration', 'crossplane.yaml'), 'utf8')).toBe(
      readFileSync(join(REPO_ROOT, 'crossplane.yaml'), 'utf8'),
    );
  });
});

it('refuses an unknown command', () => {
  expect(runScript('publish', {}).code).toBe(2);
});
