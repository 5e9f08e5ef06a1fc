// scripts/node-options.mjs: a function's Node flags as the image, the bench,
// make e2e and make run get them from functions/<name>/node-options.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';
import { nodeOptions } from '../../scripts/node-options.mjs';

/** A repository with one function folder, and its node-options file when given. */
function repoWith(file?: string): string {
  const root = mkdtempSync(join(tmpdir(), 'node-options-'));
  mkdirSync(join(root, 'functions', 'fn'), { recursive: true });
  if (file !== undefined) writeFileSync(join(root, 'functions', 'fn', 'node-options'), file);
  return root;
}

describe('nodeOptions', () => {
  it.each([
    ['no file', undefined, []],
    ['only comments', '# why\n  # indented too\n', []],
    ['flags after their reasons', '# why\n--max-semi-space-size=1\n', ['--max-semi-space-size=1']],
    ['several on a line and over lines', '--a=1  --b\n\n# c\n\t--c\n', ['--a=1', '--b', '--c']],
  ] as const)('%s', (_name, file, flags) => {
    expect(nodeOptions('fn', repoWith(file))).toEqual(flags);
  });

  it('refuses a function the repository does not have, naming it', () => {
    expect(() => nodeOptions('nope', repoWith())).toThrow(/no function nope in .*functions/);
  });

  it('prints them on one line as a command, from any directory, and exits 1 on an unknown function', () => {
    const script = join(REPO_ROOT, 'scripts', 'node-options.mjs');
    const printed = execFileSync(process.execPath, [script, 'compose-model-replica'], { cwd: tmpdir(), encoding: 'utf8' });
    expect(printed).toBe(`${nodeOptions('compose-model-replica', REPO_ROOT).join(' ')}\n`);
    const unknown = spawnSync(process.execPath, [script, 'compose-model-nope'], { cwd: tmpdir(), encoding: 'utf8' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('node-options: no function compose-model-nope');
  });
});
