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

  it('plays every make e2e-standin story in CI, each once (.ci/run: its stand-in groups)', () => {
    const line = /^standin_groups=\((.*)\)$/m.exec(readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8'))?.[1];
    if (line === undefined) throw new Error('.ci/run sets no standin_groups');
    const played = [...line.matchAll(/"([^"]*)"|(\S+)/g)].flatMap((m) => (m[1] ?? m[2] ?? '').split(' '));
    expect(played.sort()).toEqual([...STANDIN].sort());
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
    // A story that needs more than the nodes (nodes-grove: Grove's operator) adds its own condition after.
    expect(source(story)).toMatch(new RegExp(`describe\\.skipIf\\(!nodesPlane\\('${story}\\.e2e\\.ts'\\)(\\)| \\|\\| )`));
  });
});

/** Each `setFaults({...})` call's argument, braces matched. */
function faultCalls(text: string): string[] {
  const calls: string[] = [];
  for (let at = text.indexOf('setFaults({'); at >= 0; at = text.indexOf('setFaults({', at + 1)) {
    let depth = 0;
    let end = at + 'setFaults('.length;
    for (; end < text.length; end++) {
      if (text[end] === '{') depth++;
      if (text[end] === '}' && --depth === 0) break;
    }
    calls.push(text.slice(at + 'setFaults('.length, end + 1));
  }
  return calls;
}

// make e2e's second lane (docs/nodes.md, "Two lanes"): what lets a story play beside the others.
describe('the stories that play beside the others (E2E_BESIDE)', () => {
  const BESIDE = listed('E2E_BESIDE');

  it('are node stories, and the compat story (alone on the oldest) is not one', () => {
    expect(NODES).toEqual(expect.arrayContaining(BESIDE));
    expect(BESIDE).not.toContain(listed('E2E_COMPAT')[0]);
  });

  it.each(BESIDE)('%s sets no hub fault, resets nothing, restarts no daemon and reads only the hub history', (story) => {
    const text = source(story);
    for (const shared of [/setFaults\(/, /hub\('(reset|requests)'/, /node\.sh restart|restartOnNode\(/])
      expect(text, String(shared)).not.toMatch(shared);
  });

  it.each(BESIDE)('%s downloads no repository another story does, and names InferenceClusters of its own', (story) => {
    const text = source(story);
    for (const shared of [/\bHUB_(REPO|GATED_REPO|WALKTHROUGH_REPO|RESUME_REPO|RESTART_REPO)\b/, /'Qwen\//, /hubCache\([^)]*'\)/])
      expect(text, String(shared)).not.toMatch(shared);
    expect(text, 'an InferenceCluster named after a workload cluster').not.toMatch(/inferenceCluster\('cluster-|openStory\([^)]*'\)/);
    expect(text, 'every InferenceCluster of the story').not.toMatch(/removeStory\([^)]*WORKLOAD_CLUSTERS/);
  });

  it.each(NODES.filter((story) => !BESIDE.includes(story)))('%s scopes every hub fault it sets to its own repository', (story) => {
    for (const call of faultCalls(source(story)).filter((c) => c !== '{}')) expect(call).toMatch(/\brepo\b/);
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
