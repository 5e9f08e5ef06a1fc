// What the plane's scripts refuse, before they touch anything, and the words
// they say it in: `make up` without root (its nodes need it), `make demo` on a
// plane without nodes (it runs real pods), the kubelet stand-in on a cluster
// that runs a real node (its controllers would undo what it writes).

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';

const STATE = mkdtempSync(join(tmpdir(), 'refusals-'));
afterAll(() => {
  rmSync(STATE, { recursive: true, force: true });
});

/** A user other than root, when this runs as root and that user can read the scripts (as `nobody` would run them). */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
const asNobody = (args: string[]): string[] => (process.getuid?.() === 0 ? [...NOBODY, ...args] : args);
const readUp = asNobody(['test', '-r', join(REPO_ROOT, 'test', 'e2e', 'control-plane', 'up.sh')]);
const nobodyReads = spawnSync(readUp[0]!, readUp.slice(1)).status === 0;

function run(argv: string[], env: Record<string, string>): { status: number | null; stderr: string } {
  const result = spawnSync(argv[0]!, argv.slice(1), {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', MODELPLANE_UP_DIR: STATE, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stderr: result.stderr };
}

describe("the plane's scripts refuse, naming why", () => {
  it.skipIf(!nobodyReads)('make up without root: its nodes need root, or MODELPLANE_UP_NODES=0', () => {
    const { status, stderr } = run(asNobody(['bash', 'test/e2e/control-plane/up.sh']), {});
    expect(status).toBe(1);
    expect(stderr).toContain('make up runs a real node on each workload cluster, and that needs root');
    expect(stderr).toContain('MODELPLANE_UP_NODES=0 make up');
  });

  it('make demo with MODELPLANE_UP_NODES=0: it runs real pods', () => {
    const { status, stderr } = run(['bash', 'scripts/demo.sh'], { MODELPLANE_UP_NODES: '0' });
    expect(status).toBe(1);
    expect(stderr).toContain('[demo] The demo runs real pods, and MODELPLANE_UP_NODES=0 starts no node');
  });

  it('the kubelet stand-in on a cluster that runs a real node', () => {
    mkdirSync(join(STATE, 'kubeconfigs'), { recursive: true });
    mkdirSync(join(STATE, 'nodes', 'cluster-a'), { recursive: true });
    writeFileSync(join(STATE, 'kubeconfigs', 'cluster-a'), '');
    writeFileSync(join(STATE, 'nodes', 'cluster-a', 'pids'), '');
    const { status, stderr } = run(['bash', 'test/e2e/workload-kubelet.sh', 'cluster-a', 'bind-claims'], {});
    expect(status).toBe(1);
    expect(stderr).toContain('cluster-a runs a real node: its kubelet and controllers do this');
  });
});
