// Which plane each e2e story runs on (the Makefile's E2E_NODES for `make e2e`,
// E2E_STANDIN for `make e2e-standin`): a story in neither list would never
// run, one in both would be skipped on one plane, and a story that drives the
// kubelet stand-in on real nodes would fight the real controllers. And the
// plane's addresses the stories use are the ones up.sh serves.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';
import { HUB_PORT } from './hub/repo.js';
import { HUB_ENDPOINT, PYPI_INDEX_URL, REGISTRY } from './plane.js';

const MAKEFILE = readFileSync(join(REPO_ROOT, 'Makefile'), 'utf8');
const listed = (name: string): string[] => {
  const line = MAKEFILE.split('\n').find((l) => l.startsWith(`${name} := `));
  if (line === undefined) throw new Error(`the Makefile has no ${name}`);
  return line.slice(`${name} := `.length).trim().split(/\s+/);
};
const NODES = listed('E2E_NODES');
const STANDIN = listed('E2E_STANDIN');
const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
const STORIES = readdirSync(E2E_DIR)
  .filter((f) => f.endsWith('.e2e.ts'))
  .map((f) => f.slice(0, -'.e2e.ts'.length))
  .sort();
const source = (story: string): string => readFileSync(join(E2E_DIR, `${story}.e2e.ts`), 'utf8');

describe('the e2e stories and their planes', () => {
  it('puts every story in test/e2e/ in exactly one of make e2e and make e2e-standin', () => {
    expect([...NODES, ...STANDIN].sort()).toEqual(STORIES);
  });

  it('is what docs/nodes.md says make e2e runs', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'nodes.md'), 'utf8');
    expect(/# = make e2e E2E="([^"]+)"/.exec(page)?.[1]?.split(' ')).toEqual(NODES);
  });

  it('runs the compat story (CI, on the oldest Crossplane) on real nodes', () => {
    expect(NODES).toContain(listed('E2E_COMPAT')[0]);
  });

  it.each(STANDIN)('%s plays the stand-in, and skips itself on a plane with nodes', (story) => {
    expect(source(story)).toMatch(new RegExp(`describe\\.skipIf\\(!(standInPlane\\('${story}\\.e2e\\.ts'\\)|STAND_IN)\\)`));
  });

  it.each(NODES)('%s runs real pods: it never calls the kubelet stand-in, and skips itself on a plane without nodes', (story) => {
    expect(source(story)).not.toMatch(/\bkubelet\(/);
    expect(source(story)).toMatch(new RegExp(`describe\\.skipIf\\(!nodesPlane\\('${story}\\.e2e\\.ts'\\)\\)`));
  });
});

describe("the plane's addresses in the stories", () => {
  const common = readFileSync(join(REPO_ROOT, 'test', 'e2e', 'control-plane', 'common.sh'), 'utf8');
  const shell = (name: string): string => {
    const value = new RegExp(`^${name}=(\\S+)$`, 'm').exec(common)?.[1];
    if (value === undefined) throw new Error(`common.sh sets no ${name}`);
    return value.replace(/^"|"$/g, '').replace(/\$(\w+)/g, (_, ref: string) => shell(ref));
  };

  it("are common.sh's", () => {
    expect(HUB_ENDPOINT).toBe(shell('HUB_ENDPOINT'));
    expect(String(HUB_PORT)).toBe(shell('HUB_PORT'));
    expect(PYPI_INDEX_URL).toBe(shell('PYPI_INDEX_URL'));
    expect(REGISTRY).toEqual({
      push: `127.0.0.1:${shell('REGISTRY_PORT')}`,
      pull: `${shell('NODE_PLANE_ADDRESS')}:${shell('REGISTRY_PORT')}`,
    });
  });
});
