// Where the pinned upstream tools are: `tools/build.sh env` is the one place
// that knows (versions in tools/versions.env, built by `make tools` into a
// cache outside the clone). Tests that run a real tool find it here, and fail
// saying how to build it when it is missing, never skip.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server.js';

export interface ToolPaths {
  TOOLS_CACHE: string;
  CROSSPLANE_VERSION: string;
  /** The CLI's own version: CROSSPLANE_VERSION up to v2.2, github.com/crossplane/cli/v2's from v2.3 (test/render/cli.ts). */
  CROSSPLANE_CLI_VERSION: string;
  PROVIDER_KUBERNETES_VERSION: string;
  /** The `crossplane` CLI (render, beta validate, xpkg). */
  CROSSPLANE: string;
  /** Crossplane core (`crossplane core start`). */
  CROSSPLANE_CORE: string;
  /** Crossplane's own CRDs (cluster/crds of the pinned tag). */
  CROSSPLANE_CRDS: string;
  /** `crossplane beta validate`'s cache, pre-filled with core's CRDs so it stays offline. */
  VALIDATE_CACHE: string;
  PROVIDER_KUBERNETES: string;
  PROVIDER_KUBERNETES_CRDS: string;
  KUBE_APISERVER: string;
  KUBE_CONTROLLER_MANAGER: string;
  KUBECTL: string;
  ETCD: string;
  /** go-containerregistry's crane: `make up`'s registry, and pushes to it. */
  CRANE: string;
}

let cached: ToolPaths | undefined;

export function toolPaths(root: string = REPO_ROOT): ToolPaths {
  if (cached) return cached;
  const text = execFileSync('bash', [join(root, 'tools', 'build.sh'), 'env'], { encoding: 'utf8' });
  const entries = text
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  cached = Object.fromEntries(entries) as unknown as ToolPaths;
  return cached;
}

/** A tool's path, or an error that says how to build it. */
export function requireTool(name: keyof ToolPaths, root: string = REPO_ROOT): string {
  const path = toolPaths(root)[name];
  if (!path || !existsSync(path)) {
    throw new Error(`${name} is not built (${path || 'no path'}): run \`make tools\` (tools/build.sh builds the pinned versions)`);
  }
  return path;
}

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a tool to its end, collecting its output. */
export function runTool(command: string, args: readonly string[], options: { cwd?: string; input?: string } = {}): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
