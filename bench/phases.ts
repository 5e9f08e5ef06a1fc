// Where a call's time goes, per scenario at one N: decode, compose, encode,
// measured in process, for a full decode and for decoding on demand (where
// decoding continues inside compose and encode, as the function reads).
// `node bench/dist/phases.js [N] [scenario-id-substring]`.

import { decodeRequest, decodeStats, encodeResponse } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { HANDLERS, decodeAsServed } from '../test/support/handlers.js';
import { SCENARIOS } from './scenarios.js';

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const n = Number(process.argv[2] ?? 1000);
const filter = process.argv[3] ?? '';
for (const scenario of SCENARIOS(n).filter((s) => s.id.includes(filter))) {
  const bytes = Buffer.from(RunFunctionRequest.encode(scenario.request).finish());
  const handler = HANDLERS[scenario.fn];
  const line: string[] = [`${scenario.id.padEnd(48)} request ${(bytes.length / 1e6).toFixed(2)} MB`];
  for (const [mode, decode] of [
    ['full', decodeRequest],
    ['on demand', (b: Uint8Array) => decodeAsServed(scenario.fn, b)],
  ] as const) {
    const decoding: number[] = [];
    const compose: number[] = [];
    const encode: number[] = [];
    let share = 1;
    // Small requests take many more calls before the JIT has settled.
    const calls = Math.max(25, Math.round(2e7 / bytes.length));
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const req = decode(bytes);
      const t1 = performance.now();
      const rsp = handler(req);
      const t2 = performance.now();
      encodeResponse(rsp);
      const t3 = performance.now();
      const stats = decodeStats(req);
      if (stats) share = stats.decodedBytes / stats.requestBytes;
      if (i >= calls / 5) {
        decoding.push(t1 - t0);
        compose.push(t2 - t1);
        encode.push(t3 - t2);
      }
    }
    line.push(
      `| ${mode}: decode ${p50(decoding).toFixed(2)}  compose ${p50(compose).toFixed(2)}  encode ${p50(encode).toFixed(2)} ms${mode === 'full' ? '' : `, ${(share * 100).toFixed(1)}% decoded`}`,
    );
  }
  console.log(line.join('  '));
}
