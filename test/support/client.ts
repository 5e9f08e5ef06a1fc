// A RunFunction client built from the protocol definition with protobufjs,
// independent of the servers' own codec.

import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import {
  MAX_MESSAGE_BYTES,
  MAX_RESPONSE_BYTES,
  RUN_FUNCTION_METHOD,
  decodeRequest,
  decodeRequestOnDemand,
  encodeWithinLimit,
  jsonLogger,
  runSafely,
  type FunctionHandler,
} from '#lib';
import {
  fromStruct,
  toStruct,
  type ProtoStruct,
  type TestRequest,
  type TestResource,
  type TestResponse,
  type TestSelector,
} from './protocol.js';

const PROTO = fileURLToPath(new URL('../proto/run_function.proto', import.meta.url));

// protobufjs (under proto-loader) stops at 100 nested messages, about 50 JSON
// levels in a Struct (each level is a Value and a Struct or ListValue). The
// servers' own bound is 100 JSON levels, and tests must send both sides of it.
protobuf.util.recursionLimit = 10_000;
protobuf.Reader.recursionLimit = 10_000;

type UnaryCallback = (error: grpc.ServiceError | null, response: RawResponse) => void;
interface RawClient extends grpc.Client {
  RunFunction(request: unknown, options: grpc.CallOptions, callback: UnaryCallback): grpc.ClientUnaryCall;
}
type RawClientConstructor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => RawClient;

interface RawResource {
  resource?: ProtoStruct;
  ready?: string;
  connectionDetails?: Record<string, Buffer>;
}
interface RawResponse {
  meta?: { tag?: string; ttl?: { seconds?: number; nanos?: number } };
  desired?: { composite?: RawResource; resources?: Record<string, RawResource> };
  results?: TestResponse['results'];
  requirements?: TestResponse['requirements'];
  conditions?: TestResponse['conditions'];
  context?: ProtoStruct;
}

let constructorCache: RawClientConstructor | undefined;
function clientConstructor(): RawClientConstructor {
  if (constructorCache) return constructorCache;
  const definition = protoLoader.loadSync(PROTO, {
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: false,
    oneofs: false,
    arrays: true,
    objects: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    apiextensions: { fn: { proto: { v1: { FunctionRunnerService: RawClientConstructor } } } };
  };
  constructorCache = loaded.apiextensions.fn.proto.v1.FunctionRunnerService;
  return constructorCache;
}

function encodeResource(resource: TestResource): RawResource {
  const out: RawResource = { resource: toStruct(resource.resource) };
  if (resource.ready) out.ready = resource.ready;
  if (resource.connectionDetails) out.connectionDetails = resource.connectionDetails;
  return out;
}

function encodeResources(map: Record<string, TestResource> | undefined): Record<string, RawResource> {
  const out: Record<string, RawResource> = {};
  for (const [key, value] of Object.entries(map ?? {})) out[key] = encodeResource(value);
  return out;
}

function encodeSets(map: Record<string, { items: TestResource[] }> | undefined): Record<string, { items: RawResource[] }> {
  const out: Record<string, { items: RawResource[] }> = {};
  for (const [key, value] of Object.entries(map ?? {})) out[key] = { items: value.items.map(encodeResource) };
  return out;
}

export function encodeRequest(req: TestRequest): Record<string, unknown> {
  const state = (s: TestRequest['observed']) =>
    s === undefined
      ? undefined
      : { composite: s.composite ? encodeResource(s.composite) : undefined, resources: encodeResources(s.resources) };
  return {
    meta: req.meta ?? { tag: '' },
    observed: state(req.observed),
    desired: state(req.desired),
    context: req.context ? toStruct(req.context) : undefined,
    input: req.input ? toStruct(req.input) : undefined,
    requiredResources: encodeSets(req.requiredResources),
    extraResources: encodeSets(req.extraResources),
    credentials: req.credentials ?? {},
  };
}

function decodeResource(raw: RawResource): TestResource {
  const out: TestResource = { resource: fromStruct(raw.resource), ready: (raw.ready as TestResource['ready']) ?? 'READY_UNSPECIFIED' };
  if (raw.connectionDetails && Object.keys(raw.connectionDetails).length > 0) out.connectionDetails = raw.connectionDetails;
  return out;
}

export function decodeResponse(raw: RawResponse): TestResponse {
  const rsp: TestResponse = {
    meta: { tag: raw.meta?.tag ?? '' },
    results: raw.results ?? [],
    conditions: raw.conditions ?? [],
  };
  if (raw.meta?.ttl) rsp.meta.ttl = { seconds: raw.meta.ttl.seconds ?? 0, nanos: raw.meta.ttl.nanos ?? 0 };
  if (raw.desired) {
    const resources: Record<string, TestResource> = {};
    for (const [key, value] of Object.entries(raw.desired.resources ?? {})) resources[key] = decodeResource(value);
    rsp.desired = { resources };
    if (raw.desired.composite) rsp.desired.composite = decodeResource(raw.desired.composite);
  }
  if (raw.requirements) {
    const resources: Record<string, TestSelector> = {};
    for (const [key, selector] of Object.entries(raw.requirements.resources ?? {})) {
      resources[key] = selector;
    }
    rsp.requirements = { resources };
  }
  if (raw.context) rsp.context = fromStruct(raw.context);
  return rsp;
}

/**
 * Channel options with Crossplane's bounds, under the caller's own: a request
 * up to the servers' 64 MiB, a response up to 4 MiB (grpc-go's default, which
 * Crossplane's client keeps), so a response real Crossplane refuses fails
 * every test too.
 */
function withMessageBounds(options: grpc.ClientOptions): grpc.ClientOptions {
  return { 'grpc.max_receive_message_length': MAX_RESPONSE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES, ...options };
}

/** The size of each response as it arrived, in protobuf bytes (what Crossplane's client limits), by response. */
export const responseBytes = new WeakMap<TestResponse, number>();

export interface FunctionClient {
  run(req: TestRequest, options?: { timeoutMs?: number }): Promise<TestResponse>;
  close(): void;
}

/**
 * `options` are channel options on top of the message bounds, e.g.
 * `grpc.ssl_target_name_override` for TLS to an IP address.
 */
export function functionClient(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  options: grpc.ClientOptions = {},
): FunctionClient {
  const Client = clientConstructor();
  const client = new Client(address, credentials, withMessageBounds(options));
  return {
    run(req, options = {}) {
      return new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + (options.timeoutMs ?? 10_000));
        client.RunFunction(encodeRequest(req), { deadline }, (error, response) => {
          if (error) reject(error);
          else resolve(decodeResponse(response));
        });
      });
    },
    close() {
      client.close();
    },
  };
}

// --- In process: the same encode/decode path, without a socket ----------------

interface MethodCodec {
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): RawResponse;
}

let codecCache: MethodCodec | undefined;
function methodCodec(): MethodCodec {
  if (codecCache) return codecCache;
  const definition = protoLoader.loadSync(PROTO, {
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: false,
    oneofs: false,
    arrays: true,
    objects: true,
  });
  const service = definition['apiextensions.fn.proto.v1.FunctionRunnerService'] as unknown as Record<string, MethodCodec>;
  codecCache = service['RunFunction']!;
  return codecCache;
}

/** A test request as the bytes a RunFunction call carries (encoded by protobufjs, not the servers' codec). */
export function requestBytes(req: TestRequest): Buffer {
  return methodCodec().requestSerialize(encodeRequest(req));
}

/** The bytes of a RunFunctionResponse, decoded by protobufjs into the test shape. */
export function responseFromBytes(bytes: Buffer): TestResponse {
  return decodeResponse(methodCodec().responseDeserialize(bytes));
}

/**
 * A client that sends and receives raw bytes (identity serializers): for
 * comparing responses byte for byte, and for sending what no well-behaved
 * encoder would.
 */
export interface RawFunctionClient {
  call(request: Buffer, options?: { timeoutMs?: number }): Promise<Buffer>;
  close(): void;
}

export function rawFunctionClient(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  options: grpc.ClientOptions = {},
): RawFunctionClient {
  const client = new grpc.Client(address, credentials, withMessageBounds(options));
  const identity = (value: Buffer): Buffer => value;
  return {
    call(request, { timeoutMs = 10_000 } = {}) {
      return new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + timeoutMs);
        client.makeUnaryRequest(RUN_FUNCTION_METHOD, identity, identity, request, { deadline }, (error, response) => {
          if (error) reject(error);
          else if (response === undefined) reject(new Error('no response'));
          else resolve(response);
        });
      });
    },
    close() {
      client.close();
    },
  };
}

/**
 * Run a handler on a test request through both codecs (protobufjs to bytes,
 * the server's own codec from bytes, and back), as the server would, minus
 * the socket. Fast enough for large tables; the gRPC tests cover the transport.
 */
export function inProcessClient(name: string, handler: FunctionHandler, options: { decodedAtOnce?: number } = {}): FunctionClient {
  const codec = methodCodec();
  const logger = jsonLogger({ function: name, debug: false, write: () => undefined });
  return {
    run(req) {
      const bytes = codec.requestSerialize(encodeRequest(req));
      // As the server answers: a response over 4 MiB is the Fatal result that says so.
      const full = decodeRequest(bytes);
      const answer = encodeWithinLimit(name, full, runSafely(name, handler, full, logger)).bytes;
      // The server decodes on demand (issue 17), as its main.ts sets it: every test request must get the same bytes that way too.
      const lazy = decodeRequestOnDemand(bytes, options);
      const onDemand = encodeWithinLimit(name, lazy, runSafely(name, handler, lazy, logger)).bytes;
      if (!onDemand.equals(answer)) throw new Error(`${name}: decoding on demand answered other bytes than decoding in full`);
      const rsp = decodeResponse(codec.responseDeserialize(answer));
      responseBytes.set(rsp, answer.length);
      return Promise.resolve(rsp);
    },
    close() {},
  };
}
