// The README is a newcomer's path, so what it shows must work: its two
// commands are `make test` and `make demo`; its install manifest names the
// package this repository publishes, at its version, with the dependency
// constraints crossplane.yaml declares and the Functions' installed names; its
// ModelCache is one the XRD admits; its one command for a cluster's phase and
// mount selects on the labels every composed ModelCacheHydration carries; and
// its Docs list reaches every page under docs/. The render command lines of
// the docs (docs/rendering.md) render, with the real `crossplane render`, the
// same arguments and the servers on ephemeral ports, exactly what the
// example's expected.yaml holds (this file is what CI runs again with the
// newest CLI). What every page is held to: pages.test.ts.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { LABEL_CLUSTER, LABEL_MODELCACHE, asArray, getObject, getString, type JsonObject } from '#lib';
import { REPO_ROOT, loadXrd, validateXr } from '#testing';
import { FUNCTION_REGISTRY, INSTALLED_FUNCTION_NAMES } from '../package/packaging.js';
import { requireTool, runTool } from '../support/tools.js';
import { cliVersion, comparableAcrossClis, isSplitCli } from '../render/cli.js';
import { FUNCTIONS_FILE, startExampleServers, type ExampleServers } from '../render/examples.js';
import { formatYamlStream, parseYamlStream, readYamlObject } from '../render/yaml.js';
import { docPages, fencedBlocks, readPage, relativeLinks, shellCommands } from './pages.js';

const README = readPage('README.md');
/** The pages whose commands a reader runs as written: the README's, and the docs'. */
const COMMANDS = docPages().flatMap((page) => shellCommands(readPage(page)));

describe('README: the two commands', () => {
  const section = README.slice(README.indexOf('## Two commands'), README.indexOf('\n## ', README.indexOf('## Two commands') + 1));

  it('are make test and make demo, in that order', () => {
    expect(shellCommands(section)).toEqual(['make test', 'make demo']);
  });

  it('and the real control plane is make up, make e2e, make down', () => {
    expect(shellCommands(README)).toEqual(expect.arrayContaining(['make up', 'make e2e', 'make down']));
  });
});

describe('docs: render command lines', () => {
  // Each CLI generation's command line (test/render/cli.ts), run with the CLI of that generation
  // when it is the one selected (make's CROSSPLANE=oldest|newest).
  const generations = {
    old: COMMANDS.filter((c) => c.startsWith('crossplane render ')),
    split: COMMANDS.filter((c) => c.startsWith('crossplane composition render ')),
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
    expect(COMMANDS.filter((c) => /\brender\.mjs\b/.test(c))).toEqual([]);
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

describe('README: install', () => {
  const manifests = fencedBlocks(README, 'yaml').map((block) => parseYaml(block) as JsonObject);
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
    const dependencies = asArray(getObject(configuration, 'spec')?.['dependsOn']);
    expect(dependencies.length).toBeGreaterThan(0);
    for (const dependency of dependencies) expect(README).toContain(`\`${getString(dependency, 'version')!}\``);
  });

  it('names the Functions as the Compositions call them', () => {
    for (const name of Object.values(INSTALLED_FUNCTION_NAMES)) expect(README).toContain(`\`${name}\``);
  });

  it('shows a ModelCache the XRD admits', () => {
    const caches = ofKind('ModelCache');
    expect(caches.length).toBe(1);
    expect(validateXr(loadXrd('package/modelcaches/definition.yaml'), caches[0]!)).toEqual([]);
  });
});

describe("README: one cluster's phase and mount", () => {
  const command = shellCommands(README).find((c) => c.includes(' -o yaml') && c.startsWith('kubectl get modelcachehydrations '));
  // What compose-model-cache composes, as the shard example's expected render holds it (make test re-renders it).
  const rendered = parseYamlStream(
    readFileSync(join(REPO_ROOT, 'examples/model-cache-shard/first-compose/expected.yaml'), 'utf8'),
    'the shard example',
  ).filter((r) => r['kind'] === 'ModelCacheHydration');

  it('is one kubectl command that selects a cache and a cluster by label', () => {
    expect(command).toBe(`kubectl get modelcachehydrations -n <ns> -l ${LABEL_MODELCACHE}=<cache>,${LABEL_CLUSTER}=<cluster> -o yaml`);
  });

  it('selects on the labels every composed ModelCacheHydration carries: its cache and its cluster', () => {
    expect(rendered.length).toBeGreaterThan(1);
    for (const hydration of rendered) {
      const labels = getObject(hydration, 'metadata', 'labels') ?? {};
      expect(labels[LABEL_CLUSTER]).toBe(getString(hydration, 'spec', 'clusterName'));
      expect(labels[LABEL_MODELCACHE]).toBe(getString(hydration, 'spec', 'cacheName'));
    }
  });
});

describe('README: the Docs list', () => {
  /** Every page reachable from the README by following relative links. */
  function reachable(): Set<string> {
    const seen = new Set<string>(['README.md']);
    const queue = ['README.md'];
    while (queue.length > 0) {
      const page = queue.shift()!;
      for (const link of relativeLinks(page, readPage(page))) {
        const target = link.file;
        if (!target.endsWith('.md') || seen.has(target)) continue;
        try {
          readPage(target);
        } catch {
          continue; // a missing page is pages.test.ts's to report
        }
        seen.add(target);
        queue.push(target);
      }
    }
    return seen;
  }

  it.each([
    'docs/design/fleet.md',
    'docs/crossplane-versions.md',
    'docs/runtime.md',
    'docs/limits.md',
    'docs/troubleshooting.md',
    'BENCHMARKS.md',
  ])('links %s', (page) => {
    expect(relativeLinks('README.md', README).map((l) => l.file)).toContain(page);
  });

  it('reaches every page under docs/, and BENCHMARKS.md', () => {
    const seen = reachable();
    const pages = docPages().filter((p) => p !== 'README.md');
    expect(pages.filter((p) => !seen.has(p))).toEqual([]);
  });
});
