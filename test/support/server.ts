// Start a built function server as Crossplane would run it, on an ephemeral
// port, and stop it the way Kubernetes does.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FUNCTION_NAMES = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built server of a function, under the repository root (this checkout's by default). */
export function serverEntry(name: FunctionName, root: string = REPO_ROOT): string {
  return join(root, 'functions', name, 'dist', 'main.js');
}

export interface RunningServer {
  name: FunctionName;
  address: string;
  port: number;
  process: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  stderr(): string;
  /** Send a signal (SIGTERM by default) and resolve with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** Extra flags; `--insecure` is added unless `tls` is set. */
  args?: string[];
  env?: Record<string, string>;
  tls?: boolean;
  host?: string;
  /** A fixed host:port instead of an ephemeral port on `host` (e.g. the Development targets in examples/functions.yaml). */
  address?: string;
  timeoutMs?: number;
  /** The repository root to find the built server under (needed where this module is bundled elsewhere). */
  root?: string;
}

export function startServer(name: FunctionName, options: StartOptions = {}): Promise<RunningServer> {
  const entry = serverEntry(name, options.root);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`make build\` first`);
  const host = options.address === undefined ? (options.host ?? '127.0.0.1') : options.address.slice(0, options.address.lastIndexOf(':'));
  const args = [entry, '--address', options.address ?? `${host}:0`, ...(options.tls ? [] : ['--insecure']), ...(options.args ?? [])];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  let buffered = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not listen within ${options.timeoutMs ?? 5000} ms\n${lines.join('\n')}\n${stderr}`));
    }, options.timeoutMs ?? 5000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        const entry = parseLine(line);
        if (entry?.['msg'] === 'listening' && typeof entry['port'] === 'number') {
          clearTimeout(timer);
          const port = entry['port'];
          resolve({
            name,
            port,
            address: `${host}:${port}`,
            process: child,
            lines,
            stderr: () => stderr,
            async stop(signal = 'SIGTERM') {
              if (child.exitCode === null && child.signalCode === null) child.kill(signal);
              return exited;
            },
          });
        }
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before listening\n${lines.join('\n')}\n${stderr}`));
    });
  });
}

export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A port on 127.0.0.1 that nothing listens on (the OS's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => {
        resolve(port);
      });
    });
  });
}
