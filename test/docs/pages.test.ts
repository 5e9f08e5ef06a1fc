// Every page a reader is sent to (README.md, BENCHMARKS.md, docs/) is held to
// what it shows: each relative link reaches a file, and the heading it names;
// each `make` target it tells a person to run exists and dry-runs, and
// `make help` lists it; the two front pages stay short; the runtime manifests
// install what this repository publishes; the configuration page's flag table
// is the server's flags; and the troubleshooting tables list every condition
// reason each function can set, and no other.

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { asArray, getObject, getString, parseFlags, usage, type JsonObject } from '#lib';
import { REPO_ROOT } from '#testing';
import { REASON as CACHE_REASONS } from '../../functions/compose-model-cache/src/conditions.js';
import { REASONS as HYDRATION_REASONS } from '../../functions/compose-model-cache-hydration/src/outcome.js';
import { REACHABLE_REASON } from '../../functions/compose-model-cache-hydration/src/reach.js';
import { CACHE_REASON as REPLICA_CACHE_REASONS } from '../../functions/compose-model-replica/src/cache.js';
import { REASON as REPLICA_REASONS } from '../../functions/compose-model-replica/src/conditions.js';
import { INSTALLED_FUNCTION_NAMES, installedName } from '../package/packaging.js';
import { docPages, fencedBlocks, headingAnchors, makeTargets, readPage, relativeLinks } from './pages.js';

const PAGES = docPages();
const MAKEFILE = readPage('Makefile');
const makefileTargets = new Set([...MAKEFILE.matchAll(/^([a-z][a-z0-9-]*):/gm)].map((match) => match[1]!));
const describedTargets = new Set([...MAKEFILE.matchAll(/^([a-z][a-z0-9-]*):.*## /gm)].map((match) => match[1]!));

describe('docs: pages', () => {
  it('finds the pages: the README, BENCHMARKS.md, and the guides, references and design notes under docs/', () => {
    expect(PAGES).toEqual(
      expect.arrayContaining([
        'README.md',
        'BENCHMARKS.md',
        'docs/troubleshooting.md',
        'docs/reference/modelcache.md',
        'docs/design/fleet.md',
      ]),
    );
  });

  it.each([
    ['README.md', 12 * 1024],
    ['BENCHMARKS.md', 12 * 1024],
  ])('%s stays a page read in two minutes (at most %d bytes)', (page, budget) => {
    expect(Buffer.byteLength(readPage(page))).toBeLessThanOrEqual(budget);
  });
});

describe('docs: links', () => {
  const links = PAGES.flatMap((page) => relativeLinks(page, readPage(page)));

  it('reads links from every page', () => {
    expect(links.length).toBeGreaterThan(50);
    expect(links.filter((l) => l.page === 'README.md').length).toBeGreaterThan(10);
  });

  it.each(links.map((l) => [`${l.page}:${l.line} ${l.target}`, l] as const))('%s reaches a file in the repository', (_, link) => {
    const file = link.file === '' ? link.page : link.file;
    expect(file.startsWith('..'), 'the link leaves the repository').toBe(false);
    expect(existsSync(join(REPO_ROOT, file)), `${file} does not exist`).toBe(true);
    if (link.anchor !== undefined) {
      expect(file.endsWith('.md') && statSync(join(REPO_ROOT, file)).isFile(), 'an anchor into something that is not a page').toBe(true);
      expect([...headingAnchors(readPage(file))], `${file} has no heading #${link.anchor}`).toContain(link.anchor);
    }
  });
});

describe('docs: make', () => {
  const targets = [...new Set(PAGES.flatMap((page) => makeTargets(readPage(page))))].sort();

  it('names the targets a newcomer needs', () => {
    expect(targets).toEqual(
      expect.arrayContaining(['test', 'demo', 'up', 'e2e', 'down', 'run', 'render', 'images', 'xpkg', 'docs', 'help', 'bench']),
    );
  });

  it.each(targets)('make %s exists in the Makefile and dry-runs', (target) => {
    expect(makefileTargets.has(target), `a page names make ${target}, which the Makefile lacks`).toBe(true);
    const run = spawnSync('make', ['-n', target], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
  });

  it('make help runs and lists every described target the pages name', () => {
    const run = spawnSync('make', ['help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    for (const target of targets.filter((t) => describedTargets.has(t))) expect(run.stdout).toMatch(new RegExp(`make ${target} `));
  });
});

describe('docs/runtime-settings.md: manifests', () => {
  const page = readPage('docs/runtime-settings.md');
  const manifests = fencedBlocks(page, 'yaml').map((block) => parseYaml(block) as JsonObject);
  const ofKind = (kind: string) => manifests.filter((m) => m['kind'] === kind);

  it('installs Functions under the names the Compositions call, with a DeploymentRuntimeConfig it defines', () => {
    const runtimeConfigs = ofKind('DeploymentRuntimeConfig');
    expect(runtimeConfigs.map((c) => getString(c, 'apiVersion'))).toEqual(['pkg.crossplane.io/v1beta1']);
    expect(ofKind('Function').length).toBeGreaterThan(0);
    for (const fn of ofKind('Function')) {
      const name = getString(fn, 'metadata', 'name')!;
      expect(Object.values(INSTALLED_FUNCTION_NAMES)).toContain(name);
      expect(installedName(getString(fn, 'spec', 'package')!)).toBe(name);
      expect(runtimeConfigs.map((c) => getString(c, 'metadata', 'name'))).toContain(getString(fn, 'spec', 'runtimeConfigRef', 'name'));
    }
    for (const name of Object.values(INSTALLED_FUNCTION_NAMES)) expect(page).toContain(`\`${name}\``);
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

describe('docs/configuration.md', () => {
  it("lists exactly the server's flags (but --help)", () => {
    const table = [...readPage('docs/configuration.md').matchAll(/^\| `(--[a-z-]+)` +\|/gm)].map((match) => match[1]!);
    const flags = [...usage('fn').matchAll(/(--[a-z-]+)/g)].map((match) => match[1]!).filter((flag) => flag !== '--help');
    expect(table.sort()).toEqual(flags.sort());
  });
});

describe('docs/troubleshooting.md', () => {
  const page = readPage('docs/troubleshooting.md');

  /** The reason column of the table under `## <heading>`, down to the next heading (a `###` section is its own). */
  function reasons(heading: string): string[] {
    const start = page.indexOf(`\n## ${heading}\n`);
    expect(start, `no ## ${heading}`).toBeGreaterThanOrEqual(0);
    const rest = page.slice(start + `\n## ${heading}\n`.length);
    const end = rest.search(/^##/m);
    const body = end < 0 ? rest : rest.slice(0, end);
    return [...body.matchAll(/^\| [^|]+ \| `([A-Za-z]+)` +\|/gm)].map((match) => match[1]!).sort();
  }

  it.each<[string, readonly string[]]>([
    ['ModelCache', Object.values(CACHE_REASONS)],
    ['ModelCacheHydration', [...HYDRATION_REASONS, ...Object.values(REACHABLE_REASON)]],
    ['ModelReplica', [...Object.values(REPLICA_REASONS), ...Object.values(REPLICA_CACHE_REASONS)]],
  ])('%s: one row per reason its function sets', (heading, fromCode) => {
    expect(reasons(heading)).toEqual([...new Set(fromCode)].sort());
  });

  it("lists Crossplane's own conditions for every XR", () => {
    expect(reasons("Every XR (Crossplane's own conditions)")).toEqual(['Available', 'Creating', 'ReconcileError', 'WatchCircuitOpen']);
  });
});
