// scripts/node-options.mjs: a function's Node flags and glibc tunables as the
// image, the bench, make e2e and make run get them from
// functions/<name>/node-options and glibc-tunables.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '#testing';
import { glibcTunables, nodeOptions } from '../../scripts/node-options.mjs';

/** A repository with one function folder, and its node-options (or another settings) file when given. */
function repoWith(file?: string, name = 'node-options'): string {
  const root = mkdtempSync(join(tmpdir(), 'node-options-'));
  mkdirSync(join(root, 'functions', 'fn'), { recursive: true });
  if (file !== undefined) writeFileSync(join(root, 'functions', 'fn', name), file);
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

describe('glibcTunables', () => {
  it.each([
    ['no file', undefined, ''],
    ['only comments', '# why\n', ''],
    ['one after its reasons', '# why\nglibc.malloc.mmap_threshold=65536\n', 'glibc.malloc.mmap_threshold=65536'],
    [
      'several, joined as GLIBC_TUNABLES wants them',
      'glibc.malloc.mmap_threshold=65536\n# b\nglibc.malloc.arena_max=2\n',
      'glibc.malloc.mmap_threshold=65536:glibc.malloc.arena_max=2',
    ],
  ] as const)('%s', (_name, file, value) => {
    expect(glibcTunables('fn', repoWith(file, 'glibc-tunables'))).toBe(value);
  });

  it.each([
    ['no value', 'glibc.malloc.mmap_threshold'],
    ["another library's", 'malloc.mmap_threshold=65536'],
    ["GLIBC_TUNABLES's own separator", 'glibc.malloc.mmap_threshold=65536:glibc.malloc.arena_max=2'],
  ])('refuses a line that is not glibc.<name>=<value> (%s), naming the file and the line', (_name, line) => {
    expect(() => glibcTunables('fn', repoWith(`${line}\n`, 'glibc-tunables'))).toThrow(
      `functions/fn/glibc-tunables: "${line}" is not glibc.<name>=<value>`,
    );
  });

  it('prints the value as a command, and exits 2 without a function', () => {
    const script = join(REPO_ROOT, 'scripts', 'node-options.mjs');
    const printed = execFileSync(process.execPath, [script, '--glibc-tunables', 'compose-model-cache'], {
      cwd: tmpdir(),
      encoding: 'utf8',
    });
    expect(printed).toBe(`${glibcTunables('compose-model-cache', REPO_ROOT)}\n`);
    expect(printed).not.toBe('\n');
    const bare = spawnSync(process.execPath, [script, '--glibc-tunables'], { cwd: tmpdir(), encoding: 'utf8' });
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('usage: node scripts/node-options.mjs [--glibc-tunables] <function>');
  });
});
