// Server credentials as Crossplane expects them: mTLS with the certificates its
// package manager mounts, and a client certificate required and checked
// against that CA (a client without one, or from another CA, is refused).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';

export class TlsError extends Error {
  override name = 'TlsError';
}

export const TLS_FILES = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

export function serverCredentials(options: { insecure: boolean; certsDir: string }): grpc.ServerCredentials {
  if (options.insecure) return grpc.ServerCredentials.createInsecure();
  const read = (file: string): Buffer => {
    const path = join(options.certsDir, file);
    try {
      return readFileSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new TlsError(`cannot read ${path} (${code}); mount the certificates there, set --tls-server-certs-dir, or run with --insecure`);
    }
  };
  const ca = read(TLS_FILES.ca);
  const cert = read(TLS_FILES.cert);
  const key = read(TLS_FILES.key);
  try {
    return grpc.ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true);
  } catch (error) {
    throw new TlsError(`cannot use the certificates in ${options.certsDir}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
