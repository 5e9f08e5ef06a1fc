// `make images` and `make xpkg`: build the three function images, and the
// three Function packages plus the Configuration package, with whatever tools
// this machine has; when it has none, say what is missing and how to get it.
//
//   node scripts/package.mjs images   docker (with a reachable engine) or buildah
//   node scripts/package.mjs xpkg     the crossplane CLI, and the images from `images`
//
// Environment: REGISTRY (default xpkg.upbound.io/modelplane), VERSION (default
// v<package.json version>), OUTPUT_DIR (default _output).

import { spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { glibcTunables, nodeOptions } from './node-options.mjs';

// The same three as scripts/build.mjs (which builds when imported, so it is not imported here).
const FUNCTIONS = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'];
const CONFIGURATION = 'modelplane-model-cache';

const env = process.env;
const version = env.VERSION || `v${JSON.parse(readFileSync('package.json', 'utf8')).version}`;
const registry = env.REGISTRY || 'xpkg.upbound.io/modelplane';
const output = env.OUTPUT_DIR || '_output';
const imageOf = (fn) => `${registry}/${fn}:${version}`;
const tarballOf = (fn) => join(output, 'images', `${fn}.tar`);

/** The executable `command` on PATH, if any. */
function which(command) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function fail(lines) {
  console.error(lines.join('\n'));
  process.exit(1);
}

function run(command, args) {
  console.log(`+ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.error) fail([`cannot run ${command}: ${result.error.message}`]);
  if (result.status !== 0) fail([`${command} ${args[0]} failed (exit ${result.status ?? result.signal})`]);
}

/** docker if its engine answers, else buildah, else undefined with the reasons. */
function containerBuilder() {
  const reasons = [];
  const docker = which('docker');
  if (docker) {
    const info = spawnSync(docker, ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8' });
    if (info.status === 0) return { kind: 'docker', path: docker };
    const why =
      `${info.stderr ?? ''}`
        .trim()
        .split('\n')
        .find((line) => line.trim() !== '') ?? `exit ${info.status}`;
    reasons.push(`  docker:  found at ${docker}, but it cannot reach a Docker engine (${why})`);
  } else {
    reasons.push('  docker:  not found on PATH');
  }
  const buildah = which('buildah');
  if (buildah) return { kind: 'buildah', path: buildah };
  reasons.push('  buildah: not found on PATH');
  return { reasons };
}

function images() {
  const builder = containerBuilder();
  if (!builder.path) {
    fail([
      'make images needs a container image builder, and none is usable here:',
      ...builder.reasons,
      'Install either one:',
      '  Docker Engine  https://docs.docker.com/engine/install/  (then check that `docker info` works)',
      '  buildah        e.g. `sudo apt-get install buildah` (builds without a daemon)',
      'Nothing else needs them: `make test` and `make render` run without.',
    ]);
  }
  mkdirSync(join(output, 'images'), { recursive: true });
  for (const fn of FUNCTIONS) {
    const image = imageOf(fn);
    const tarball = tarballOf(fn);
    rmSync(tarball, { force: true });
    // The function's Node flags (functions/<name>/node-options) become the image's NODE_OPTIONS, and its
    // allocator settings (functions/<name>/glibc-tunables) its GLIBC_TUNABLES.
    const build = [
      'build',
      '--build-arg',
      `FUNCTION=${fn}`,
      '--build-arg',
      `NODE_OPTIONS=${nodeOptions(fn, '.').join(' ')}`,
      '--build-arg',
      `GLIBC_TUNABLES=${glibcTunables(fn, '.')}`,
    ];
    run(builder.path, [...build, '-t', image, '-f', 'Dockerfile', '.']);
    if (builder.kind === 'docker') run(builder.path, ['save', '-o', tarball, image]);
    else run(builder.path, ['push', image, `docker-archive:${tarball}:${image}`]);
  }
  console.log(`Built ${FUNCTIONS.map(imageOf).join(', ')} with ${builder.kind}; saved to ${join(output, 'images')}/ for make xpkg.`);
}

/** The Configuration's package root: crossplane.yaml and the YAML under package/, nothing else of the repository. */
function stageConfiguration() {
  const root = join(output, 'configuration');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  cpSync('crossplane.yaml', join(root, 'crossplane.yaml'));
  if (existsSync('package')) {
    cpSync('package', join(root, 'package'), { recursive: true, filter: (src) => statSync(src).isDirectory() || /\.ya?ml$/.test(src) });
  }
  const plurals = existsSync('package') ? readdirSync('package').filter((name) => statSync(join('package', name)).isDirectory()) : [];
  if (plurals.length === 0)
    console.warn('note: package/ holds no XRDs or Compositions yet; the Configuration package will install only its dependencies.');
  return root;
}

function xpkg() {
  const crossplane = which('crossplane');
  if (!crossplane) {
    fail([
      'make xpkg needs the crossplane CLI (`crossplane xpkg build`), which is not on PATH.',
      'Install it (https://docs.crossplane.io/latest/cli/):',
      '  curl -sL "https://raw.githubusercontent.com/crossplane/crossplane/main/install.sh" | sh',
      '  sudo mv crossplane /usr/local/bin',
      'Each Function package embeds its runtime image, so run `make images` first (docker or buildah).',
      'Nothing else needs the CLI: `make test` and `make render` run without.',
    ]);
  }
  const missing = FUNCTIONS.filter((fn) => !existsSync(tarballOf(fn)));
  if (missing.length > 0) {
    fail([
      `make xpkg embeds each function's runtime image, and ${missing.map(tarballOf).join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: run \`make images\` first.`,
    ]);
  }
  const packages = join(output, 'xpkg');
  mkdirSync(packages, { recursive: true });
  for (const fn of FUNCTIONS) {
    const root = join('functions', fn, 'package');
    run(crossplane, [
      'xpkg',
      'build',
      `--package-root=${root}`,
      `--embed-runtime-image-tarball=${tarballOf(fn)}`,
      // The render examples are not package examples: point at a folder that doesn't exist.
      `--examples-root=${join(root, 'examples')}`,
      `--package-file=${join(packages, `${fn}-${version}.xpkg`)}`,
    ]);
  }
  const root = stageConfiguration();
  run(crossplane, [
    'xpkg',
    'build',
    `--package-root=${root}`,
    `--examples-root=${join(root, 'examples')}`,
    `--package-file=${join(packages, `${CONFIGURATION}-${version}.xpkg`)}`,
  ]);
  console.log(
    `Built ${FUNCTIONS.length + 1} packages in ${packages}/. Push each with \`crossplane xpkg push -f <file> ${registry}/<name>:${version}\`.`,
  );
}

const [command, ...extra] = process.argv.slice(2);
if (extra.length > 0 || (command !== 'images' && command !== 'xpkg')) {
  console.error('usage: node scripts/package.mjs images|xpkg');
  process.exit(2);
}
if (command === 'images') images();
else xpkg();
