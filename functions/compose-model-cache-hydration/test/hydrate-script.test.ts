// The hydration script for real: the exact shell command the Job runs
// (hydrationCommand, pip off), under Python with the pinned huggingface_hub
// from PyPI (.venv-hf, made by `make hf-venv`), against a fake hub on
// localhost (HF_ENDPOINT). Each case is one thing a platform team relies on.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HYDRATION_MOUNT_PATH } from '#lib';
import { HUGGINGFACE_HUB_VERSION, SCRIPT_DELIMITER, hubMarker, artifactOf, hydrationCommand } from '../src/huggingface.js';
import { HYDRATE_SCRIPT } from '../src/hydrate-script.js';
import type { HuggingFaceSource } from '../src/spec.js';
import { FakeHub, deterministicBytes as bytes, gitBlobId, sha256, type FakeFile } from '../../../test/support/fake-hub.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const VENV_BIN = join(ROOT, '.venv-hf', 'bin');
const REPO = 'acme/tiny-llm';
const TOKEN = 'hf_fakeTokenValue1234567890';
const MAIN = 'a'.repeat(40);
const DEV = 'b'.repeat(40);
const BIG = 'c'.repeat(40);

const CONFIG: FakeFile = { path: 'config.json', content: Buffer.from('{"model_type": "tiny"}\n') };
const TOKENIZER: FakeFile = { path: 'tokenizer.json', content: Buffer.from('{"version": "1.0"}\n') };
const README: FakeFile = { path: 'README.md', content: Buffer.from('# tiny\n') };
const WEIGHTS: FakeFile = { path: 'model.safetensors', content: bytes(768 * 1024, 1), lfs: true };
const ORIGINAL: FakeFile = { path: 'original/consolidated.pth', content: bytes(64 * 1024, 2), lfs: true };
const DEV_WEIGHTS: FakeFile = { path: 'model.safetensors', content: bytes(512 * 1024, 3), lfs: true };
/** Over huggingface_hub's 10 MiB download chunk, so a cut connection leaves whole chunks written to resume from. */
const LARGE_WEIGHTS: FakeFile = { path: 'model.safetensors', content: bytes(12 * 1024 * 1024, 4), lfs: true };
const HUGE: FakeFile = { path: 'huge.safetensors', content: Buffer.alloc(0), lfs: true, listedSize: 3 * 1024 ** 3 };

const REFS = {
  main: { commit: MAIN, files: [CONFIG, TOKENIZER, README, WEIGHTS, ORIGINAL] },
  dev: { commit: DEV, files: [CONFIG, TOKENIZER, DEV_WEIGHTS] },
  big: { commit: BIG, files: [CONFIG, HUGE] },
  large: { commit: 'd'.repeat(40), files: [LARGE_WEIGHTS] },
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let hub: FakeHub;
let cache: string;

beforeAll(() => {
  if (!existsSync(join(VENV_BIN, 'python3'))) {
    throw new Error(`no ${VENV_BIN}/python3: run \`make hf-venv\` (make test does) to install huggingface_hub ${HUGGINGFACE_HUB_VERSION}`);
  }
});

afterEach(async () => {
  await hub.stop();
  rmSync(cache, { recursive: true, force: true });
});

async function startHub(): Promise<void> {
  hub = new FakeHub(REPO, REFS);
  await hub.start();
  cache = mkdtempSync(join(tmpdir(), 'hydrate-'));
}

/** The Job's command, its marker moved from the claim's mount path into this test's directory. */
function command(source: HuggingFaceSource, options: { verifyOnly?: boolean } = {}): string {
  return hydrationCommand(source, { pip: false }, options).replaceAll(HYDRATION_MOUNT_PATH, cache);
}

function markerPath(source: HuggingFaceSource): string {
  return hubMarker(artifactOf(source)).replace(HYDRATION_MOUNT_PATH, cache);
}

function hydrate(
  source: HuggingFaceSource,
  options: { verifyOnly?: boolean; token?: boolean; stallSeconds?: number; env?: Record<string, string> } = {},
): Promise<Run> {
  const env: Record<string, string> = {
    PATH: `${VENV_BIN}:${process.env['PATH'] ?? ''}`,
    HOME: cache,
    HF_HUB_CACHE: cache,
    HF_ENDPOINT: hub.url,
    HF_HUB_DISABLE_TELEMETRY: '1',
    HF_HUB_DISABLE_XET: '1',
    MODELPLANE_KUBE_API: hub.url,
    MODELPLANE_JOB: 'modelcache-ml-team-qwen-hydrate-256ec',
    MODELPLANE_NAMESPACE: 'default',
    MODELPLANE_PROGRESS_INTERVAL: '0.05',
    MODELPLANE_SERVICE_ACCOUNT_DIR: join(cache, 'no-account'),
  };
  if (options.token) env['HF_TOKEN'] = TOKEN;
  if (options.stallSeconds !== undefined) env['MODELPLANE_STALL_SECONDS'] = String(options.stallSeconds);
  return sh(command(source, options), { ...env, ...options.env });
}

/** Run a shell command line to its end, with its exit code and everything it printed. */
function sh(line: string, env: Record<string, string>): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn('/bin/sh', ['-c', line], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      done({ code: code ?? -1, stdout, stderr });
    });
  });
}

const storage = () => join(cache, `models--${REPO.replace('/', '--')}`);
const staged = (commit: string, path: string) => readFileSync(join(storage(), 'snapshots', commit, path));
const downloads = () => hub.requests.filter((r) => r.method === 'GET' && r.url.includes('/resolve/'));
const lastReport = () => hub.reports().at(-1);

describe('the hydration script, under Python with huggingface_hub, against a fake hub', () => {
  it('stages every file of the default branch pinned to its commit, verifies it, reports and marks it', async () => {
    await startHub();
    hub.faults.slow = { path: WEIGHTS.path, delayMs: 40 };
    const source = { repo: REPO };
    const run = await hydrate(source);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const file of REFS.main.files) expect(staged(MAIN, file.path).equals(file.content)).toBe(true);
    // Every download is pinned to the resolved commit, never to the moving branch.
    expect(downloads().length).toBe(REFS.main.files.length);
    expect(downloads().every((r) => r.url.startsWith(`/${REPO}/resolve/${MAIN}/`))).toBe(true);
    expect(readFileSync(join(storage(), 'refs', 'main'), 'utf8')).toBe(MAIN);

    const total = REFS.main.files.reduce((sum, f) => sum + f.content.length, 0);
    const reports = hub.reports();
    expect(reports[0]).toMatchObject({ state: 'Downloading', commit: MAIN, bytesDone: 0, bytesTotal: total, filesTotal: 5 });
    // While the weights stream, the report moves between 0 and the total.
    expect(reports.some((r) => r['state'] === 'Downloading' && (r['bytesDone'] as number) > 0 && (r['bytesDone'] as number) < total)).toBe(
      true,
    );
    expect(reports.map((r) => r['state'])).toContain('Verifying');
    const done = { state: 'Verified', commit: MAIN, bytesDone: total, bytesTotal: total, filesDone: 5, filesTotal: 5, requiredGiB: 2 };
    expect(lastReport()).toEqual(done);
    expect(JSON.parse(readFileSync(markerPath(source), 'utf8'))).toEqual(done);
  });

  it('says a download is stalled when no byte arrived for the stall time, and not once bytes move again', async () => {
    await startHub();
    hub.faults.slow = { path: WEIGHTS.path, delayMs: 60 };
    const run = await hydrate({ repo: REPO, include: [WEIGHTS.path] }, { stallSeconds: 0.5 });
    expect(run.code).toBe(0);
    const stalled = hub.reports().filter((r) => r['stalledSeconds'] !== undefined);
    expect(stalled.length).toBeGreaterThan(0);
    expect(stalled.every((r) => r['state'] === 'Downloading' && typeof r['stalledSeconds'] === 'number')).toBe(true);
    expect(lastReport()).not.toHaveProperty('stalledSeconds');
  });

  it('stages only the files include/exclude select (the hub patterns), and the totals count only those', async () => {
    await startHub();
    const source = { repo: REPO, include: ['*.json', '*.safetensors', 'original/'], exclude: ['tokenizer*', 'original/*'] };
    const run = await hydrate(source);
    expect(run.code).toBe(0);
    expect(
      downloads()
        .map((r) => r.url.split('/').slice(-1)[0])
        .sort(),
    ).toEqual(['config.json', 'model.safetensors']);
    expect(readdirSync(join(storage(), 'snapshots', MAIN)).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(lastReport()).toMatchObject({ state: 'Verified', filesTotal: 2, bytesTotal: CONFIG.content.length + WEIGHTS.content.length });
  });

  it('resolves a branch to its commit, stages that snapshot and points the branch ref at it', async () => {
    await startHub();
    const run = await hydrate({ repo: REPO, revision: 'dev' });
    expect(run.code).toBe(0);
    expect(staged(DEV, 'model.safetensors').equals(DEV_WEIGHTS.content)).toBe(true);
    expect(readFileSync(join(storage(), 'refs', 'dev'), 'utf8')).toBe(DEV);
    expect(downloads().every((r) => r.url.startsWith(`/${REPO}/resolve/${DEV}/`))).toBe(true);
    expect(lastReport()).toMatchObject({ state: 'Verified', commit: DEV });
  });

  it('leaves a repository alone when the hub’s fault is scoped to another (the e2e hub’s per-case faults)', async () => {
    await startHub();
    hub.faults = { repo: 'someone/else', corrupt: WEIGHTS.path };
    const run = await hydrate({ repo: REPO });
    expect(run.code).toBe(0);
    expect(staged(MAIN, WEIGHTS.path).equals(WEIGHTS.content)).toBe(true);
    hub.faults = {};
  });

  it('fails a corrupted file naming it, writes no marker, and downloads it again on the next try', async () => {
    await startHub();
    hub.faults.corrupt = WEIGHTS.path;
    const source = { repo: REPO };
    const bad = await hydrate(source);
    expect(bad.code).toBe(1);
    const expected = `verification failed: model.safetensors: sha256 ${sha256(Buffer.from(WEIGHTS.content.map((b) => b ^ 0xff)))}, the hub says ${sha256(WEIGHTS.content)}`;
    expect(bad.stderr.trim()).toBe(expected);
    expect(lastReport()).toEqual({ state: 'Failed', message: expected });
    expect(existsSync(markerPath(source))).toBe(false);
    // The bad copy is gone (blob and link), so the retry fetches it rather than trusting it.
    expect(existsSync(join(storage(), 'blobs', sha256(WEIGHTS.content)))).toBe(false);

    hub.faults = {};
    const before = downloads().length;
    const good = await hydrate(source);
    expect(good.code).toBe(0);
    expect(
      downloads()
        .slice(before)
        .map((r) => r.url.split('/').slice(-1)[0]),
    ).toEqual(['model.safetensors']);
    expect(staged(MAIN, WEIGHTS.path).equals(WEIGHTS.content)).toBe(true);
    expect(lastReport()).toMatchObject({ state: 'Verified' });
  });

  it('fails a small file whose bytes are not its git blob id (the etag) the same way', async () => {
    await startHub();
    hub.faults.corrupt = CONFIG.path;
    const run = await hydrate({ repo: REPO, include: ['config.json'] });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`verification failed: config.json: etag (git blob id) `);
    expect(run.stderr).toContain(`the hub says ${gitBlobId(CONFIG.content)}`);
  });

  it('resumes a download whose connection was cut, from where it stopped (a Range request)', async () => {
    await startHub();
    hub.faults.cut = { path: LARGE_WEIGHTS.path, after: 11 * 1024 * 1024 };
    const run = await hydrate({ repo: REPO, revision: 'large' });
    expect(run.code).toBe(0);
    const gets = downloads();
    expect(gets.length).toBe(2);
    expect(gets[1]?.range).toMatch(/^bytes=\d+-$/);
    // huggingface_hub writes whole 10 MiB chunks: the resume asks for the rest after the first.
    expect(gets[1]?.range).toBe(`bytes=${10 * 1024 * 1024}-`);
    expect(run.stderr).toContain('Trying to resume download');
    expect(staged('d'.repeat(40), LARGE_WEIGHTS.path).equals(LARGE_WEIGHTS.content)).toBe(true);
    expect(lastReport()).toMatchObject({ state: 'Verified' });
  });

  it('refuses, before downloading anything, files that do not fit an explicit sizeGiB, saying what would', async () => {
    await startHub();
    const run = await hydrate({ repo: REPO, revision: 'big', sizeGiB: 2 });
    expect(run.code).toBe(1);
    const total = CONFIG.content.length + HUGE.listedSize!;
    expect(run.stderr.trim()).toBe(
      `the selected files of ${REPO} at commit ${BIG} are ${total} bytes (2 files), more than sizeGiB 2 holds; ask for at least 5`,
    );
    expect(downloads()).toEqual([]);
  });

  it('sizes the selection from the listing alone (--size-only): the claim it needs, nothing downloaded', async () => {
    await startHub();
    const run = await sh(hydrationCommand({ repo: REPO, revision: 'big' }, { pip: false }, { sizeOnly: true }), {
      PATH: `${VENV_BIN}:${process.env['PATH'] ?? ''}`,
      HOME: cache,
      HF_ENDPOINT: hub.url,
      MODELPLANE_KUBE_API: hub.url,
      MODELPLANE_JOB: 'sizer',
      MODELPLANE_NAMESPACE: 'default',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const total = CONFIG.content.length + HUGE.listedSize!;
    // 3 GiB and change, plus 10% and 1 GiB, in whole GiB.
    expect(lastReport()).toEqual({
      state: 'Sized',
      commit: BIG,
      bytesDone: 0,
      bytesTotal: total,
      filesDone: 0,
      filesTotal: 2,
      requiredGiB: 5,
    });
    expect(downloads()).toEqual([]);
  });

  it('skips a staged artifact by its marker, reporting what the marker records, without asking the hub', async () => {
    await startHub();
    const source = { repo: REPO, include: ['*.json'] };
    expect((await hydrate(source)).code).toBe(0);
    const recorded = lastReport();
    const before = hub.requests.filter((r) => r.method !== 'PATCH').length;
    hub.reports(); // (the second run's report is the same object, sent again)
    const again = await hydrate(source);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already hydrated, skipping');
    expect(hub.requests.filter((r) => r.method !== 'PATCH').length).toBe(before);
    expect(lastReport()).toEqual(recorded);
  });

  it('re-verifies a staged copy: a file changed on the volume fails naming it and drops the marker', async () => {
    await startHub();
    const source = { repo: REPO, include: ['*.json'] };
    expect((await hydrate(source)).code).toBe(0);
    expect((await hydrate(source, { verifyOnly: true })).code).toBe(0);
    expect(lastReport()).toMatchObject({ state: 'Verified' });
    const link = join(storage(), 'snapshots', MAIN, 'config.json');
    writeFileSync(resolve(join(storage(), 'snapshots', MAIN), readlinkSync(link)), '{"model_type": "TINY"}\n');
    const run = await hydrate(source, { verifyOnly: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('verification failed: config.json: etag (git blob id)');
    expect(existsSync(markerPath(source))).toBe(false);
    expect(downloads().length).toBe(2); // re-verification downloads nothing
  });

  it('sends the token to the hub and nowhere else: not in its output, its reports, or a hub error quoting it', async () => {
    await startHub();
    const ok = await hydrate({ repo: REPO, include: ['*.json'] }, { token: true });
    expect(ok.code).toBe(0);
    expect(hub.requests.filter((r) => r.method !== 'PATCH').every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    hub.faults.echoAuth = true;
    const failed = await hydrate({ repo: REPO, revision: 'dev' }, { token: true });
    expect(failed.code).toBe(1);
    expect(lastReport()?.['state']).toBe('Failed');
    for (const text of [
      ok.stdout,
      ok.stderr,
      failed.stdout,
      failed.stderr,
      ...hub.requests.filter((r) => r.method === 'PATCH').map((r) => r.body ?? ''),
    ]) {
      expect(text).not.toContain(TOKEN);
    }
    expect(hub.requests.filter((r) => r.method === 'PATCH').every((r) => r.authorization === undefined)).toBe(true);
  });
  it("fails a gated repository without the token, or with a refused one, in the hub's words, downloading nothing", async () => {
    await startHub();
    const GATED = 'acme/gated-llm';
    hub.addRepo(GATED, REFS, { token: TOKEN });
    for (const [what, token] of [
      ['no token', false],
      ['a refused token', true],
    ] as const) {
      hub.reset();
      if (token) hub.faults.refuseToken = true;
      const run = await hydrate({ repo: GATED, include: ['*.json'] }, { token });
      expect(run.code, what).toBe(1);
      expect(lastReport(), what).toMatchObject({ state: 'Failed' });
      expect(String(lastReport()?.['message']), what).toMatch(/^GatedRepoError: .*Cannot access gated repo/);
      expect(downloads(), what).toEqual([]);
      expect(existsSync(markerPath({ repo: GATED, include: ['*.json'] })), what).toBe(false);
    }
    hub.reset();
    expect((await hydrate({ repo: GATED, include: ['*.json'] }, { token: true })).code).toBe(0);
  });
});

describe('the test hub’s controls, as huggingface_hub meets them (the plane’s hub: docs/nodes.md)', () => {
  it('holds a file without ending the download: the client waits past its read timeout, then gets the file once', async () => {
    await startHub();
    hub.faults.hold = WEIGHTS.path;
    // A 3 s read timeout, a 7 s hold: without the hub's interim responses the client would give up and retry.
    const running = hydrate({ repo: REPO }, { env: { HF_HUB_DOWNLOAD_TIMEOUT: '3' } });
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    const atTheHold = lastReport();
    hub.faults = {};
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(atTheHold?.['filesDone'], 'the files before the weights done, the weights not begun').toBe(
      REFS.main.files.filter((f) => f.path < WEIGHTS.path).length,
    );
    expect(downloads().filter((r) => r.url.endsWith(`/${WEIGHTS.path}`))).toHaveLength(1);
    expect(staged(MAIN, WEIGHTS.path).equals(WEIGHTS.content)).toBe(true);
  }, 30_000);

  it('answers a held request with the refusal when it is let go while its client is refused (the walkthrough’s step 4)', async () => {
    await startHub();
    hub.faults.hold = WEIGHTS.path;
    const running = hydrate({ repo: REPO });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    hub.faults = { refuseFrom: ['127.0.0.'] };
    const run = await running;
    expect(run.code).toBe(1);
    expect(String(lastReport()?.['message'])).toContain('403 Forbidden: egress to the hub refused for 127.0.0.1');
    expect(existsSync(join(storage(), 'snapshots', MAIN, WEIGHTS.path)), 'the held file never came').toBe(false);
  }, 30_000);

  it('refuses the clients it is told to, as an egress proxy would, in words the script reports', async () => {
    await startHub();
    hub.faults.refuseFrom = ['127.0.0.'];
    const run = await hydrate({ repo: REPO });
    expect(run.code).toBe(1);
    expect(lastReport()).toMatchObject({ state: 'Failed' });
    expect(String(lastReport()?.['message'])).toContain('403 Forbidden: egress to the hub refused for 127.0.0.1');
    expect(downloads()).toEqual([]);
  });
});

describe('the embedded script', () => {
  it('is hydrate.py byte for byte (run `make embed` after editing it)', () => {
    expect(HYDRATE_SCRIPT).toBe(readFileSync(join(ROOT, 'functions/compose-model-cache-hydration/src/hydrate.py'), 'utf8'));
  });

  it('never holds the heredoc delimiter line, which would end it early', () => {
    expect(HYDRATE_SCRIPT.split('\n')).not.toContain(SCRIPT_DELIMITER);
  });
});
