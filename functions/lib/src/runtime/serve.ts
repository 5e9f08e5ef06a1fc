// The process around a function: flags, logs, credentials, listening, and a
// clean exit on SIGTERM or SIGINT. Every function's main.ts is one call here.

import { setFlagsFromString } from 'node:v8';
import { FlagError, parseFlags, usage } from './flags.js';
import { jsonLogger } from './log.js';
import { createFunctionServer, type DecodeMode, type FunctionHandler } from './server.js';
import { TlsError, serverCredentials } from './tls.js';

/** Kubernetes waits 30 s after SIGTERM by default; finish well inside that. */
const SHUTDOWN_GRACE_MS = 20_000;

export async function serveFunction(options: {
  name: string;
  handler: FunctionHandler;
  decode?: DecodeMode;
  /** See createFunctionServer: a function that reads little of big requests may decode less at once. */
  decodedAtOnce?: number;
  /**
   * V8 flags the process sets on itself before it serves: the ones V8 reads
   * at every collection, which Node refuses in NODE_OPTIONS (so the image
   * cannot give them). Flags read once at start, such as the young
   * generation's size, belong in functions/<name>/node-options instead.
   */
  v8Flags?: readonly string[];
}): Promise<void> {
  const started = process.hrtime.bigint();
  for (const flag of options.v8Flags ?? []) setFlagsFromString(flag);
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`${options.name}: ${error.message}\n\n${usage(options.name)}\n`);
    process.exit(2);
  }
  if (flags.help) {
    process.stdout.write(`${usage(options.name)}\n`);
    process.exit(0);
  }

  const logger = jsonLogger({ function: options.name, debug: flags.debug });
  // A stray rejection must be seen, not take the server down mid-reconcile.
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled rejection', { error: reason instanceof Error ? reason.message : String(reason) });
  });

  let credentials;
  try {
    credentials = serverCredentials({ insecure: flags.insecure, certsDir: flags.tlsServerCertsDir });
  } catch (error) {
    if (!(error instanceof TlsError)) throw error;
    logger.error('cannot start: TLS', { error: error.message });
    process.exit(1);
  }

  const server = createFunctionServer({
    name: options.name,
    handler: options.handler,
    logger,
    decode: options.decode,
    decodedAtOnce: options.decodedAtOnce,
  });
  // Handlers go in before the server says it listens: a signal that arrives
  // right after must find them, not the default (which kills the process).
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    void server.shutdown(SHUTDOWN_GRACE_MS).then((how) => {
      if (how === 'forced') logger.warn('calls still in flight after the grace period were cancelled');
      logger.info('stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  let port: number;
  try {
    port = await server.listen(flags.address, credentials);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const inUse = /EADDRINUSE|address already in use/i.test(reason);
    logger.error(`cannot listen on ${flags.address}${inUse ? ': address already in use' : ''}`, { address: flags.address, error: reason });
    process.exit(1);
  }

  logger.info('listening', {
    address: flags.address,
    port,
    tls: !flags.insecure,
    v8Flags: options.v8Flags?.length ? [...options.v8Flags] : undefined,
    certsDir: flags.insecure ? undefined : flags.tlsServerCertsDir,
    startupMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
  });
}
