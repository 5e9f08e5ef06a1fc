import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TLS_FILES, TlsError, serverCredentials } from '#lib';
import { makeCertificates, type TestCertificates } from '#testing';

let certs: TestCertificates;
beforeAll(() => {
  certs = makeCertificates();
});

/** A certs dir with the good files, then `change` applied (a file's content, or undefined to leave it out). */
function certsDir(change: Partial<Record<keyof typeof TLS_FILES, string | Buffer | undefined>> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'fn-certs-dir-'));
  for (const [which, file] of Object.entries(TLS_FILES) as [keyof typeof TLS_FILES, string][]) {
    if (!(which in change)) copyFileSync(join(certs.serverDir, file), join(dir, file));
    else if (change[which] !== undefined) writeFileSync(join(dir, file), change[which]);
  }
  return dir;
}

describe('serverCredentials', () => {
  it('needs no files when insecure', () => {
    expect(serverCredentials({ insecure: true, certsDir: '/nonexistent' })).toBeDefined();
  });

  it('reads a good certs dir', () => {
    expect(serverCredentials({ insecure: false, certsDir: certsDir() })).toBeDefined();
  });

  it.each(Object.entries(TLS_FILES))('names a missing %s file', (which, file) => {
    const dir = certsDir({ [which]: undefined });
    expect(() => serverCredentials({ insecure: false, certsDir: dir })).toThrow(new RegExp(`cannot read ${join(dir, file)} \\(ENOENT\\)`));
  });

  // gRPC takes these without a word and then refuses every client, or fails at the first handshake.
  it.each<[string, Partial<Record<keyof typeof TLS_FILES, string>>, RegExp]>([
    ['an empty ca.crt', { ca: '' }, /ca\.crt holds no PEM certificate/],
    ['a ca.crt that is not PEM', { ca: 'not a certificate' }, /ca\.crt holds no PEM certificate/],
    ['a tls.crt that is not PEM', { cert: 'garbage' }, /tls\.crt holds no PEM certificate/],
    [
      'a ca.crt whose certificate is damaged',
      { ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
      /ca\.crt holds a certificate that can't be read/,
    ],
    ['a tls.key that is not a key', { key: 'garbage' }, /tls\.key holds no private key that can be read/],
  ])('refuses %s, naming it', (_case, change, message) => {
    const dir = certsDir(change);
    expect(() => serverCredentials({ insecure: false, certsDir: dir })).toThrow(TlsError);
    expect(() => serverCredentials({ insecure: false, certsDir: dir })).toThrow(message);
  });

  it('refuses a tls.key that is not the key of tls.crt', () => {
    const dir = certsDir({ key: certs.strangerClient.key.toString() });
    expect(() => serverCredentials({ insecure: false, certsDir: dir })).toThrow(/tls\.key is not the key of the certificate in .*tls\.crt/);
  });
});
