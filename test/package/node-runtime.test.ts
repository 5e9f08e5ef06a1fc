// The project runs on the Node it pins (tools/versions.env), whatever Node the
// machine has: `make test` (this very process), and every make target, which
// puts the pinned Node first on PATH.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';

const pinned = /^NODE_VERSION=(.+)$/m.exec(readFileSync(join(REPO_ROOT, 'tools/versions.env'), 'utf8'))?.[1];

describe('the pinned Node', () => {
  it('is a full version, in tools/versions.env', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('runs these tests', () => {
    expect(process.version).toBe(`v${pinned}`);
  });

  it("is what a make target's node is, even from a PATH that lacks it", () => {
    const path = (process.env['PATH'] ?? '')
      .split(':')
      .filter((dir) => !/\/node-\d+\.\d+\.\d+\/bin$/.test(dir))
      .join(':');
    const out = execFileSync('make', ['-s', 'node'], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, PATH: path } });
    expect(out).toMatch(new RegExp(`^node v${pinned!.replaceAll('.', '\\.')} at .*/node-${pinned!.replaceAll('.', '\\.')}/bin/node$`, 'm'));
  });
});
