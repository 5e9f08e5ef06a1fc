// The load generator, run as its own process so its CPU is not the server's
// event loop. It sends one pre-encoded request (the same bytes to the function
// and to the floor) and reports latencies or throughput as one JSON line.
//
//   node bench/dist/client.js <address> <request.bin> latency <warmup> <calls>
//   node bench/dist/client.js <address> <request.bin> throughput <clients> <seconds>

import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const PATH = '/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction';
const identity = (value: Buffer): Buffer => value;

function channel(address: string): grpc.Client {
  // A fresh subchannel per client: 8 concurrent clients are 8 connections, as 8 Crossplane workers would be.
  return new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.use_local_subchannel_pool': 1,
  });
}

function call(client: grpc.Client, request: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(PATH, identity, identity, request, (error, response) => {
      if (error) reject(error);
      else resolve(response?.length ?? 0);
    });
  });
}

async function latency(address: string, request: Buffer, warmup: number, calls: number): Promise<Record<string, unknown>> {
  const client = channel(address);
  let responseBytes = 0;
  for (let i = 0; i < warmup; i++) responseBytes = await call(client, request);
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await call(client, request);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  client.close();
  return { samples, responseBytes };
}

async function throughput(address: string, request: Buffer, clients: number, seconds: number): Promise<Record<string, unknown>> {
  const channels = Array.from({ length: clients }, () => channel(address));
  await Promise.all(channels.map((c) => call(c, request)));
  const deadline = performance.now() + seconds * 1000;
  let completed = 0;
  const start = performance.now();
  await Promise.all(
    channels.map(async (c) => {
      while (performance.now() < deadline) {
        await call(c, request);
        completed++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  for (const c of channels) c.close();
  return { completed, elapsedSeconds: elapsed, callsPerSecond: completed / elapsed };
}

const [address, file, mode, a, b] = process.argv.slice(2);
if (!address || !file || !mode || !a || !b) {
  console.error('usage: client.js <address> <request.bin> latency <warmup> <calls> | throughput <clients> <seconds>');
  process.exit(2);
}
const request = readFileSync(file);
const result =
  mode === 'latency' ? await latency(address, request, Number(a), Number(b)) : await throughput(address, request, Number(a), Number(b));
process.stdout.write(`${JSON.stringify(result)}\n`);
