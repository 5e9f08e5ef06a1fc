// One gRPC unary method served over Node's own HTTP/2, in place of gRPC-js's
// server. A function has exactly one method, takes one message and gives one
// back, so the protocol it needs is small (the gRPC over HTTP/2 spec: a
// POST with a length-prefixed message each way and the status in trailers).
// What owning it buys (docs/design/benchmark-history.md, "The transport"): a request
// is received once, into the buffer the previous call used, instead of as a
// list of chunks plus their concatenation that live until the collector finds
// them; and each call skips gRPC-js's generic machinery.

import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { ServerTls } from './tls.js';

/** The gRPC status codes this server answers with (google.rpc.Code). */
export const GrpcStatus = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** A call's outcome: the response message, or a status and a message for the caller. */
export type UnaryOutcome = { ok: true; message: Buffer } | { ok: false; code: GrpcStatusCode; details: string };

export interface UnaryServerOptions {
  /** The one method served, as gRPC names it on the wire: /package.Service/Method. */
  path: string;
  /** Answer one request message; runs to its end without yielding, and must not keep the bytes it is given. */
  handle: (request: Buffer) => UnaryOutcome;
  /** The largest request message taken, after decompression; a larger one is refused with RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  /** The HTTP/2 window announced per call and per connection. */
  receiveWindowBytes: number;
  /** Receive buffers up to this size are kept for the next call; a larger one is the collector's as soon as its call ends. */
  retainedBufferBytes: number;
  /** Told of calls refused before the handler saw them, and of connections that failed. */
  onRefused?: (code: GrpcStatusCode, details: string) => void;
}

export interface UnaryServer {
  /** Bind and resolve with the port actually bound (it differs from the address when that asks for port 0). */
  listen(address: string, tls: ServerTls): Promise<number>;
  /** Stop taking calls, let the ones in flight finish, then resolve; cut the rest off after graceMs. */
  shutdown(graceMs: number): Promise<'drained' | 'forced'>;
}

const MESSAGE_PREFIX_BYTES = 5; // a compressed flag and a 4-byte big-endian length
const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/;
const ACCEPTED_ENCODINGS = 'identity,deflate,gzip';
/** grpc-timeout: at most 8 digits and a unit (the gRPC over HTTP/2 spec). */
const TIMEOUT_PATTERN = /^(\d{1,8})([HMSmun])$/;
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * grpc-message is percent-encoded: every byte outside printable ASCII, and
 * '%' itself (so a message in any language reaches the caller intact).
 */
export function percentEncode(message: string): string {
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** host:port as the --address flag gives it; an empty host, or [::], is every interface. */
export function splitAddress(address: string): { host: string | undefined; port: number } {
  const colon = address.lastIndexOf(':');
  const rawHost = address.slice(0, colon);
  const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  return { host: host === '' ? undefined : host, port: Number(address.slice(colon + 1)) };
}

export function createUnaryServer(options: UnaryServerOptions): UnaryServer {
  const { path, handle, maxMessageBytes, receiveWindowBytes, retainedBufferBytes, onRefused } = options;
  const sessions = new Set<http2.ServerHttp2Session>();
  let server: http2.Http2Server | http2.Http2SecureServer | undefined;
  let closing = false;
  // One receive buffer, lent to one call at a time and given back when its answer is written.
  let spare: Buffer | undefined;

  /**
   * The spare buffer cut to `length`, if the message fits it. A message's
   * length is only the client's word, so memory is committed for it only
   * from a buffer already held; a call that gets none collects its bytes as
   * they arrive, bounded by what the client really sends.
   */
  function lend(length: number): Buffer | undefined {
    if (spare === undefined || spare.length < length) return undefined;
    const lent = spare.subarray(0, length);
    spare = undefined;
    return lent;
  }

  /** Keep a buffer the server allocated itself (never one of Node's pooled slices) for the next call. */
  function giveBack(buffer: Buffer): void {
    const whole = Buffer.from(buffer.buffer, 0, buffer.buffer.byteLength);
    if (whole.length <= retainedBufferBytes && (spare === undefined || spare.length < whole.length)) spare = whole;
  }

  function refuse(stream: http2.ServerHttp2Stream, code: GrpcStatusCode, details: string): void {
    onRefused?.(code, details);
    // Every refusal comes before an answer is started, so this is the call's only HEADERS frame.
    if (stream.destroyed || stream.closed) return;
    // Trailers-only: the status in the one HEADERS frame that ends the call (with the encodings taken, which a
    // client refused for its encoding needs).
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-status': String(code),
        'grpc-message': percentEncode(details),
        'grpc-accept-encoding': ACCEPTED_ENCODINGS,
      },
      { endStream: true },
    );
    // Stop the rest of a request nobody will read (RST_STREAM NO_ERROR, as the spec lets a server that has answered).
    stream.close(http2.constants.NGHTTP2_NO_ERROR);
  }

  function reply(stream: http2.ServerHttp2Stream, message: Buffer): void {
    if (stream.destroyed || stream.closed) return;
    const prefix = Buffer.allocUnsafe(MESSAGE_PREFIX_BYTES);
    prefix[0] = 0;
    prefix.writeUInt32BE(message.length, 1);
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': ACCEPTED_ENCODINGS },
      { waitForTrailers: true },
    );
    stream.once('wantTrailers', () => {
      stream.sendTrailers({ 'grpc-status': String(GrpcStatus.OK), 'grpc-message': '' });
    });
    stream.write(prefix);
    stream.end(message);
  }

  function onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    // A reset or a broken connection ends the call; nothing is left to answer.
    stream.on('error', () => {});
    const contentType = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !GRPC_CONTENT_TYPE.test(contentType)) {
      // Not gRPC at all: an HTTP answer, as gRPC servers give one.
      stream.respond({ ':status': 415, 'content-type': 'text/plain' }, { endStream: true });
      return;
    }
    if (headers[':path'] !== path) {
      refuse(stream, GrpcStatus.UNIMPLEMENTED, `unknown method ${String(headers[':path'])}`);
      return;
    }
    const named = headers['grpc-encoding'];
    const encoding = typeof named === 'string' ? named : 'identity';
    if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'deflate') {
      refuse(stream, GrpcStatus.UNIMPLEMENTED, `unsupported grpc-encoding ${encoding}`);
      return;
    }

    let deadline: NodeJS.Timeout | undefined;
    const timeout = TIMEOUT_PATTERN.exec(String(headers['grpc-timeout'] ?? ''));
    if (timeout !== null) {
      deadline = setTimeout(
        () => {
          finish();
          refuse(stream, GrpcStatus.DEADLINE_EXCEEDED, 'the deadline passed before the request arrived');
        },
        Math.max(0, Number(timeout[1]) * TIMEOUT_UNIT_MS[timeout[2]!]!),
      );
    }

    const prefix = Buffer.alloc(MESSAGE_PREFIX_BYTES);
    let prefixFilled = 0;
    let compressed = false;
    let length = -1; // the message's, once its prefix is in
    let received = 0;
    let held: Buffer | undefined; // the server's own buffer holding the message: lent at its prefix, or joined at its end
    let pieces: Buffer[] = []; // without a lent buffer, the parts of the chunks it arrives in
    let done = false;

    function finish(): void {
      if (done) return;
      done = true;
      if (deadline !== undefined) clearTimeout(deadline);
      stream.removeAllListeners('data');
      if (held !== undefined) giveBack(held);
      held = undefined;
      pieces = [];
    }

    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      let offset = 0;
      while (offset < chunk.length) {
        if (length < 0) {
          const taken = chunk.copy(prefix, prefixFilled, offset, offset + MESSAGE_PREFIX_BYTES - prefixFilled);
          prefixFilled += taken;
          offset += taken;
          if (prefixFilled < MESSAGE_PREFIX_BYTES) return;
          compressed = prefix[0] === 1;
          length = prefix.readUInt32BE(1);
          if (length > maxMessageBytes) {
            finish();
            refuse(stream, GrpcStatus.RESOURCE_EXHAUSTED, `request message larger than max (${length} vs. ${maxMessageBytes})`);
            return;
          }
          if (compressed && encoding === 'identity') {
            finish();
            refuse(stream, GrpcStatus.INTERNAL, 'a compressed message without a grpc-encoding');
            return;
          }
          held = lend(length);
          continue;
        }
        if (received === length) {
          finish();
          refuse(stream, GrpcStatus.UNIMPLEMENTED, 'a unary call carries one request message; this one sent more');
          return;
        }
        const take = Math.min(length - received, chunk.length - offset);
        if (held !== undefined) chunk.copy(held, received, offset, offset + take);
        else pieces.push(chunk.subarray(offset, offset + take));
        received += take;
        offset += take;
      }
    });
    stream.on('close', finish);
    stream.on('end', () => {
      if (done) return;
      if (length < 0 || received < length) {
        finish();
        refuse(stream, GrpcStatus.INTERNAL, 'the call ended before its request message did');
        return;
      }
      if (held === undefined) {
        // Unpooled (so it can be kept for the next call) and uninitialised (every byte is written here).
        held = Buffer.allocUnsafeSlow(length);
        let at = 0;
        for (const piece of pieces) at += piece.copy(held, at);
        pieces = [];
      }
      let message = held;
      if (compressed) {
        try {
          const inflate = encoding === 'gzip' ? gunzipSync : inflateSync;
          message = inflate(held, { maxOutputLength: maxMessageBytes });
        } catch (error) {
          finish();
          const tooBig = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
          refuse(
            stream,
            tooBig ? GrpcStatus.RESOURCE_EXHAUSTED : GrpcStatus.INTERNAL,
            tooBig
              ? `request message larger than max after decompression (${maxMessageBytes})`
              : `cannot decompress the request message (${encoding})`,
          );
          return;
        }
      }
      // The handler runs to its end without yielding: the deadline's timer cannot fire before finish() clears it.
      const outcome = handle(message);
      // The handler has returned and kept nothing of the request: its buffer can serve the next call.
      finish();
      if (outcome.ok) reply(stream, outcome.message);
      else refuse(stream, outcome.code, outcome.details);
    });
  }

  function onSession(session: http2.ServerHttp2Session): void {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    // A connection that breaks (a client gone mid-call, a bad frame) is that connection's end, never the server's.
    session.on('error', (error: Error) => onRefused?.(GrpcStatus.UNAVAILABLE, `connection failed: ${error.message}`));
    session.setLocalWindowSize(receiveWindowBytes);
    // A connection accepted before shutdown whose TLS handshake ends after it: close it too, or the drain waits on it.
    if (closing) session.close();
  }

  return {
    listen(address, tls) {
      const settings: http2.Settings = { initialWindowSize: receiveWindowBytes };
      // Node's default bound on a session's buffered memory (10 MB) would refuse calls that gRPC allows; the
      // message-size bound and flow control are the bounds here.
      const common = { settings, maxSessionMemory: Math.ceil((2 * maxMessageBytes) / 1e6) };
      const created = tls.insecure
        ? http2.createServer(common)
        : http2.createSecureServer({
            ...common,
            ca: tls.ca,
            cert: tls.cert,
            key: tls.key,
            requestCert: true,
            rejectUnauthorized: true,
            ALPNProtocols: ['h2'],
            allowHTTP1: false,
          });
      server = created;
      created.on('session', onSession);
      created.on('stream', onStream);
      // A failed handshake (a plaintext client, no certificate, a stranger's) is refused; the server goes on.
      created.on('tlsClientError', (error: Error) => onRefused?.(GrpcStatus.UNAVAILABLE, `TLS handshake refused: ${error.message}`));
      const { host, port } = splitAddress(address);
      return new Promise((resolve, reject) => {
        created.once('error', reject);
        created.listen(port, host, () => {
          created.removeListener('error', reject);
          resolve((created.address() as AddressInfo).port);
        });
      });
    },

    shutdown(graceMs) {
      closing = true;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
          resolve('forced');
        }, graceMs);
        timer.unref();
        if (server === undefined) {
          clearTimeout(timer);
          resolve('drained');
          return;
        }
        // close() stops new connections and calls back once every connection has ended; each session's close()
        // sends GOAWAY, refuses new calls and ends when its calls in flight have.
        server.close(() => {
          clearTimeout(timer);
          resolve('drained');
        });
        for (const session of sessions) session.close();
      });
    },
  };
}
