// mTLS as Crossplane uses it: certificates from the certs dir (flag or
// TLS_SERVER_CERTS_DIR), and a client certificate from that CA required.

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClient, makeCertificates, modelCacheXr, startServer, type RunningServer, type TestCertificates } from '#testing';

let certs: TestCertificates;
beforeAll(() => {
  certs = makeCertificates();
});

async function call(server: RunningServer, credentials: grpc.ChannelCredentials): Promise<string> {
  const client = functionClient(server.address, credentials);
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
});
