// The library's gRPC unary server (functions/lib/src/runtime/unary.ts), in
// process, called by gRPC-js's client as a function's caller would, and by a
// bare HTTP/2 client for what a gRPC client never sends: a second message, a
// call cut short, a deadline that passes mid-request, a method or an encoding
// the server does not know.

import { connect, constants as h2, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GrpcStatus, createUnaryServer, percentEncode, splitAddress, type GrpcStatusCode, type UnaryServer } from '#lib';

const PATH = '/test.Echo/Echo';
const MAX = 1024 * 1024;
const RETAINED = 256 * 1024;
const identity = (bytes: Buffer): Buffer => bytes;

/** What the handler saw: each request's backing store, to show when one is lent again. */
const seen: ArrayBufferLike[] = [];
const refusals: [GrpcStatusCode, string][] = [];

/** Echoes its request reversed (a copy: the request's buffer is the server's to reuse); "fail" is answered with INVALID_ARGUMENT. */
function handle(request: Buffer) {
  seen.push(request.buffer);
  if (request.toString() === 'fail')
    return { ok: false as const, code: GrpcStatus.INVALID_ARGUMENT, details: 'not this one: ünïcödé 100%' };
  return { ok: true as const, message: Buffer.from(request).reverse() };
}

let server: UnaryServer;
let address: string;
let client: grpc.Client;

beforeAll(async () => {
  server = createUnaryServer({
    path: PATH,
    handle,
    maxMessageBytes: MAX,
    receiveWindowBytes: 256 * 1024,
    retainedBufferBytes: RETAINED,
    onRefused: (code, details) => refusals.push([code, details]),
  });
  address = `127.0.0.1:${await server.listen('127.0.0.1:0', { insecure: true })}`;
  client = new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 4 * MAX });
});
afterAll(async () => {
  client.close();
  expect(await server.shutdown(1000)).toBe('drained');
});
afterEach(() => {
  seen.length = 0;
  refusals.length = 0;
});

function call(
  bytes: Buffer,
  options: { path?: string; client?: grpc.Client; deadlineMs?: number } = {},
): Promise<{ ok: true; answer: Buffer } | { ok: false; code: number; details: string }> {
  return new Promise((resolve) => {
    const deadline = options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs };
    (options.client ?? client).makeUnaryRequest(options.path ?? PATH, identity, identity, bytes, deadline, (error, answer) => {
      resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, answer: answer! });
    });
  });
}

function reversed(bytes: Buffer): Buffer {
  return Buffer.from(bytes).reverse();
}

function bytesOf(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/** A bare HTTP/2 call: headers, then whatever frames the test writes; resolves with what came back. */
async function rawCall(
  write: (stream: ReturnType<ClientHttp2Session['request']>) => void,
  headers: Record<string, string> = {},
): Promise<{ status: number | undefined; grpcStatus: string | undefined; message: string | undefined; body: Buffer }> {
  const session = connect(`http://${address}`);
  try {
    const stream = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    const chunks: Buffer[] = [];
    let response: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    stream.on('response', (h: IncomingHttpHeaders) => {
      response = h;
    });
    stream.on('trailers', (t: IncomingHttpHeaders) => {
      trailers = t;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<void>((resolve) => stream.on('close', resolve));
    stream.on('error', () => {});
    write(stream);
    await closed;
    const status = (trailers['grpc-status'] ?? response['grpc-status']) as string | undefined;
    const message = (trailers['grpc-message'] ?? response['grpc-message']) as string | undefined;
    return { status: response[':status'] as number | undefined, grpcStatus: status, message, body: Buffer.concat(chunks) };
  } finally {
    session.destroy();
  }
}

function framed(message: Buffer, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

describe('a unary call', () => {
  it.each([0, 1, 4, 5, 6, 16_384, 300_000])('answers a %i-byte request with its handler’s answer', async (size) => {
    const bytes = bytesOf(size, size);
    expect(await call(bytes)).toEqual({ ok: true, answer: reversed(bytes) });
  });

  it('sends a handler’s refusal as its status, the message percent-encoded and read back intact', async () => {
    expect(await call(Buffer.from('fail'))).toEqual({
      ok: false,
      code: GrpcStatus.INVALID_ARGUMENT,
      details: 'not this one: ünïcödé 100%',
    });
  });

  it('answers a request split across many frames, written a byte at a time', async () => {
    const bytes = bytesOf(64, 3);
    const got = await rawCall((stream) => {
      for (const byte of framed(bytes)) stream.write(Buffer.from([byte]));
      stream.end();
    });
    expect(got.grpcStatus).toBe('0');
    expect(got.body).toEqual(framed(reversed(bytes)));
  });

  it('takes a gzip-compressed request (gRPC-js compressing), and answers it as any other', async () => {
    const gzipClient = new grpc.Client(address, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    });
    try {
      const bytes = Buffer.from('compress me '.repeat(1000));
      expect(await call(bytes, { client: gzipClient })).toEqual({ ok: true, answer: reversed(bytes) });
    } finally {
      gzipClient.close();
    }
  });
});

describe('the receive buffer', () => {
  it('lends a request’s buffer to the next call once its answer is written, and answers both right', async () => {
    const big = bytesOf(200_000, 1);
    const small = bytesOf(1000, 2);
    expect(await call(big)).toEqual({ ok: true, answer: reversed(big) });
    expect(await call(small)).toEqual({ ok: true, answer: reversed(small) });
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
  });

  it('gives calls in flight at once buffers of their own', async () => {
    const requests = Array.from({ length: 8 }, (_, i) => bytesOf(50_000 + i * 7919, i));
    const answers = await Promise.all(requests.map((bytes) => call(bytes)));
    answers.forEach((answer, i) => {
      expect(answer).toEqual({ ok: true, answer: reversed(requests[i]!) });
    });
  });

  it('keeps no buffer past its bound: a bigger request’s is freed with its call', async () => {
    const big = bytesOf(RETAINED + 1, 5);
    expect(await call(big)).toEqual({ ok: true, answer: reversed(big) });
    const after = bytesOf(RETAINED + 1, 6);
    expect(await call(after)).toEqual({ ok: true, answer: reversed(after) });
    expect(seen[1]).not.toBe(seen[0]);
  });

  it('commits no memory on a length alone: 200 calls that each announce the bound and send nothing more', async () => {
    const session = connect(`http://${address}`);
    const before = process.memoryUsage().arrayBuffers;
    try {
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(MAX, 1);
      const streams = Array.from({ length: 200 }, () => {
        const stream = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc' });
        stream.on('error', () => {});
        stream.write(prefix);
        return stream;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Eagerly, 200 × 1 MiB; as received, a few bytes each.
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * MAX);
      for (const stream of streams) stream.close(h2.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
    const next = bytesOf(1000, 11);
    expect(await call(next)).toEqual({ ok: true, answer: reversed(next) });
  });

  it('takes back the buffer of a call the client abandoned mid-request, and serves the next call right', async () => {
    const bytes = bytesOf(100_000, 9);
    const got = await rawCall((stream) => {
      stream.write(framed(bytes).subarray(0, 50_000), () => {
        stream.close(h2.NGHTTP2_CANCEL);
      });
    });
    expect(got.grpcStatus).toBeUndefined();
    const next = bytesOf(100_000, 10);
    expect(await call(next)).toEqual({ ok: true, answer: reversed(next) });
  });
});

describe('what it refuses, and goes on serving', () => {
  it('refuses a method it does not serve with UNIMPLEMENTED', async () => {
    expect(await call(Buffer.from('x'), { path: '/test.Echo/Other' })).toMatchObject({ ok: false, code: GrpcStatus.UNIMPLEMENTED });
  });

  it('refuses a request over the bound with RESOURCE_EXHAUSTED, before receiving it', async () => {
    expect(await call(bytesOf(MAX + 1, 0))).toMatchObject({ ok: false, code: GrpcStatus.RESOURCE_EXHAUSTED });
    expect(seen).toEqual([]);
    const ok = bytesOf(MAX, 0);
    expect(await call(ok)).toEqual({ ok: true, answer: reversed(ok) });
  });

  it('refuses a compressed request that inflates past the bound with RESOURCE_EXHAUSTED', async () => {
    const bomb = gzipSync(Buffer.alloc(4 * MAX));
    expect(bomb.length).toBeLessThan(MAX);
    const got = await rawCall((stream) => stream.end(framed(bomb, true)), { 'grpc-encoding': 'gzip' });
    expect(got.grpcStatus).toBe(String(GrpcStatus.RESOURCE_EXHAUSTED));
    expect(seen).toEqual([]);
  });

  it('refuses bytes that do not inflate with INTERNAL', async () => {
    const got = await rawCall((stream) => stream.end(framed(Buffer.from('not gzip'), true)), { 'grpc-encoding': 'gzip' });
    expect(got.grpcStatus).toBe(String(GrpcStatus.INTERNAL));
    expect(got.message).toMatch(/cannot decompress/);
  });

  it('refuses an encoding it does not know with UNIMPLEMENTED, naming those it does', async () => {
    const got = await rawCall((stream) => stream.end(framed(Buffer.from('x'), true)), { 'grpc-encoding': 'snappy' });
    expect(got.grpcStatus).toBe(String(GrpcStatus.UNIMPLEMENTED));
    expect(got.message).toBe('unsupported grpc-encoding snappy');
  });

  it('refuses a compressed message in a call that named no encoding', async () => {
    const got = await rawCall((stream) => stream.end(framed(gzipSync(Buffer.from('x')), true)));
    expect(got.grpcStatus).toBe(String(GrpcStatus.INTERNAL));
    expect(seen).toEqual([]);
  });

  it('refuses a second request message in one call', async () => {
    const got = await rawCall((stream) => stream.end(Buffer.concat([framed(Buffer.from('a')), framed(Buffer.from('b'))])));
    expect(got.grpcStatus).toBe(String(GrpcStatus.UNIMPLEMENTED));
    expect(seen).toEqual([]);
  });

  it.each([
    ['no message at all', Buffer.alloc(0)],
    ['half a prefix', Buffer.from([0, 0, 0])],
    ['a message cut short', framed(Buffer.from('abcdef')).subarray(0, 8)],
  ])('refuses a call that ends with %s with INTERNAL', async (_case, bytes) => {
    const got = await rawCall((stream) => stream.end(bytes));
    expect(got.grpcStatus).toBe(String(GrpcStatus.INTERNAL));
    expect(seen).toEqual([]);
  });

  it('answers DEADLINE_EXCEEDED when the deadline passes mid-request, and never runs the handler', async () => {
    const got = await rawCall(
      (stream) => {
        stream.write(framed(bytesOf(1000, 0)).subarray(0, 500));
      },
      { 'grpc-timeout': '50m' },
    );
    expect(got.grpcStatus).toBe(String(GrpcStatus.DEADLINE_EXCEEDED));
    expect(seen).toEqual([]);
  });

  it('answers a plain HTTP request with 415, not gRPC', async () => {
    const got = await rawCall((stream) => stream.end(), { 'content-type': 'application/json' });
    expect(got.status).toBe(415);
  });

  it('still answers after all of the above', async () => {
    const bytes = bytesOf(10, 1);
    expect(await call(bytes)).toEqual({ ok: true, answer: reversed(bytes) });
  });
});

describe('shutdown', () => {
  /** A server of the test's own to shut down, and an HTTP/2 connection to it. */
  async function ownServer(): Promise<{ own: UnaryServer; port: number; session: ClientHttp2Session }> {
    const own = createUnaryServer({ path: PATH, handle, maxMessageBytes: MAX, receiveWindowBytes: 65_535, retainedBufferBytes: 0 });
    const port = await own.listen('127.0.0.1:0', { insecure: true });
    const session = connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    return { own, port, session };
  }

  it('refuses calls on a connection it is draining with UNAVAILABLE, and finishes the one in flight', async () => {
    const { own, port, session } = await ownServer();
    const caller = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      // Connected and answered before the shutdown, as Crossplane's long-lived connection is.
      const first = bytesOf(10, 1);
      expect(await call(first, { client: caller })).toEqual({ ok: true, answer: reversed(first) });
      const inFlight = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc' });
      const body: Buffer[] = [];
      inFlight.on('data', (chunk: Buffer) => body.push(chunk));
      const ended = new Promise<void>((resolve) => inFlight.on('close', resolve));
      const bytes = bytesOf(100, 4);
      const whole = framed(bytes);
      inFlight.write(whole.subarray(0, 50));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const drained = own.shutdown(5000);
      const t0 = performance.now();
      expect(await call(bytesOf(10, 2), { client: caller })).toMatchObject({ ok: false, code: GrpcStatus.UNAVAILABLE });
      expect(performance.now() - t0).toBeLessThan(1000);
      inFlight.end(whole.subarray(50));
      await ended;
      expect(Buffer.concat(body)).toEqual(framed(reversed(bytes)));
      expect(await drained).toBe('drained');
    } finally {
      caller.close();
      session.destroy();
    }
  });

  it('cuts off what is still in flight after the grace period', async () => {
    const { own, session } = await ownServer();
    try {
      const stuck = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc' });
      stuck.on('error', () => {});
      stuck.write(framed(bytesOf(100, 4)).subarray(0, 50));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await own.shutdown(100)).toBe('forced');
    } finally {
      session.destroy();
    }
  });
});

describe('helpers', () => {
  it.each([
    ['plain ASCII', 'plain ASCII'],
    ['100%', '100%25'],
    ['line\nbreak', 'line%0Abreak'],
    ['ü', '%C3%BC'],
  ])('percent-encodes %j as %j', (message, encoded) => {
    expect(percentEncode(message)).toBe(encoded);
  });

  it.each([
    ['0.0.0.0:9443', { host: '0.0.0.0', port: 9443 }],
    [':9443', { host: undefined, port: 9443 }],
    ['[::1]:0', { host: '::1', port: 0 }],
    ['localhost:80', { host: 'localhost', port: 80 }],
  ])('splits %j', (address, split) => {
    expect(splitAddress(address)).toEqual(split);
  });
});
