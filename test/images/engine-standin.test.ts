// The serving stand-in for vLLM (images/engine/engine_standin.py) for real:
// under Python with the pinned huggingface_hub (.venv-hf, `make hf-venv`), with
// the args and env a ModelReplica's engine pod gets from the cache's mount
// contract, against a hub-layout cache (or a plain directory) made here.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HUGGINGFACE_HUB_VERSION } from '../../functions/compose-model-cache-hydration/src/huggingface.js';
import { deterministicBytes, sha256 } from '../support/fake-hub.js';
import { REPO_ROOT } from '../support/server.js';

const PYTHON = join(REPO_ROOT, '.venv-hf', 'bin', 'python3');
const SCRIPT = join(REPO_ROOT, 'images', 'engine', 'engine_standin.py');
const REPO = 'acme/tiny-llm';
const MAIN = 'a'.repeat(40);
const DEV = 'b'.repeat(40);
/** What a vLLM replica's args say (docs/engine-contract.md); Kubernetes expands them from the contract's env. */
const VLLM_ARGS = ['--model=$(MODELPLANE_MODEL)', '--revision=$(MODELPLANE_MODEL_REVISION)'];

interface File {
  path: string;
  content: Buffer;
}
const CONFIG: File = { path: 'config.json', content: Buffer.from('{"model_type": "tiny"}\n') };
const WEIGHTS: File = { path: 'model.safetensors', content: deterministicBytes(3 * 1024 * 1024 + 17, 1) };
const TOKENIZER: File = { path: 'tokenizer/tokenizer.json', content: Buffer.from('{"version": "1.0"}\n') };
const DEV_WEIGHTS: File = { path: 'model.safetensors', content: deterministicBytes(256 * 1024, 2) };

interface Loaded {
  source: string;
  snapshot: string;
  model: string;
  modelFrom: string;
  revision: string | null;
  hfHubOffline: string | null;
  devices: string[];
  totalBytes: number;
  files: { path: string; size: number; sha256: string }[];
}

let dir: string;
let cache: string;
const running: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(PYTHON)) {
    throw new Error(`no ${PYTHON}: run \`make hf-venv\` (make test does) to install huggingface_hub ${HUGGINGFACE_HUB_VERSION}`);
  }
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-standin-'));
  cache = join(dir, 'models');
  mkdirSync(cache);
});

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** What the hydration Job leaves: blobs by sha256, a snapshot of links per commit, a ref per branch. */
function stage(commit: string, files: readonly File[], ref?: string): string {
  const storage = join(cache, `models--${REPO.replace('/', '--')}`);
  mkdirSync(join(storage, 'blobs'), { recursive: true });
  for (const file of files) {
    const blob = sha256(file.content);
    writeFileSync(join(storage, 'blobs', blob), file.content);
    const link = join(storage, 'snapshots', commit, file.path);
    mkdirSync(join(link, '..'), { recursive: true });
    const depth = file.path.split('/').length + 1;
    symlinkSync(`${'../'.repeat(depth)}blobs/${blob}`, link);
  }
  if (ref) {
    mkdirSync(join(storage, 'refs'), { recursive: true });
    writeFileSync(join(storage, 'refs', ref), commit);
  }
  return join(storage, 'snapshots', commit);
}

/** The env a HuggingFace cache's contract gives the engine (huggingFaceMount), nothing of this machine's. */
function hubEnv(revision = 'main'): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: dir,
    HF_HUB_CACHE: cache,
    HF_HUB_OFFLINE: '1',
    MODELPLANE_MODEL: REPO,
    MODELPLANE_MODEL_REVISION: revision,
    // Nothing listens there: a lookup that went to the network would fail loudly.
    HF_ENDPOINT: 'http://127.0.0.1:9',
  };
}

/** Kubernetes' `$(VAR)` expansion of container args: a name the env lacks stays as written. */
function expand(args: readonly string[], env: Record<string, string>): string[] {
  return args.map((arg) => arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole));
}

interface Started {
  port: number;
  get: (path: string) => Promise<Response>;
  stderr: () => string;
}

/** Start the stand-in; resolves once it says it serves (after reading every file), rejects if it exits first. */
function start(args: readonly string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(PYTHON, [SCRIPT, ...expand(args, env), '--port=0', '--host=127.0.0.1'], { env });
  running.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const serving = /serving .* on 127\.0\.0\.1:(\d+) /.exec(stderr);
      if (serving) {
        const port = Number(serving[1]);
        resolve({ port, get: (path) => fetch(`http://127.0.0.1:${port}${path}`), stderr: () => stderr });
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      reject(new Error(`the stand-in exited ${code} before serving:\n${stderr}`));
    });
  });
}

/** Run the stand-in to its end (a failed load); its exit code and stderr. */
function runToExit(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stderr: string; stdout: string }> {
  const child = spawn(PYTHON, [SCRIPT, ...expand(args, env), '--port=0', '--host=127.0.0.1'], { env });
  running.push(child);
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the stand-in is still running (it should have failed to load):\n${stderr}`));
    }, 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stderr, stdout });
    });
  });
}

async function loaded(engine: Started): Promise<Loaded> {
  const response = await engine.get('/files');
  expect(response.status).toBe(200);
  return (await response.json()) as Loaded;
}

const expected = (files: readonly File[]) =>
  files.map((f) => ({ path: f.path, size: f.content.length, sha256: sha256(f.content) })).sort((a, b) => a.path.localeCompare(b.path));

describe('the serving stand-in for vLLM, under Python with huggingface_hub', () => {
  it("loads the staged snapshot offline with a vLLM replica's args, reads every file, then answers /health and /files", async () => {
    const files = [CONFIG, WEIGHTS, TOKENIZER];
    const snapshot = stage(MAIN, files, 'main');
    const engine = await start(VLLM_ARGS, hubEnv('main'));

    const health = await engine.get('/health');
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('');
    const report = await loaded(engine);
    expect(report).toMatchObject({
      source: 'huggingface',
      snapshot,
      model: REPO,
      modelFrom: '--model',
      revision: 'main',
      hfHubOffline: '1',
      devices: [],
    });
    expect(report.files).toEqual(expected(files));
    expect(report.totalBytes).toBe(files.reduce((n, f) => n + f.content.length, 0));
    const models = (await (await engine.get('/v1/models')).json()) as { data: { id: string; owned_by: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([REPO]);
    expect((await engine.get('/v2/nothing')).status).toBe(404);
  });

  it('reads exactly the pinned commit a cache staged, from the env alone when the replica gives no args', async () => {
    stage(MAIN, [CONFIG, WEIGHTS], 'main');
    const snapshot = stage(DEV, [CONFIG, DEV_WEIGHTS]);
    const engine = await start([], hubEnv(DEV));

    const report = await loaded(engine);
    expect(report).toMatchObject({ snapshot, modelFrom: 'MODELPLANE_MODEL', revision: DEV });
    expect(report.files).toEqual(expected([CONFIG, DEV_WEIGHTS]));
  });

  it("reports the devices its DRA claim gave it, as dra-example-driver's CDI spec sets them in the env", async () => {
    stage(MAIN, [CONFIG], 'main');
    const env = { ...hubEnv('main'), GPU_DEVICE_1: 'gpu-5', GPU_DEVICE_0: 'gpu-2', GPU_DEVICE_0_RESOURCE_CLAIM: 'a-claim-uid' };
    const report = await loaded(await start(VLLM_ARGS, env));
    expect(report.devices).toEqual(['gpu-2', 'gpu-5']);
  });

  it('exits 1 with the reason on stderr when nothing is staged, as an engine does offline', async () => {
    const result = await runToExit(VLLM_ARGS, hubEnv('main'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`can't load ${REPO} at revision main offline (HF_HUB_CACHE=${cache}, HF_HUB_OFFLINE=1)`);
    expect(result.stderr).toContain('LocalEntryNotFoundError');
    expect(result.stderr).not.toContain('serving');
  });

  it('exits 1 when the cache staged another revision than the one asked for', async () => {
    stage(MAIN, [CONFIG, WEIGHTS], 'main');
    const result = await runToExit(VLLM_ARGS, hubEnv('v2.0'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`can't load ${REPO} at revision v2.0 offline`);
  });

  it("exits 1 when a snapshot's blob is missing: every file is read before serving", async () => {
    const snapshot = stage(MAIN, [CONFIG, WEIGHTS], 'main');
    rmSync(join(cache, `models--${REPO.replace('/', '--')}`, 'blobs', sha256(WEIGHTS.content)));
    const result = await runToExit(VLLM_ARGS, hubEnv('main'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`can't read ${join(snapshot, WEIGHTS.path)}`);
  });

  it('exits 1 naming the unexpanded $(MODELPLANE_MODEL) when the pod got no contract', async () => {
    const result = await runToExit(VLLM_ARGS, { PATH: '/usr/bin:/bin', HOME: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the model is $(MODELPLANE_MODEL) as written');
  });

  it('reads a plain directory (an OCI image volume or a claim) as it is, the unexpanded revision ignored as vLLM does', async () => {
    const model = join(dir, 'mnt', 'models');
    for (const file of [CONFIG, WEIGHTS, TOKENIZER]) {
      mkdirSync(join(model, file.path, '..'), { recursive: true });
      writeFileSync(join(model, file.path), file.content);
    }
    // An OCI or claim contract sets MODELPLANE_MODEL (the path) and nothing else.
    const engine = await start(VLLM_ARGS, { PATH: '/usr/bin:/bin', HOME: dir, MODELPLANE_MODEL: model });

    expect((await engine.get('/health')).status).toBe(200);
    const report = await loaded(engine);
    expect(report).toMatchObject({ source: 'directory', snapshot: model, model, revision: '$(MODELPLANE_MODEL_REVISION)' });
    expect(report.files).toEqual(expected([CONFIG, WEIGHTS, TOKENIZER]));
  });

  it('exits 1 when the model directory is empty or absent', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const none = await runToExit([`--model=${empty}`], { PATH: '/usr/bin:/bin', HOME: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`${empty} holds no files`);
    const absent = await runToExit([`--model=${join(dir, 'absent')}`], { PATH: '/usr/bin:/bin', HOME: dir });
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('does not exist');
  });
});
