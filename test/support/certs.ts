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
  /** From the right CA, but expired (2020), not yet valid (2099), or for servers only (no clientAuth). */
  expiredClient: { cert: Buffer; key: Buffer };
  futureClient: { cert: Buffer; key: Buffer };
  serverOnlyClient: { cert: Buffer; key: Buffer };
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

/**
 * Sign `name`.csr with the CA for a given validity window: `openssl ca`,
 * because OpenSSL 3.0's `x509 -req` can't set a start date.
 */
function issueDated(dir: string, ca: string, csr: string, out: string, window: { start: string; end: string }, usage: string): void {
  const config = [
    '[ca]',
    'default_ca = test',
    '[test]',
    'dir = .',
    'database = index.txt',
    'new_certs_dir = .',
    'serial = serial',
    'default_md = sha256',
    'policy = any',
    'unique_subject = no',
    '[any]',
    'commonName = supplied',
    '[usage]',
    `extendedKeyUsage = ${usage}`,
  ].join('\n');
  execFileSync('sh', ['-c', `printf '%s\\n' "${config}" > ${out}.cnf; : > index.txt; [ -f serial ] || echo 01 > serial`], { cwd: dir });
  openssl(
    dir,
    'ca',
    '-batch',
    '-config',
    `${out}.cnf`,
    '-cert',
    `${ca}.crt`,
    '-keyfile',
    `${ca}.key`,
    '-in',
    `${csr}.csr`,
    '-out',
    `${out}.crt`,
    '-startdate',
    window.start,
    '-enddate',
    window.end,
    '-extensions',
    'usage',
  );
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'fn-certs-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  issue(dir, 'ca', 'tls', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
  issue(dir, 'ca', 'client', 'extendedKeyUsage=clientAuth');
  issue(dir, 'other-ca', 'stranger', 'extendedKeyUsage=clientAuth');
  // Same key and request as the good client: only the dates or the usage differ.
  issueDated(dir, 'ca', 'client', 'expired', { start: '20200101000000Z', end: '20200102000000Z' }, 'clientAuth');
  issueDated(dir, 'ca', 'client', 'future', { start: '20990101000000Z', end: '20991231000000Z' }, 'clientAuth');
  issueDated(dir, 'ca', 'client', 'server-only', { start: '20200101000000Z', end: '20990101000000Z' }, 'serverAuth');
  const read = (file: string) => readFileSync(join(dir, file));
  return {
    serverDir: dir,
    ca: read('ca.crt'),
    client: { cert: read('client.crt'), key: read('client.key') },
    strangerClient: { cert: read('stranger.crt'), key: read('stranger.key') },
    expiredClient: { cert: read('expired.crt'), key: read('client.key') },
    futureClient: { cert: read('future.crt'), key: read('client.key') },
    serverOnlyClient: { cert: read('server-only.crt'), key: read('client.key') },
  };
}
