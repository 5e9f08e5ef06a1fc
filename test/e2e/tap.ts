// A tap on the wire between Crossplane and our function servers on the local
// control plane (`make up`), to capture the RunFunctionRequests Crossplane
// really sends (issue 17: the benchmark's realistic requests are checked
// against them).
//
// It is a pass-through: for each function it listens with the function's own
// server certificate (so Crossplane's client trusts it), forwards every call's
// bytes unchanged to the real server with Crossplane's client certificate, and
// hands back the real server's bytes unchanged. It keeps every request's
// bytes. Crossplane is pointed at it by the FunctionRevision's
// status.endpoint, which its function runner reads on every call (a changed
// endpoint closes the old connection: internal/xfn/function_runner.go), and
// pointed back when the tap closes.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, MAX_RESPONSE_BYTES, RUN_FUNCTION_METHOD, TLS_FILES, serverCredentials } from '#lib';
import { RAW_RUN_FUNCTION_SERVICE, grpcServerCredentials, listenGrpc } from '../support/grpc-server.js';
import { STATE_DIR, kubectlOk } from './plane.js';

const identity = (bytes: Buffer): Buffer => bytes;
/** How long the tap waits for Crossplane to close its connections once it is pointed back (see close()). */
const CLOSE_GRACE_MS = 5000;

export interface Tapped {
  /** The Function's name, e.g. modelplane-compose-model-cache. */
  readonly fn: string;
  /** Every request's bytes, oldest first. */
  readonly requests: Buffer[];
}

export interface Tap {
  readonly tapped: ReadonlyMap<string, Tapped>;
  /** Point Crossplane back at the real servers and stop listening. */
  close(): Promise<void>;
}

function revisionOf(fn: string): string {
  return kubectlOk('control-plane', [
    'get',
    'functionrevisions',
    '-l',
    `pkg.crossplane.io/package=${fn}`,
    '-o',
    'jsonpath={.items[0].metadata.name}',
  ]).trim();
}

function setEndpoint(fn: string, endpoint: string): void {
  kubectlOk('control-plane', [
    'patch',
    'functionrevision',
    revisionOf(fn),
    '--subresource',
    'status',
    '--type',
    'merge',
    '-p',
    JSON.stringify({ status: { endpoint } }),
  ]);
}

function endpointOf(fn: string): string {
  return kubectlOk('control-plane', ['get', 'functionrevision', revisionOf(fn), '-o', 'jsonpath={.status.endpoint}']).trim();
}

/** Tap the named Functions: start a pass-through for each and point Crossplane at it. */
export async function tapFunctions(fns: readonly string[]): Promise<Tap> {
  const client = join(STATE_DIR, 'crossplane-client');
  const read = (file: string): Buffer => readFileSync(join(client, file));
  const clientCredentials = grpc.credentials.createSsl(read(TLS_FILES.ca), read(TLS_FILES.key), read(TLS_FILES.cert));
  const tapped = new Map<string, Tapped>();
  const servers: grpc.Server[] = [];
  const clients: grpc.Client[] = [];
  const restore: [string, string][] = [];
  for (const fn of fns) {
    const real = endpointOf(fn);
    // Crossplane's own bound on what a function answers: the tap must not pass what Crossplane would refuse.
    const upstream = new grpc.Client(real, clientCredentials, {
      'grpc.max_receive_message_length': MAX_RESPONSE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    });
    const record: Tapped = { fn, requests: [] };
    const server = new grpc.Server({
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    });
    server.addService(RAW_RUN_FUNCTION_SERVICE, {
      runFunction: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        record.requests.push(call.request);
        upstream.makeUnaryRequest(RUN_FUNCTION_METHOD, identity, identity, call.request, call.metadata, (error, response) => {
          if (error) callback(error);
          else callback(null, response);
        });
      },
    });
    const port = await listenGrpc(
      server,
      '127.0.0.1:0',
      grpcServerCredentials(serverCredentials({ insecure: false, certsDir: join(STATE_DIR, 'function-server') })),
    );
    servers.push(server);
    clients.push(upstream);
    tapped.set(fn, record);
    restore.push([fn, real]);
    setEndpoint(fn, `dns:///localhost:${port}`);
  }
  return {
    tapped,
    async close() {
      for (const [fn, real] of restore) setEndpoint(fn, real);
      for (const upstream of clients) upstream.close();
      // Crossplane closes its connection to an old endpoint only on its next call to that function
      // (internal/xfn/function_runner.go, v2.2.1), which for a function at rest can be minutes away: a graceful
      // shutdown alone could wait that long, so whatever is still open after a short grace is cut.
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              const cut = setTimeout(() => {
                server.forceShutdown();
                resolve();
              }, CLOSE_GRACE_MS);
              server.tryShutdown(() => {
                clearTimeout(cut);
                resolve();
              });
            }),
        ),
      );
    },
  };
}
