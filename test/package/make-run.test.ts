// `make run`: the three servers on the ports it names, and every way of
// stopping it stops all three. Run through make itself, on free ports
// (RUN_PORTS), without rebuilding (-o build: other tests read the bundles).

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, REPO_ROOT, freePort, parseLine } from '#testing';

/** PATH without the tools cache's Node directories. */
function machinePath(): string {
  return (process.env['PATH'] ?? '')
    .split(':')
    .filter((dir) => !/\/node-\d+\.\d+\.\d+\/bin$/.test(dir))
    .join(':');
}

/** Whether nothing listens on a port any more. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () =>
      server.close(() => {
        resolve(true);
      }),
    );
  });
}

interface Stopped {
  stderr: string;
  /** Each server's log messages, by function. */
  logs: Map<string, string[]>;
  /** The port each server said it listens on, by function. */
  listened: Map<string, unknown>;
}

/** Start `make run` in its own process group, wait until all three listen, signal it, and wait for make to end. */
async function runAndStop(
  ports: number[],
  stop: (makePid: number) => void,
  whileRunning: () => Promise<void> = () => Promise.resolve(),
): Promise<Stopped> {
  const make = spawn('make', ['-s', '-o', 'build', 'run', `RUN_PORTS=${ports.join(' ')}`], {
    cwd: REPO_ROOT,
    // The PATH of a shell on this machine: without the pinned Node `make test` put first, so
    // that what puts it there for `make run` is the Makefile itself.
    env: { ...process.env, PATH: machinePath() },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = new Map<string, string[]>(FUNCTION_NAMES.map((fn) => [fn, []]));
  const listened = new Map<string, unknown>();
  let stderr = '';
  let pending = '';
  let listening = 0;
  let onListening: () => void = () => undefined;
  make.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  make.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const entry of lines.map(parseLine)) {
      const fn = String(entry?.['function']);
      logs.get(fn)?.push(String(entry?.['msg']));
      if (entry?.['msg'] !== 'listening') continue;
      listened.set(fn, entry['port']);
      if (++listening === FUNCTION_NAMES.length) onListening();
    }
  });
  // 'close': make has exited and every process holding its output too (the servers write to the same pipe).
  const ended = new Promise<void>((resolve) =>
    make.on('close', () => {
      resolve();
    }),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      onListening = resolve;
      setTimeout(() => {
        reject(new Error(`not all three listened in 15 s: ${stderr}`));
      }, 15_000).unref();
    });
    await whileRunning();
    stop(make.pid!);
    await Promise.race([
      ended,
      new Promise<never>((_, reject) =>
        setTimeout(() => {
          reject(new Error('make run did not stop in 10 s'));
        }, 10_000).unref(),
      ),
    ]);
    return { stderr, logs, listened };
  } finally {
    try {
      process.kill(-make.pid!, 'SIGKILL'); // whatever is left of the group, if a case failed
    } catch {
      // the group is gone, as it should be
    }
  }
}

/** The pid of the process listening on 127.0.0.1:port, from ss. */
function listenerPid(port: number): number {
  const line = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(line)?.[1];
  if (!pid) throw new Error(`nothing listens on ${port}: ${line}`);
  return Number(pid);
}

describe('make run', () => {
  it("runs each server on the pinned Node (tools/versions.env), not the machine's", async () => {
    const pinned = /^NODE_VERSION=(.+)$/m.exec(readFileSync(join(REPO_ROOT, 'tools/versions.env'), 'utf8'))?.[1];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const ports = [await freePort(), await freePort(), await freePort()];
    const versions: string[] = [];
    await runAndStop(
      ports,
      (pid) => process.kill(-pid, 'SIGINT'),
      () => {
        // `node --version` with the binary each server runs (its /proc/<pid>/exe).
        for (const port of ports) {
          const exe = readlinkSync(`/proc/${listenerPid(port)}/exe`);
          versions.push(execFileSync(exe, ['--version'], { encoding: 'utf8' }).trim());
        }
        return Promise.resolve();
      },
    );
    expect(versions).toEqual(ports.map(() => `v${pinned}`));
  }, 30_000);

  it.each([
    ['Ctrl-C (SIGINT to the whole group)', (pid: number) => process.kill(-pid, 'SIGINT')],
    ['SIGTERM to the whole group', (pid: number) => process.kill(-pid, 'SIGTERM')],
    ['SIGTERM to make alone', (pid: number) => process.kill(pid, 'SIGTERM')],
  ])(
    'serves on the ports it names and stops all three servers on %s',
    async (_name, stop) => {
      const ports = [await freePort(), await freePort(), await freePort()];
      const stopped = await runAndStop(ports, stop);
      // In make's order: the cache, the hydration, the replica.
      expect(FUNCTION_NAMES.map((fn) => stopped.listened.get(fn))).toEqual(ports);
      for (const fn of FUNCTION_NAMES) expect(stopped.logs.get(fn), fn).toEqual(expect.arrayContaining(['listening', 'stopped']));
      // The trap used to signal its own group, itself included, and re-enter until the shell crashed.
      expect(stopped.stderr).not.toMatch(/Segmentation fault|core dumped/);
      for (const port of ports) expect(await isFree(port), `port ${port} still taken`).toBe(true);
    },
    30_000,
  );
});
