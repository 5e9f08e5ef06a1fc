// The README is a newcomer's path, so what it shows must work: every `make`
// target it names exists and dry-runs (make -n), `make help` runs and lists
// them, its render command lines render (with the real `crossplane render`,
// the same arguments, the servers on ephemeral ports) exactly what the
// example's expected.yaml holds, its
// manifests name the packages and Functions this repository publishes, its
// flag table is the server's flags, and its troubleshooting tables list every
// condition reason each function can set, and no other.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { asArray, getObject, getString, parseFlags, usage, type JsonObject } from '#lib';
import { REPO_ROOT } from '#testing';
import { REASON as CACHE_REASONS } from '../../functions/compose-model-cache/src/conditions.js';
import { REASONS as HYDRATION_REASONS } from '../../functions/compose-model-cache-hydration/src/outcome.js';
import { CACHE_REASON as REPLICA_CACHE_REASONS } from '../../functions/compose-model-replica/src/cache.js';
import { REASON as REPLICA_REASONS } from '../../functions/compose-model-replica/src/conditions.js';
import { FUNCTION_REGISTRY, INSTALLED_FUNCTION_NAMES, installedName } from '../package/packaging.js';
import { requireTool, runTool } from '../support/tools.js';
import { cliVersion, comparableAcrossClis, isSplitCli } from '../render/cli.js';
import { FUNCTIONS_FILE, startExampleServers, type ExampleServers } from '../render/examples.js';
import { formatYamlStream, parseYamlStream, readYamlObject } from '../render/yaml.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const MAKEFILE = readFileSync(join(REPO_ROOT, 'Makefile'), 'utf8');

/** The fenced blocks of a language, each as its text. */
function blocks(language: string): string[] {
  return [...README.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((match) => match[1]!);
}

/** Each command of the sh blocks, continuation lines joined, comments dropped. */
function shellCommands(): string[] {
  return blocks('sh').flatMap((block) =>
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}

/** Every make target the README tells a person to run: in code spans and in sh blocks. */
function readmeMakeTargets(): string[] {
  const found = new Set<string>();
  for (const match of README.matchAll(/`make ([a-z][a-z0-9-]*)`/g)) found.add(match[1]!);
  for (const command of shellCommands()) {
    for (const match of command.matchAll(/(?:^|&&\s*)make ([a-z][a-z0-9-]*)/g)) found.add(match[1]!);
  }
  return [...found].sort();
}

const makefileTargets = new Set([...MAKEFILE.matchAll(/^([a-z][a-z0-9-]*):/gm)].map((match) => match[1]!));
const describedTargets = new Set([...MAKEFILE.matchAll(/^([a-z][a-z0-9-]*):.*## /gm)].map((match) => match[1]!));

describe('README: make', () => {
  const targets = readmeMakeTargets();

  it('names the targets a newcomer needs', () => {
    expect(targets).toEqual(expect.arrayContaining(['test', 'run', 'render', 'images', 'xpkg', 'docs', 'help']));
  });

  it.each(targets)('make %s exists in the Makefile and dry-runs', (target) => {
    expect(makefileTargets.has(target), `the README names make ${target}, which the Makefile lacks`).toBe(true);
    const run = spawnSync('make', ['-n', target], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
  });

  it('make help runs and lists every described target the README names', () => {
    const run = spawnSync('make', ['help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    for (const target of targets.filter((t) => describedTargets.has(t))) expect(run.stdout).toMatch(new RegExp(`make ${target} `));
  });
});

describe('README: render command lines', () => {
  // Each CLI generation's command line (test/render/cli.ts), run with the CLI of that generation
  // when it is the one selected (make's CROSSPLANE=oldest|newest).
  const generations = {
    old: shellCommands().filter((c) => c.startsWith('crossplane render ')),
    split: shellCommands().filter((c) => c.startsWith('crossplane composition render ')),
  };
  const commands = isSplitCli(cliVersion()) ? generations.split : generations.old;

  it('shows the same render for both CLI generations', () => {
    const strip = (c: string) =>
      c.replace(/^crossplane (composition )?render /, '').replace(/ --crossplane-binary "\$CROSSPLANE_CORE"$/, '');
    expect(generations.old.length).toBeGreaterThan(0);
    expect(generations.split.map(strip)).toEqual(generations.old.map(strip));
  });
  let servers: ExampleServers;
  beforeAll(async () => {
    servers = await startExampleServers(REPO_ROOT, { ephemeralPorts: true });
  });
  afterAll(async () => {
    await servers.stop();
  });

  it('shows a crossplane render command line, and no other renderer', () => {
    expect(commands.length).toBeGreaterThan(0);
    expect(shellCommands().filter((c) => /\brender\.mjs\b/.test(c))).toEqual([]);
  });

  it.each(commands)('%s renders what the example expects', async (command) => {
    // The command as it stands, but with a functions.yaml that points at this test's servers, not `make run`'s ports.
    const args = command
      .split(/\s+/)
      .slice(1)
      .map((arg) => (arg === FUNCTIONS_FILE ? servers.functions : arg === '"$CROSSPLANE_CORE"' ? requireTool('CROSSPLANE_CORE') : arg));
    expect(args, `the command renders with ${FUNCTIONS_FILE}`).toContain(servers.functions);
    const run = await runTool(requireTool('CROSSPLANE'), args, { cwd: REPO_ROOT });
    expect(run.code, run.stderr).toBe(0);
    const xr = args[args.indexOf('render') + 1]!;
    const expectedFile = join(REPO_ROOT, dirname(xr), 'expected.yaml');
    const got = parseYamlStream(run.stdout, 'crossplane render output');
    const want = parseYamlStream(readFileSync(expectedFile, 'utf8'), expectedFile);
    // The v2.3+ CLI renders through core's reconciler: compared on what both generations hold.
    if (isSplitCli(cliVersion())) expect(formatYamlStream(comparableAcrossClis(got))).toBe(formatYamlStream(comparableAcrossClis(want)));
    else expect(formatYamlStream(got)).toBe(formatYamlStream(want));
  });
});

describe('README: manifests', () => {
  const manifests = blocks('yaml').map((block) => parseYaml(block) as JsonObject);
  const ofKind = (kind: string) => manifests.filter((m) => m['kind'] === kind);
  const configuration = readYamlObject(join(REPO_ROOT, 'crossplane.yaml'));
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  it('installs the Configuration this repository builds, at its version', () => {
    const [install] = ofKind('Configuration');
    expect(getString(install, 'apiVersion')).toBe('pkg.crossplane.io/v1');
    expect(getString(install, 'spec', 'package')).toBe(`${FUNCTION_REGISTRY}/${getString(configuration, 'metadata', 'name')!}:v${version}`);
    expect(getString(install, 'metadata', 'name')).toBe(getString(configuration, 'metadata', 'name'));
  });

  it('states the dependency constraints crossplane.yaml declares', () => {
    for (const dependency of asArray(getObject(configuration, 'spec')?.['dependsOn']))
      expect(README).toContain(`\`${getString(dependency, 'version')!}\``);
  });

  it('installs Functions under the names the Compositions call, with a DeploymentRuntimeConfig it defines', () => {
    const runtimeConfigs = ofKind('DeploymentRuntimeConfig');
    expect(runtimeConfigs.map((c) => getString(c, 'apiVersion'))).toEqual(['pkg.crossplane.io/v1beta1']);
    for (const fn of ofKind('Function')) {
      const name = getString(fn, 'metadata', 'name')!;
      expect(Object.values(INSTALLED_FUNCTION_NAMES)).toContain(name);
      expect(installedName(getString(fn, 'spec', 'package')!)).toBe(name);
      expect(runtimeConfigs.map((c) => getString(c, 'metadata', 'name'))).toContain(getString(fn, 'spec', 'runtimeConfigRef', 'name'));
    }
    for (const name of Object.values(INSTALLED_FUNCTION_NAMES)) expect(README).toContain(`\`${name}\``);
  });

  it("gives the runtime container only arguments the server accepts, in the container Crossplane's runtime names", () => {
    const [config] = ofKind('DeploymentRuntimeConfig');
    const containers = asArray(getObject(config, 'spec', 'deploymentTemplate', 'spec', 'template', 'spec')?.['containers']);
    expect(containers.map((c) => getString(c, 'name'))).toEqual(['package-runtime']);
    const args = asArray((containers[0] as JsonObject)['args']).map(String);
    expect(args.length).toBeGreaterThan(0);
    expect(() => parseFlags(args, {})).not.toThrow();
  });
});

describe('README: configuration', () => {
  it("lists exactly the server's flags (but --help)", () => {
    const table = [...README.matchAll(/^\| `(--[a-z-]+)` +\|/gm)].map((match) => match[1]!);
    const flags = [...usage('fn').matchAll(/(--[a-z-]+)/g)].map((match) => match[1]!).filter((flag) => flag !== '--help');
    expect(table.sort()).toEqual(flags.sort());
  });
});

describe('README: troubleshooting', () => {
  /** The reason column of the table under `### <heading>` in the troubleshooting section. */
  function reasons(heading: string): string[] {
    const section = README.slice(README.indexOf('## Troubleshooting'));
    const start = section.indexOf(`### ${heading}\n`);
    expect(start, `no ### ${heading} under ## Troubleshooting`).toBeGreaterThanOrEqual(0);
    const rest = section.slice(start + `### ${heading}\n`.length);
    const end = rest.search(/^##/m);
    const body = end < 0 ? rest : rest.slice(0, end);
    return [...body.matchAll(/^\| [^|]+ \| `([A-Za-z]+)` +\|/gm)].map((match) => match[1]!).sort();
  }

  it.each<[string, readonly string[]]>([
    ['ModelCache', Object.values(CACHE_REASONS)],
    ['ModelCacheHydration', HYDRATION_REASONS],
    ['ModelReplica', [...Object.values(REPLICA_REASONS), ...Object.values(REPLICA_CACHE_REASONS)]],
  ])('%s: one row per reason its function sets', (heading, fromCode) => {
    expect(reasons(heading)).toEqual([...new Set(fromCode)].sort());
  });

  it("lists Crossplane's own conditions for every XR", () => {
    expect(reasons("Every XR (Crossplane's own conditions)")).toEqual(['Available', 'Creating', 'ReconcileError']);
  });
});
