// Throwaway certificates for mTLS tests, made with the openssl CLI: a CA, a
// server certificate for localhost, and client certificates from that CA and
// from an unrelated one.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** A directory with ca.crt, tls.crt and tls.key, as Crossplane mounts them. */
  serverDir: string;
  ca: Buffer;
  client: { cert: Buffer; key: Buffer };
  /** A client certificate signed by another CA. */
  strangerClient: { cert: Buffer; key: Buffer };
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
  );
}

function issue(dir: string, ca: string, name: string, extensions: string): void {
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  execFileSync('sh', ['-c', `printf '%s\\n' "${extensions}" > ${name}.ext`], { cwd: dir });
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  );
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'fn-certs-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  issue(dir, 'ca', 'tls', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
  issue(dir, 'ca', 'client', 'extendedKeyUsage=clientAuth');
  issue(dir, 'other-ca', 'stranger', 'extendedKeyUsage=clientAuth');
  const read = (file: string) => readFileSync(join(dir, file));
  return {
    serverDir: dir,
    ca: read('ca.crt'),
    client: { cert: read('client.crt'), key: read('client.key') },
    strangerClient: { cert: read('stranger.crt'), key: read('stranger.key') },
  };
}
