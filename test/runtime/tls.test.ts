// mTLS as Crossplane uses it: certificates from the certs dir (flag or
// TLS_SERVER_CERTS_DIR), and a client certificate from that CA required, and
// valid now. A certs dir the server can't use ends it at start-up, naming the
// file. The client names the server "localhost" (its certificate's name), as
// Crossplane names a function by its Service, never by an IP address.

import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClient, makeCertificates, modelCacheXr, startServer, type RunningServer, type TestCertificates } from '#testing';

let certs: TestCertificates;
const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
beforeAll(() => {
  certs = makeCertificates();
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
});

/** TLS to 127.0.0.1, checking the server's certificate for "localhost" (Node warns on an IP address as TLS server name). */
const SERVER_NAME: grpc.ChannelOptions = { 'grpc.ssl_target_name_override': 'localhost' };

async function call(server: RunningServer, credentials: grpc.ChannelCredentials): Promise<string> {
  const client = functionClient(server.address, credentials, SERVER_NAME);
  try {
    const rsp = await client.run({ meta: { tag: 'tls' }, observed: { composite: modelCacheXr() } }, { timeoutMs: 3000 });
    return `ok ${rsp.meta.tag}`;
  } catch (error) {
    return `refused: ${(error as grpc.ServiceError).code}`;
  } finally {
    client.close();
  }
}

describe.each([
  ['TLS_SERVER_CERTS_DIR', (dir: string) => ({ tls: true, env: { TLS_SERVER_CERTS_DIR: dir } })],
  ['--tls-server-certs-dir', (dir: string) => ({ tls: true, args: ['--tls-server-certs-dir', dir] })],
])('with certificates from %s', (_source, options) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer('compose-model-cache', options(certs.serverDir));
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves a client with a certificate from its CA', async () => {
    expect(await call(server, grpc.credentials.createSsl(certs.ca, certs.client.key, certs.client.cert))).toBe('ok tls');
  });
  it('refuses a plaintext client', async () => {
    expect(await call(server, grpc.credentials.createInsecure())).toMatch(/^refused/);
  });
  it('refuses a TLS client without a certificate', async () => {
    expect(await call(server, grpc.credentials.createSsl(certs.ca))).toMatch(/^refused/);
  });
  it('refuses a client whose certificate another CA signed', async () => {
    expect(await call(server, grpc.credentials.createSsl(certs.ca, certs.strangerClient.key, certs.strangerClient.cert))).toMatch(
      /^refused/,
    );
  });
  it.each<[string, keyof TestCertificates]>([
    ['expired', 'expiredClient'],
    ['not yet valid', 'futureClient'],
    ['for servers only (no clientAuth usage)', 'serverOnlyClient'],
  ])('refuses a client whose certificate from its CA is %s', async (_case, which) => {
    const client = certs[which] as { cert: Buffer; key: Buffer };
    expect(await call(server, grpc.credentials.createSsl(certs.ca, client.key, client.cert))).toMatch(/^refused/);
  });
  it('still serves the right client after refusing the others', async () => {
    expect(await call(server, grpc.credentials.createSsl(certs.ca, certs.client.key, certs.client.cert))).toBe('ok tls');
  });
});

describe('the client', () => {
  it('names the server as its certificate does, so Node has no IP address to warn about', async () => {
    const server = await startServer('compose-model-cache', { tls: true, env: { TLS_SERVER_CERTS_DIR: certs.serverDir } });
    try {
      expect(await call(server, grpc.credentials.createSsl(certs.ca, certs.client.key, certs.client.cert))).toBe('ok tls');
    } finally {
      await server.stop();
    }
    expect(warnings.map((w) => w.message).filter((m) => /ServerName|IP address/i.test(m))).toEqual([]);
  });
});

describe('a certs dir the server cannot use', () => {
  /** A copy of the good certs dir with one file left out or replaced. */
  function certsDir(file: string, content?: string | Buffer): string {
    const dir = mkdtempSync(join(tmpdir(), 'fn-certs-broken-'));
    for (const name of ['ca.crt', 'tls.crt', 'tls.key']) {
      if (name !== file) copyFileSync(join(certs.serverDir, name), join(dir, name));
      else if (content !== undefined) writeFileSync(join(dir, name), content);
    }
    return dir;
  }

  it.each(['ca.crt', 'tls.crt', 'tls.key'])('missing %s: the process exits 1 naming the file', async (file) => {
    const dir = certsDir(file);
    const attempt = startServer('compose-model-cache', { tls: true, env: { TLS_SERVER_CERTS_DIR: dir } });
    await expect(attempt).rejects.toThrow(new RegExp(`exited \\(code 1[\\s\\S]*cannot read ${join(dir, file)} \\(ENOENT\\)`));
  });

  it.each<[string, string, () => string | Buffer, RegExp]>([
    ['an empty ca.crt (gRPC would start, then refuse every client)', 'ca.crt', () => '', /ca\.crt holds no PEM certificate/],
    ['a tls.crt that is not PEM', 'tls.crt', () => 'garbage', /tls\.crt holds no PEM certificate/],
    ['the key of another certificate', 'tls.key', () => certs.strangerClient.key, /tls\.key is not the key of the certificate in/],
  ])('%s: the process exits 1 naming the file', async (_case, file, content, message) => {
    const dir = certsDir(file, content());
    const attempt = startServer('compose-model-cache', { tls: true, args: ['--tls-server-certs-dir', dir] });
    await expect(attempt).rejects.toThrow(/exited \(code 1/);
    await expect(attempt).rejects.toThrow(message);
  });
});
