// Server credentials as Crossplane expects them: mTLS with the certificates its
// package manager mounts, and a client certificate required and checked
// against that CA (a client without one, or from another CA, is refused).

import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

export class TlsError extends Error {
  override name = 'TlsError';
}

export const TLS_FILES = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

/** How a server listens: in plaintext, or with mTLS from these PEM files' contents. */
export type ServerTls = { insecure: true } | { insecure: false; ca: Buffer; cert: Buffer; key: Buffer };

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Every certificate in a PEM file. A file with none (empty, or not PEM) is
 * refused here: gRPC would take an unusable ca.crt without a word and then
 * refuse every client, a server that starts and can never be called.
 */
function certificatesIn(pem: Buffer, path: string): X509Certificate[] {
  const blocks = pem.toString('utf8').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TlsError(`${path} holds no PEM certificate`);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw new TlsError(`${path} holds a certificate that can't be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

function privateKeyIn(pem: Buffer, path: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new TlsError(`${path} holds no private key that can be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function serverCredentials(options: { insecure: boolean; certsDir: string }): ServerTls {
  if (options.insecure) return { insecure: true };
  const path = (file: string): string => join(options.certsDir, file);
  const read = (file: string): Buffer => {
    try {
      return readFileSync(path(file));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new TlsError(
        `cannot read ${path(file)} (${code}); mount the certificates there, set --tls-server-certs-dir, or run with --insecure`,
      );
    }
  };
  const ca = read(TLS_FILES.ca);
  const cert = read(TLS_FILES.cert);
  const key = read(TLS_FILES.key);
  // Checked here, so a bad file is named at start-up rather than found by the first client (or never).
  certificatesIn(ca, path(TLS_FILES.ca));
  const [leaf] = certificatesIn(cert, path(TLS_FILES.cert));
  if (!leaf!.checkPrivateKey(privateKeyIn(key, path(TLS_FILES.key)))) {
    throw new TlsError(`${path(TLS_FILES.key)} is not the key of the certificate in ${path(TLS_FILES.cert)}`);
  }
  try {
    // What the server will build from them: any other failure is found here too.
    createSecureContext({ ca, cert, key });
    return { insecure: false, ca, cert, key };
  } catch (error) {
    throw new TlsError(`cannot use the certificates in ${options.certsDir}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
