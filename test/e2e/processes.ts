// The processes of the local control plane (`make up` starts each in a
// process group of its own and writes "<pid> <name>" to $state/pids), from a
// test: stop one (kill -9, or a TERM), and start it again exactly as up.sh
// did (its argv, environment and directory, read from /proc before it is
// stopped), its output appended to its log and its pid to the pids file, so
// `make down` stops it like the rest.

import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, openSync, readFileSync, readlinkSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { STATE_DIR } from './plane.js';

export interface PlaneProcess {
  /** The name up.sh gave it: crossplane, provider-kubernetes, compose-model-cache-hydration, apiserver-cluster-a, … */
  name: string;
  pid: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

/** Whether a pid runs (a zombie, killed and not yet reaped, does not). */
export function running(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    // The state is the field after the command's closing parenthesis.
    const text = readFileSync(stat, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const nulSplit = (text: string): string[] => text.split('\0').filter((part) => part.length > 0);

/** The running process up.sh (or a restart here) started under `name`: the last such line of the pids file. */
export function planeProcess(name: string): PlaneProcess {
  const lines = readFileSync(join(STATE_DIR, 'pids'), 'utf8').split('\n');
  for (const line of lines.reverse()) {
    const [pid, ...rest] = line.trim().split(' ');
    if (rest.join(' ') !== name || pid === undefined) continue;
    const id = Number(pid);
    if (!running(id)) continue;
    const argv = nulSplit(readFileSync(`/proc/${id}/cmdline`, 'utf8'));
    const env: Record<string, string> = {};
    for (const entry of nulSplit(readFileSync(`/proc/${id}/environ`, 'utf8'))) {
      const at = entry.indexOf('=');
      if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return { name, pid: id, argv, env, cwd: readlinkSync(`/proc/${id}/cwd`) };
  }
  throw new Error(`no running process named ${name} in ${join(STATE_DIR, 'pids')}`);
}

/** Send `signal` and wait until the process is gone (a TERM that is not heeded within 30 s becomes a KILL). */
export async function stop(process_: PlaneProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const send = (which: NodeJS.Signals): void => {
    try {
      process.kill(process_.pid, which);
    } catch {
      // Gone already.
    }
  };
  send(signal);
  const deadline = Date.now() + 30_000;
  while (running(process_.pid)) {
    if (Date.now() > deadline) send('SIGKILL');
    await sleep(100);
  }
}

/** Start it again as it was started, in a process group of its own; returns the new process. */
export function restart(process_: PlaneProcess): PlaneProcess {
  const log = openSync(join(STATE_DIR, 'logs', `${process_.name}.log`), 'a');
  try {
    const [command, ...args] = process_.argv;
    if (command === undefined) throw new Error(`${process_.name} had no command line`);
    const child = spawn(command, args, { env: process_.env, cwd: process_.cwd, detached: true, stdio: ['ignore', log, log] });
    if (child.pid === undefined) throw new Error(`${process_.name} did not start`);
    child.unref();
    appendFileSync(join(STATE_DIR, 'pids'), `${child.pid} ${process_.name}\n`);
    return { ...process_, pid: child.pid };
  } finally {
    closeSync(log);
  }
}
