// The gRPC server every function runs in. We start it ourselves rather than
// with the SDK's convenience start, which accepts clients without a
// certificate, ignores TLS_SERVER_CERTS_DIR and exits 0 when the port is taken.

import type * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { InputError } from '../input.js';
import { getString } from '../json.js';
import { FunctionRunnerServiceService, Severity, type RunFunctionRequest, type RunFunctionResponse } from '../protocol.js';
import { fatalResult } from '../response.js';
import { RESPONSE_TTL_SECONDS } from '../constants.js';
import { DecodeError, decodeRequest, decodeRequestOnDemand, encodeResponse } from './codec.js';
import type { Logger } from './log.js';

/** A composition function: a pure function of its request. */
export type FunctionHandler = (req: RunFunctionRequest) => RunFunctionResponse;

/**
 * gRPC's default 4 MiB limit is crossed by a ModelCache over about 1,300
 * clusters. 64 MiB admits some 20,000 clusters and still bounds what one
 * request can make a server allocate.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Run the handler, never letting it throw: bad input (InputError) and any
 * other failure become a Fatal result with the error's message, so Crossplane
 * changes nothing and shows why, and the server answers the next request.
 */
export function runSafely(name: string, handler: FunctionHandler, req: RunFunctionRequest, logger: Logger): RunFunctionResponse {
  try {
    return handler(req);
  } catch (error) {
    const rsp: RunFunctionResponse = {
      meta: { tag: req.meta?.tag ?? '', ttl: { seconds: RESPONSE_TTL_SECONDS, nanos: 0 } },
      desired: undefined,
      results: [],
      requirements: undefined,
      conditions: [],
    };
    if (error instanceof InputError) {
      fatalResult(rsp, error.message);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      // The stack names code locations only; nothing from the request is in it.
      logger.error('handler failed', { tag: req.meta?.tag, error: message, stack: error instanceof Error ? error.stack : undefined });
      fatalResult(rsp, `${name} failed: ${message}`);
    }
    return rsp;
  }
}

function summarize(req: RunFunctionRequest, rsp: RunFunctionResponse): Record<string, string | number | undefined> {
  const xr: unknown = req.observed?.composite?.resource;
  const namespace = getString(xr, 'metadata', 'namespace');
  const name = getString(xr, 'metadata', 'name');
  const count = (severity: Severity): number => rsp.results.filter((r) => r.severity === severity).length;
  return {
    tag: req.meta?.tag,
    xr: name === undefined ? undefined : namespace === undefined ? name : `${namespace}/${name}`,
    desired: Object.keys(rsp.desired?.resources ?? {}).length,
    requirements: Object.keys(rsp.requirements?.resources ?? {}).length,
    fatal: count(Severity.SEVERITY_FATAL),
    warnings: count(Severity.SEVERITY_WARNING),
  };
}

/**
 * The RunFunction service carrying raw bytes both ways. A request is decoded
 * (by our direct codec: the generated one's wire format and shapes, a fraction
 * of its cost) inside the handler, which runs to its answer without yielding,
 * so only one decoded request is ever alive: with many calls in flight, the
 * ones waiting hold their few raw megabytes, not their decoded tens.
 */
export const RUN_FUNCTION_SERVICE = {
  runFunction: {
    ...FunctionRunnerServiceService.runFunction,
    requestDeserialize: (bytes: Buffer): Buffer => bytes,
    responseSerialize: (bytes: Buffer): Buffer => bytes,
  },
};

/**
 * How a server decodes requests. `on-demand` (what the functions run with)
 * decodes a Struct's nested parts only when the handler first reads them;
 * `full` decodes everything first, as the benchmark's floor does. Both
 * refuse the same bytes and give a handler the same values.
 */
export type DecodeMode = 'on-demand' | 'full';

/**
 * Answer one call's bytes: decode, run, log, encode. Throws only a DecodeError, for bytes that are not a request.
 * (Tests may pass their own decoder.)
 */
export function answer(
  name: string,
  handler: FunctionHandler,
  bytes: Buffer,
  logger: Logger,
  decode: DecodeMode | ((bytes: Buffer) => RunFunctionRequest) = 'on-demand',
): Buffer {
  const started = process.hrtime.bigint();
  const req = decode === 'full' ? decodeRequest(bytes) : decode === 'on-demand' ? decodeRequestOnDemand(bytes) : decode(bytes);
  let rsp = runSafely(name, handler, req, logger);
  let encoded: Buffer;
  try {
    encoded = encodeResponse(rsp);
  } catch (error) {
    // A value no Struct can hold is a bug in the function; answer Fatal rather than fail the call.
    rsp = runSafely(
      name,
      () => {
        throw new Error(`its answer could not be encoded: ${error instanceof Error ? error.message : String(error)}`);
      },
      req,
      logger,
    );
    encoded = encodeResponse(rsp);
  }
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  logger.info('RunFunction', { ...summarize(req, rsp), bytes: bytes.length, durationMs: Math.round(durationMs * 1000) / 1000 });
  if (logger.debugEnabled) {
    logger.debug('RunFunction detail', {
      tag: req.meta?.tag,
      requirementKeys: Object.keys(rsp.requirements?.resources ?? {}).sort(),
      desiredKeys: Object.keys(rsp.desired?.resources ?? {}).sort(),
      conditions: rsp.conditions.map((c) => `${c.type}=${c.reason}`),
    });
  }
  return encoded;
}

export function createFunctionServer(options: {
  name: string;
  handler: FunctionHandler;
  logger: Logger;
  decode?: DecodeMode;
}): grpc.Server {
  const { name, handler, logger, decode = 'on-demand' } = options;
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  server.addService(RUN_FUNCTION_SERVICE, {
    runFunction: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      let encoded: Buffer;
      try {
        encoded = answer(name, handler, call.request, logger, decode);
      } catch (error) {
        // Bytes that are not a request get INVALID_ARGUMENT; anything else (never expected) INTERNAL. The server stays up.
        const undecodable = error instanceof DecodeError;
        const message = error instanceof Error ? error.message : String(error);
        const details = undecodable ? `cannot decode the RunFunctionRequest: ${message}` : `${name} failed: ${message}`;
        if (undecodable) logger.warn('RunFunction refused', { bytes: call.request.length, error: details });
        else logger.error('RunFunction failed', { bytes: call.request.length, error: details });
        callback({ code: undecodable ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL, details });
        return;
      }
      callback(null, encoded);
    },
  });
  return server;
}

/**
 * How many bytes a client may send before the server acknowledges them, per
 * call and per connection. gRPC-js's server keeps HTTP/2's default of
 * 64 KiB, so Crossplane's 11 MB request at a thousand clusters crossed the
 * wire in about 175 rounds of window updates, a third of the call. Measured
 * with `make bench` on compose-model-cache's realistic steady request at
 * N = 1,000 (p50; the server's peak RSS, calls one at a time): 64 KiB
 * 57-62 ms, 148-157 MB; 256 KiB 49-50 ms, 166 MB; 1 MiB 43-45 ms,
 * 173-201 MB; 16 MiB (where Go's gRPC grows its own windows) 50 ms, 201 MB
 * (BENCHMARKS.md, "What one run does not show"). A wider
 * window lets more of a request arrive at once, and the server holds it
 * longer before the collector frees it; 256 KiB takes most of the speed for
 * little of that memory.
 */
export const RECEIVE_WINDOW_BYTES = 256 * 1024;

/**
 * Announce RECEIVE_WINDOW_BYTES on every connection the server accepts.
 * gRPC-js offers no option for a server's windows, so this reaches its HTTP/2
 * servers (a private field, checked here and by test/runtime's flow-control
 * test, which fails if an upgrade moves it). Returns whether it could.
 */
function widenReceiveWindows(server: grpc.Server): boolean {
  const found = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(found instanceof Map)) return false;
  for (const http2Server of (found as Map<http2.Http2Server | http2.Http2SecureServer, unknown>).keys()) {
    http2Server.updateSettings({ initialWindowSize: RECEIVE_WINDOW_BYTES });
    http2Server.on('session', (session: http2.ServerHttp2Session) => {
      session.setLocalWindowSize(RECEIVE_WINDOW_BYTES);
    });
  }
  return true;
}

/** Bind and resolve with the port actually bound (it differs from the address when that asks for port 0). */
export function listen(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => {
      if (error) reject(error);
      else {
        widenReceiveWindows(server);
        resolve(port);
      }
    });
  });
}

/** Stop taking calls, let the ones in flight finish, then resolve; force after the grace period. */
export function drain(server: grpc.Server, graceMs: number): Promise<'drained' | 'forced'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve('forced');
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve('drained');
    });
  });
}
