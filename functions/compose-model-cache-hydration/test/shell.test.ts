// The hydration Job's command, run by a real /bin/sh with stand-ins for pip
// and hf that record their arguments: a repo or revision holding quotes,
// command substitutions, separators or newlines reaches hf as one argument,
// and nothing else runs.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hubMarker, hydrationCommand } from '../src/huggingface.js';
import { shellQuote } from '../src/shell.js';
import type { HuggingFaceSource } from '../src/spec.js';

interface Sandbox {
  dir: string;
  bin: string;
  artifact: string;
  /** Each call of a stand-in: its name and arguments. */
  calls(): string[][];
}

/** A directory standing in for /mnt/artifact, and pip/hf that log their argv (NUL-separated, one call per line). */
function sandbox(hfExit = 0): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'hydrate-'));
  const bin = join(dir, 'bin');
  const artifact = join(dir, 'artifact');
  execFileSync('mkdir', ['-p', bin, artifact]);
  const log = join(dir, 'calls');
  for (const [name, exit] of [
    ['pip', 0],
    ['hf', hfExit],
  ] as const) {
    const script = join(bin, name);
    writeFileSync(script, `#!/bin/sh\nprintf '%s\\0' ${name} "$@" >> '${log}'\nprintf '\\n' >> '${log}'\nexit ${exit}\n`);
    chmodSync(script, 0o755);
  }
  return {
    dir,
    bin,
    artifact,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\0\n')
            .filter((line) => line !== '')
            .map((line) => line.split('\0'))
        : [],
  };
}

function runCommand(source: HuggingFaceSource, box: Sandbox): number {
  const command = hydrationCommand(source).replaceAll('/mnt/artifact', box.artifact);
  const result = spawnSync('/bin/sh', ['-c', command], { cwd: box.dir, env: { PATH: `${box.bin}:/usr/bin:/bin` }, encoding: 'utf8' });
  return result.status ?? -1;
}

const HOSTILE: [string, string][] = [
  ['a single quote', "Qwen/it's"],
  ['a command substitution', 'Qwen/$(touch PWNED)'],
  ['backquotes', 'Qwen/`touch PWNED`'],
  ['a separator', 'Qwen/x; touch PWNED'],
  ['a newline', 'Qwen/x\ntouch PWNED'],
  ['a variable and a glob', 'Qwen/$HOME/*'],
  ['a quote that closes and reopens', "Qwen/x'; touch PWNED; echo '"],
  ['backslashes', "Qwen/x\\'; touch PWNED #"],
];

describe('shellQuote', () => {
  it.each(HOSTILE)('keeps %s literal, as one word', (_name, value) => {
    // In a scratch directory: if quoting ever broke, what it ran lands there.
    const dir = mkdtempSync(join(tmpdir(), 'quote-'));
    const echoed = execFileSync('/bin/sh', ['-c', `printf '%s' ${shellQuote(value)}`], { cwd: dir, encoding: 'utf8' });
    expect(echoed).toBe(value);
    expect(existsSync(join(dir, 'PWNED'))).toBe(false);
  });
});

describe('the hydration command in a shell', () => {
  it.each(HOSTILE)('passes a repo and revision with %s to hf as single arguments and runs nothing else', (_name, value) => {
    const box = sandbox();
    expect(runCommand({ repo: value, revision: value, sizeGiB: 1 }, box)).toBe(0);
    expect(box.calls()).toEqual([
      ['pip', 'install', '--quiet', 'huggingface_hub'],
      ['hf', 'download', value, '--revision', value],
    ]);
    expect(existsSync(join(box.dir, 'PWNED'))).toBe(false);
    // The marker is touched after the download, with its own name.
    expect(existsSync(hubMarker(`${value}@${value}`).replace('/mnt/artifact', box.artifact))).toBe(true);
  });

  it('downloads without --revision when none is pinned', () => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B', sizeGiB: 1 }, box)).toBe(0);
    expect(box.calls()[1]).toEqual(['hf', 'download', 'Qwen/Qwen3-0.6B']);
  });

  it('skips everything once this artifact’s marker is there', () => {
    const box = sandbox();
    const source = { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 1 };
    expect(runCommand(source, box)).toBe(0);
    expect(runCommand(source, box)).toBe(0);
    expect(box.calls()).toHaveLength(2); // pip and hf, once
  });

  it('does not mistake upstream’s flat-layout marker, or another repo’s, for this download', () => {
    const box = sandbox();
    writeFileSync(join(box.artifact, '.modelplane-hydrated'), '');
    expect(runCommand({ repo: 'Qwen/Qwen3-8B', sizeGiB: 1 }, box)).toBe(0);
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B', sizeGiB: 1 }, box)).toBe(0);
    expect(box.calls().filter((call) => call[0] === 'hf')).toEqual([
      ['hf', 'download', 'Qwen/Qwen3-8B'],
      ['hf', 'download', 'Qwen/Qwen3-0.6B'],
    ]);
  });

  it('leaves no marker when the download fails, so the next attempt downloads (and resumes)', () => {
    const box = sandbox(1);
    const source = { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 1 };
    expect(runCommand(source, box)).not.toBe(0);
    expect(existsSync(hubMarker('Qwen/Qwen3-0.6B').replace('/mnt/artifact', box.artifact))).toBe(false);
    expect(runCommand(source, box)).not.toBe(0);
    expect(box.calls().filter((call) => call[0] === 'hf')).toHaveLength(2);
  });
});
