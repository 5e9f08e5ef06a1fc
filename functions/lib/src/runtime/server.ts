// The gRPC server every function runs in. We start it ourselves rather than
// with the SDK's convenience start, which accepts clients without a
// certificate, ignores TLS_SERVER_CERTS_DIR and exits 0 when the port is taken.

import { InputError } from '../input.js';
import { getString } from '../json.js';
import { RUN_FUNCTION_METHOD, Severity, type RunFunctionRequest, type RunFunctionResponse } from '../protocol.js';
import { quoteValue, redactMessage } from '../redact.js';
import { fatalResult } from '../response.js';
import { RESPONSE_TTL_SECONDS } from '../constants.js';
import { DecodeError, decodeRequest, decodeRequestOnDemand, encodeResponse } from './codec.js';
import { MAX_RESPONSE_BYTES, encodeWithinLimit } from './limit.js';
import type { Logger } from './log.js';
import { GrpcStatus, createUnaryServer, type UnaryServer } from './unary.js';

/** A composition function: a pure function of its request. */
export type FunctionHandler = (req: RunFunctionRequest) => RunFunctionResponse;

/**
 * The largest request taken. gRPC's default 4 MiB is crossed by a
 * ModelCache's request (every selected InferenceCluster) over about 1,300
 * clusters; 64 MiB admits some 40,000 and still bounds what one request can
 * make a server allocate. A response is bound by MAX_RESPONSE_BYTES (4 MiB,
 * what Crossplane's client takes), not by this.
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
      // A bug's message is code's words, but may quote a value: never a credential, in the result or the log.
      const message = redactMessage(error instanceof Error ? error.message : String(error));
      // The stack names code locations only; nothing from the request is in it.
      logger.error('handler failed', { tag: req.meta?.tag, error: message, stack: error instanceof Error ? error.stack : undefined });
      fatalResult(rsp, `${name} failed: ${message}`);
    }
    return rsp;
  }
}

/** An XR's name as a log line shows it: as it is when it is a Kubernetes name, else redacted and cut (the request is not trusted). */
function loggedName(name: string): string {
  if (/^[a-z0-9.-]{1,253}(\/[a-z0-9.-]{1,253})?$/.test(name)) return name;
  return quoteValue(name, 256);
}

function summarize(req: RunFunctionRequest, rsp: RunFunctionResponse): Record<string, string | number | undefined> {
  const xr: unknown = req.observed?.composite?.resource;
  const namespace = getString(xr, 'metadata', 'namespace');
  const name = getString(xr, 'metadata', 'name');
  const count = (severity: Severity): number => rsp.results.filter((r) => r.severity === severity).length;
  return {
    tag: req.meta?.tag,
    xr: name === undefined ? undefined : loggedName(namespace === undefined ? name : `${namespace}/${name}`),
    desired: Object.keys(rsp.desired?.resources ?? {}).length,
    requirements: Object.keys(rsp.requirements?.resources ?? {}).length,
    fatal: count(Severity.SEVERITY_FATAL),
    warnings: count(Severity.SEVERITY_WARNING),
  };
}

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
    const within = encodeWithinLimit(name, req, rsp);
    encoded = within.bytes;
    if (within.overLimit !== undefined) {
      logger.warn('response over the limit', {
        tag: req.meta?.tag,
        responseBytes: within.overLimit.size,
        limitBytes: MAX_RESPONSE_BYTES,
        fleet: within.overLimit.fleet,
      });
    }
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
  logger.info('RunFunction', {
    ...summarize(req, rsp),
    bytes: bytes.length,
    responseBytes: encoded.length,
    durationMs: Math.round(durationMs * 1000) / 1000,
  });
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

/**
 * Receive buffers up to this size stay allocated for the next call. 16 MiB
 * covers a realistic ModelCache of about 1,400 clusters (11.4 MB at 1,000);
 * a bigger request gets a buffer of its own that is freed with the call, so a
 * rare giant does not stay resident.
 */
export const RETAINED_RECEIVE_BYTES = 16 * 1024 * 1024;

/**
 * How many bytes a client may send before the server acknowledges them, per
 * call and per connection. HTTP/2's default of 64 KiB (what gRPC-js's server
 * announced) took Crossplane's 11 MB request at a thousand clusters across
 * the wire in about 175 rounds of window updates, a third of the call.
 * Measured with `make bench` on compose-model-cache's realistic steady
 * request at N = 1,000, on gRPC-js's server (p50; peak RSS, calls one at a
 * time): 64 KiB 57-62 ms, 148-157 MB; 256 KiB 49-50 ms, 166 MB; 1 MiB
 * 43-45 ms, 173-201 MB; 16 MiB (where Go's gRPC grows its own windows)
 * 50 ms, 201 MB (docs/design/benchmark-history.md, "The transport"). A wider window
 * lets more of a request arrive at once; 256 KiB takes most of the speed for
 * little of that memory.
 */
export const RECEIVE_WINDOW_BYTES = 256 * 1024;

/**
 * A function's server: RunFunction and nothing else, over HTTP/2 (see
 * unary.ts for why not gRPC-js's server). Bytes that are not a request get
 * INVALID_ARGUMENT; anything else that fails (never expected) INTERNAL. The
 * server stays up either way. A request is decoded inside the call, which runs
 * to its answer without yielding, so only one decoded request is ever alive:
 * with many calls in flight, the ones waiting hold their raw bytes, not their
 * decoded objects.
 */
export function createFunctionServer(options: {
  name: string;
  handler: FunctionHandler;
  logger: Logger;
  decode?: DecodeMode;
  /** On demand: how big a nested part may be and still be decoded with what holds it (codec.ts DECODED_AT_ONCE by default). */
  decodedAtOnce?: number;
}): UnaryServer {
  const { name, handler, logger, decode: mode = 'on-demand', decodedAtOnce } = options;
  const decode =
    mode === 'on-demand' && decodedAtOnce !== undefined ? (bytes: Buffer) => decodeRequestOnDemand(bytes, { decodedAtOnce }) : mode;
  return createUnaryServer({
    path: RUN_FUNCTION_METHOD,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    receiveWindowBytes: RECEIVE_WINDOW_BYTES,
    retainedBufferBytes: RETAINED_RECEIVE_BYTES,
    handle: (bytes) => {
      try {
        return { ok: true, message: answer(name, handler, bytes, logger, decode) };
      } catch (error) {
        const undecodable = error instanceof DecodeError;
        // A bug's message is code's words, but may quote a value: never a credential, in the result or the log.
        const message = redactMessage(error instanceof Error ? error.message : String(error));
        const details = undecodable ? `cannot decode the RunFunctionRequest: ${message}` : `${name} failed: ${message}`;
        if (undecodable) logger.warn('RunFunction refused', { bytes: bytes.length, error: details });
        else logger.error('RunFunction failed', { bytes: bytes.length, error: details });
        return { ok: false, code: undecodable ? GrpcStatus.INVALID_ARGUMENT : GrpcStatus.INTERNAL, details };
      }
    },
    onRefused: (code, details) => {
      logger.debug('call refused', { code, error: details });
    },
  });
}
