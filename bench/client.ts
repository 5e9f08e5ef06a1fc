// The load generator, run as its own process so its CPU is not the server's
// event loop. It sends one pre-encoded request (the same bytes to the function
// and to the floor) and reports latencies or throughput as one JSON line.
//
//   node bench/dist/client.js <address> <request.bin> latency <warmup> <calls>
//   node bench/dist/client.js <address> <request.bin> throughput <clients> <seconds>
//   node bench/dist/client.js <address>,<floor address> <request.bin> compare <warmup> <calls>
//
// compare sends calls to each server in turn, ten at a time, so a change in
// the machine's load falls on both alike.

import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, MAX_RESPONSE_BYTES, RUN_FUNCTION_METHOD } from '#lib';

const identity = (value: Buffer): Buffer => value;

function channel(address: string): grpc.Client {
  // A fresh subchannel per client: 8 concurrent clients are 8 connections, as 8 Crossplane workers would be.
  return new grpc.Client(address, grpc.credentials.createInsecure(), {
    // Crossplane's bounds: it sends what the server takes, and takes back at most 4 MiB (grpc-go's default).
    'grpc.max_receive_message_length': MAX_RESPONSE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.use_local_subchannel_pool': 1,
    // Crossplane's Go client grows its receive window by bandwidth-delay estimation up to 16 MiB;
    // grpc-js keeps HTTP/2's 64 KiB unless told, which would time window updates, not the server.
    'grpc-node.flow_control_window': 16 * 1024 * 1024,
  });
}

function call(client: grpc.Client, request: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(RUN_FUNCTION_METHOD, identity, identity, request, (error, response) => {
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

/**
 * Calls go to each server in turn, a short run of BLOCK calls at a time: short,
 * so whatever the machine does meanwhile falls on every server alike; a run,
 * not single calls, so each server is measured busy, as in a tight loop, and
 * not waking from idle for every call (a cost that would hide in both p50s
 * alike and flatter the ratio).
 */
const BLOCK = 10;

async function compare(addresses: string[], request: Buffer, warmup: number, calls: number): Promise<Record<string, unknown>> {
  const clients = addresses.map(channel);
  const samples: number[][] = addresses.map(() => []);
  let responseBytes = 0;
  for (const client of clients) for (let i = 0; i < warmup; i++) await call(client, request);
  for (let done = 0; done < calls; done += BLOCK) {
    for (const [index, client] of clients.entries()) {
      for (let i = done; i < Math.min(calls, done + BLOCK); i++) {
        const start = process.hrtime.bigint();
        const bytes = await call(client, request);
        samples[index]!.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (index === 0) responseBytes = bytes;
      }
    }
  }
  for (const client of clients) client.close();
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
  console.error(
    'usage: client.js <address> <request.bin> latency <warmup> <calls> | throughput <clients> <seconds> | compare <warmup> <calls>',
  );
  process.exit(2);
}
const request = readFileSync(file);
const modes: Record<string, () => Promise<Record<string, unknown>>> = {
  latency: () => latency(address, request, Number(a), Number(b)),
  throughput: () => throughput(address, request, Number(a), Number(b)),
  compare: () => compare(address.split(','), request, Number(a), Number(b)),
};
const run = modes[mode];
if (!run) {
  console.error(`unknown mode ${mode}: latency, throughput or compare`);
  process.exit(2);
}
const result = await run();
process.stdout.write(`${JSON.stringify(result)}\n`);
