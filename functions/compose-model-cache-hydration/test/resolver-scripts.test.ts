// The OCI resolver's three scripts, taken from the Job the function composes
// and run by a real /bin/sh (jq, sha256sum and tail are real; crane and
// kubectl are stand-ins that record what they were asked). The images can't
// run here; what the scripts do with files, arguments and exit codes can.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolverJob } from '../src/oci.js';

interface Container {
  name: string;
  command: string[];
  env?: { name: string; value: string }[];
}

const HOSTILE_REF = `reg.io/x:v1'; touch PWNED; echo $(touch PWNED2) \`touch PWNED3\``;

/** The scripts and env of each container, for a reference and pull secrets. */
function containers(ref: string, secrets: string[]): Record<string, Container> {
  const job = resolverJob({
    name: 'modelcache-ml-team-qwen-resolve-167ed',
    source: { ref, imagePullSecrets: secrets },
    labels: {},
    templateLabels: {},
    run: { attempt: 1 },
  }) as unknown as {
    spec: { template: { spec: { initContainers: Container[]; containers: Container[] } } };
  };
  const pod = job.spec.template.spec;
  return Object.fromEntries([...pod.initContainers, ...pod.containers].map((c) => [c.name, c]));
}

interface Run {
  status: number;
  stderr: string;
}

class Sandbox {
  readonly dir = mkdtempSync(join(tmpdir(), 'resolver-'));
  readonly bin = join(this.dir, 'bin');
  readonly work = join(this.dir, 'work');
  readonly secrets = join(this.dir, 'secrets');

  constructor(crane: { manifest?: string; error?: string }) {
    mkdirSync(this.bin);
    mkdirSync(this.work);
    const log = join(this.dir, 'calls');
    // Each stand-in logs its argv NUL-separated, one call per line, and where DOCKER_CONFIG points.
    const record = `printf '%s\\0' "$(basename "$0")" "$@" >> '${log}'; printf '\\n' >> '${log}'`;
    const manifestFile = join(this.dir, 'manifest.json');
    if (crane.manifest !== undefined) writeFileSync(manifestFile, crane.manifest);
    const craneBody =
      crane.error !== undefined
        ? `printf '%s\\n' 'Error: ${crane.error}' >&2; exit 1`
        : `printf '%s' "\${DOCKER_CONFIG:-}" > '${join(this.dir, 'docker-config-seen')}'; cat '${manifestFile}'`;
    this.stub('crane', `${record}\n${craneBody}`);
    // kubectl: "create configmap" prints the files it was given; "apply" keeps the file it applied.
    this.stub(
      'kubectl',
      `${record}\ncase "$1" in create) for f in $(ls "${this.work}/out"); do printf '%s=%s\\n' "$f" "$(cat "${this.work}/out/$f")"; done ;; apply) cp "${this.work}/configmap.yaml" '${join(this.dir, 'applied')}' ;; esac`,
    );
  }

  private stub(name: string, body: string): void {
    const path = join(this.bin, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
  }

  run(container: Container): Run {
    const script = container.command[2]!.replaceAll('/var/run/modelplane/pull-secrets', this.secrets).replaceAll('/work', this.work);
    const env: Record<string, string> = { PATH: `${this.bin}:/usr/bin:/bin` };
    for (const { name, value } of container.env ?? []) env[name] = value.replaceAll('/work', this.work);
    const result = spawnSync('/bin/sh', ['-c', script], { cwd: this.dir, env, encoding: 'utf8' });
    return { status: result.status ?? -1, stderr: result.stderr };
  }

  calls(): string[][] {
    const log = join(this.dir, 'calls');
    if (!existsSync(log)) return [];
    return readFileSync(log, 'utf8')
      .split('\0\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\0'));
  }

  out(): Record<string, string> {
    const dir = join(this.work, 'out');
    return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
  }

  read(file: string): string {
    return readFileSync(join(this.dir, file), 'utf8');
  }
}

const MANIFEST = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json' }, null, 2);

describe('credentials', () => {
  it('merges the auths of every pull secret that exists into one docker config', () => {
    const box = new Sandbox({});
    const auth = (host: string) => ({ auths: { [host]: { auth: Buffer.from(`u:${host}`).toString('base64') } } });
    mkdirSync(join(box.secrets, '0'), { recursive: true });
    writeFileSync(join(box.secrets, '0', '.dockerconfigjson'), JSON.stringify(auth('registry.example.com')));
    mkdirSync(join(box.secrets, '1')); // an optional Secret that doesn't exist: an empty directory
    mkdirSync(join(box.secrets, '2'));
    writeFileSync(join(box.secrets, '2', '.dockerconfigjson'), JSON.stringify(auth('ghcr.io')));
    expect(box.run(containers('reg.io/x:v1', ['a', 'b', 'c'])['credentials']!)).toMatchObject({ status: 0 });
    expect(JSON.parse(readFileSync(join(box.work, 'docker', 'config.json'), 'utf8'))).toEqual({
      auths: { ...auth('registry.example.com').auths, ...auth('ghcr.io').auths },
    });
  });

  it('writes an empty config when no pull secret exists', () => {
    const box = new Sandbox({});
    mkdirSync(join(box.secrets, '0'), { recursive: true });
    expect(box.run(containers('reg.io/x:v1', ['a'])['credentials']!)).toMatchObject({ status: 0 });
    expect(JSON.parse(readFileSync(join(box.work, 'docker', 'config.json'), 'utf8'))).toEqual({ auths: {} });
  });
});

describe('resolve', () => {
  it('fetches the manifest once, takes the digest from its bytes, and records the reference as given', () => {
    const box = new Sandbox({ manifest: MANIFEST });
    const job = containers(HOSTILE_REF, ['regcred']);
    expect(box.run(job['resolve']!)).toMatchObject({ status: 0 });
    expect(box.calls()).toEqual([['crane', 'manifest', HOSTILE_REF]]);
    expect(box.out()).toEqual({
      ref: HOSTILE_REF,
      manifest: MANIFEST,
      digest: `sha256:${createHash('sha256').update(MANIFEST).digest('hex')}`,
    });
    expect(box.read('docker-config-seen')).toBe(join(box.work, 'docker'));
    for (const file of ['PWNED', 'PWNED2', 'PWNED3']) expect(existsSync(join(box.dir, file))).toBe(false);
  });

  it('records what the registry said when the fetch fails, and leaves failing to the publish step', () => {
    const box = new Sandbox({ error: 'GET https://reg.io/v2/x/manifests/v1: UNAUTHORIZED: authentication required' });
    expect(box.run(containers('reg.io/x:v1', [])['resolve']!)).toMatchObject({ status: 0 });
    expect(box.out()).toEqual({
      ref: 'reg.io/x:v1',
      error: 'Error: GET https://reg.io/v2/x/manifests/v1: UNAUTHORIZED: authentication required\n',
    });
  });
});

describe('publish', () => {
  it('server-side applies the files as the ConfigMap’s data, under its own field manager', () => {
    const box = new Sandbox({ manifest: MANIFEST });
    const job = containers('reg.io/x:v1', []);
    box.run(job['resolve']!);
    expect(box.run(job['publish']!)).toMatchObject({ status: 0 });
    expect(box.calls().slice(1)).toEqual([
      [
        'kubectl',
        'create',
        'configmap',
        'modelcache-ml-team-qwen-resolve-167ed',
        '--namespace',
        'default',
        `--from-file=${box.work}/out`,
        '--dry-run=client',
        '--output=yaml',
      ],
      [
        'kubectl',
        'apply',
        '--server-side',
        '--force-conflicts',
        '--field-manager=modelplane-resolver',
        `--filename=${box.work}/configmap.yaml`,
      ],
    ]);
    expect(box.read('applied')).toContain('ref=reg.io/x:v1');
  });

  it('publishes an error too, then fails the pod so the Job retries and, in the end, reports Failed', () => {
    const box = new Sandbox({ error: 'MANIFEST_UNKNOWN: manifest unknown' });
    const job = containers('reg.io/x:v404', []);
    box.run(job['resolve']!);
    const published = box.run(job['publish']!);
    expect(published.status).toBe(1);
    expect(published.stderr).toContain('MANIFEST_UNKNOWN: manifest unknown');
    expect(box.read('applied')).toContain('error=Error: MANIFEST_UNKNOWN: manifest unknown');
  });
});
