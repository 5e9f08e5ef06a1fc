// The hydration Job's command, run by a real /bin/sh with stand-ins for pip
// and python3 that record their arguments (and python3 its standard input):
// a repo, revision, pattern or index URL holding quotes, command
// substitutions, separators or newlines reaches them as one argument, the
// script arrives whole, and nothing else runs. (hydrate-script.test.ts runs
// the same command with the real Python and huggingface_hub.)

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HUGGINGFACE_HUB_VERSION, hubMarker, hydrationCommand, type HubInstall } from '../src/huggingface.js';
import { HYDRATE_SCRIPT } from '../src/hydrate-script.js';
import { shellQuote } from '../src/shell.js';
import type { HuggingFaceSource } from '../src/spec.js';

interface Sandbox {
  dir: string;
  artifact: string;
  /** Each call of a stand-in: its name and arguments. */
  calls(): string[][];
  /** What python3 read on standard input, last call. */
  stdin(): string;
}

/** A directory standing in for /mnt/artifact, and pip/python3 that log their argv (NUL-separated, one call per line). */
function sandbox(pythonExit = 0): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'hydrate-'));
  const bin = join(dir, 'bin');
  const artifact = join(dir, 'artifact');
  execFileSync('mkdir', ['-p', bin, artifact]);
  const log = join(dir, 'calls');
  const stdin = join(dir, 'stdin');
  writeFileSync(join(bin, 'pip'), `#!/bin/sh\nprintf '%s\\0' pip "$@" >> '${log}'\nprintf '\\n' >> '${log}'\n`);
  writeFileSync(
    join(bin, 'python3'),
    `#!/bin/sh\nprintf '%s\\0' python3 "$@" >> '${log}'\nprintf '\\n' >> '${log}'\ncat > '${stdin}'\nexit ${pythonExit}\n`,
  );
  chmodSync(join(bin, 'pip'), 0o755);
  chmodSync(join(bin, 'python3'), 0o755);
  return {
    dir,
    artifact,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\0\n')
            .filter((line) => line !== '')
            .map((line) => line.split('\0'))
        : [],
    stdin: () => readFileSync(stdin, 'utf8'),
  };
}

function runCommand(source: HuggingFaceSource, box: Sandbox, install?: HubInstall, options?: { sizeOnly?: boolean }): number {
  const command = hydrationCommand(source, install, options).replaceAll('/mnt/artifact', box.artifact);
  const result = spawnSync('/bin/sh', ['-c', command], {
    cwd: box.dir,
    env: { PATH: `${join(box.dir, 'bin')}:/usr/bin:/bin` },
    encoding: 'utf8',
  });
  return result.status ?? -1;
}

const PIP = ['pip', 'install', '--quiet', '--disable-pip-version-check', `huggingface_hub==${HUGGINGFACE_HUB_VERSION}`];

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
  it.each(HOSTILE)(
    'passes a repo, revision and patterns with %s to the script as single arguments and runs nothing else',
    (_name, value) => {
      const box = sandbox();
      const source = { repo: value, revision: value, include: [value], exclude: [value], sizeGiB: 3 };
      expect(runCommand(source, box)).toBe(0);
      const marker = hubMarker(`${value}@${value} include=${JSON.stringify([value])} exclude=${JSON.stringify([value])}`);
      expect(box.calls()).toEqual([
        PIP,
        [
          'python3',
          '-',
          value,
          `--revision=${value}`,
          `--include=${value}`,
          `--exclude=${value}`,
          '--size-gib=3',
          `--marker=${marker.replace('/mnt/artifact', box.artifact)}`,
        ],
      ]);
      expect(existsSync(join(box.dir, 'PWNED'))).toBe(false);
    },
  );

  it('hands python3 the embedded script whole, on standard input', () => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box)).toBe(0);
    expect(box.stdin()).toBe(`${HYDRATE_SCRIPT.trimEnd()}\n`);
  });

  it('passes the patterns sorted and once each: their order selects nothing', () => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B', include: ['*.safetensors', '*.json', '*.json'] }, box)).toBe(0);
    expect(box.calls()[1]?.filter((arg) => arg.startsWith('--include'))).toEqual(['--include=*.json', '--include=*.safetensors']);
  });

  it.each(HOSTILE)('installs from an index URL with %s as one argument', (_name, value) => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box, { pip: true, indexUrl: value })).toBe(0);
    expect(box.calls()[0]).toEqual([...PIP.slice(0, 4), '--index-url', value, PIP[4]]);
    expect(existsSync(join(box.dir, 'PWNED'))).toBe(false);
  });

  it('trusts a plain-http index by its host and port (pip ignores one otherwise), never an https one', () => {
    const http = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, http, { pip: true, indexUrl: 'http://10.209.255.1:15081/simple/' })).toBe(0);
    expect(http.calls()[0]).toEqual([
      ...PIP.slice(0, 4),
      '--index-url',
      'http://10.209.255.1:15081/simple/',
      '--trusted-host',
      '10.209.255.1:15081',
      PIP[4],
    ]);
    const https = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, https, { pip: true, indexUrl: 'https://pypi.corp.example/simple' })).toBe(0);
    expect(https.calls()[0]).not.toContain('--trusted-host');
  });

  it('installs nothing when the image carries huggingface_hub (pip off)', () => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box, { pip: false })).toBe(0);
    expect(box.calls().map((call) => call[0])).toEqual(['python3']);
  });

  it('installs nothing once this artifact’s marker is there (the script then reports what it records)', () => {
    const box = sandbox();
    const source = { repo: 'Qwen/Qwen3-0.6B' };
    writeFileSync(hubMarker('Qwen/Qwen3-0.6B').replace('/mnt/artifact', box.artifact), '{}');
    expect(runCommand(source, box)).toBe(0);
    expect(box.calls().map((call) => call[0])).toEqual(['python3']);
  });

  it('does not take upstream’s flat-layout marker, or another artifact’s, for this one', () => {
    const box = sandbox();
    writeFileSync(join(box.artifact, '.modelplane-hydrated'), '');
    writeFileSync(hubMarker('Qwen/Qwen3-8B').replace('/mnt/artifact', box.artifact), '{}');
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box)).toBe(0);
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B', include: ['*.json'] }, box)).toBe(0);
    expect(box.calls().map((call) => call[0])).toEqual(['pip', 'python3', 'pip', 'python3']);
  });

  it('sizes without a marker: --size-only, and pip always (nothing is staged to skip by)', () => {
    const box = sandbox();
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box, undefined, { sizeOnly: true })).toBe(0);
    expect(box.calls()).toEqual([PIP, ['python3', '-', 'Qwen/Qwen3-0.6B', '--size-only']]);
  });

  it('fails when the script fails (exec: its exit status is the Job’s)', () => {
    const box = sandbox(3);
    expect(runCommand({ repo: 'Qwen/Qwen3-0.6B' }, box)).toBe(3);
  });
});
