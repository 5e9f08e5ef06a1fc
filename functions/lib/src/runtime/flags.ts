// The command line Crossplane's function runtime and `crossplane render` use.

import { parseArgs } from 'node:util';

export const DEFAULT_ADDRESS = '0.0.0.0:9443';
/** Where Crossplane's package manager mounts the server certificates. */
export const DEFAULT_TLS_SERVER_CERTS_DIR = '/tls/server';

export interface ServerFlags {
  address: string;
  insecure: boolean;
  tlsServerCertsDir: string;
  debug: boolean;
  help: boolean;
}

export class FlagError extends Error {
  override name = 'FlagError';
}

/**
 * Parse argv (without node and the script). The certs dir comes from the flag,
 * else TLS_SERVER_CERTS_DIR (what Crossplane sets on the Deployment), else the
 * default. `--tls-certs-dir` is accepted too: upstream's Python functions use it.
 */
export function parseFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ServerFlags {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        address: { type: 'string' },
        insecure: { type: 'boolean' },
        'tls-server-certs-dir': { type: 'string' },
        'tls-certs-dir': { type: 'string' },
        debug: { type: 'boolean', short: 'd' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new FlagError(error instanceof Error ? error.message : String(error));
  }
  const address = values.address ?? DEFAULT_ADDRESS;
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/.test(address)) {
    throw new FlagError(`--address must be host:port (got ${JSON.stringify(address)})`);
  }
  return {
    address,
    insecure: values.insecure ?? false,
    tlsServerCertsDir:
      values['tls-server-certs-dir'] ?? values['tls-certs-dir'] ?? nonEmpty(env['TLS_SERVER_CERTS_DIR']) ?? DEFAULT_TLS_SERVER_CERTS_DIR,
    debug: values.debug ?? false,
    help: values.help ?? false,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

export function usage(name: string): string {
  return [
    `Usage: ${name} [flags]`,
    '',
    'A Crossplane composition function server (gRPC, RunFunction).',
    '',
    'Flags:',
    `  --address <host:port>            Where to listen. Default ${DEFAULT_ADDRESS}.`,
    '  --insecure                       Serve without TLS (for crossplane render and local runs).',
    `  --tls-server-certs-dir <dir>     tls.crt, tls.key and ca.crt for mTLS. Default $TLS_SERVER_CERTS_DIR or ${DEFAULT_TLS_SERVER_CERTS_DIR}.`,
    '  -d, --debug                      Log each request in more detail.',
    '  -h, --help                       Show this help.',
  ].join('\n');
}
