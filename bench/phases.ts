// Where a call's time goes, per scenario at one N: decode, compose, encode,
// measured in process. `node bench/dist/phases.js [N] [scenario-id-substring]`.

import { RunFunctionRequest, decodeRequest, encodeResponse } from '#lib';
import { compose as composeCache } from '../functions/compose-model-cache/src/fn.js';
import { compose as composeHydration } from '../functions/compose-model-cache-hydration/src/fn.js';
import { compose as composeReplica } from '../functions/compose-model-replica/src/fn.js';
import { SCENARIOS } from './scenarios.js';

const HANDLERS = {
  'compose-model-cache': composeCache,
  'compose-model-cache-hydration': composeHydration,
  'compose-model-replica': composeReplica,
};

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const n = Number(process.argv[2] ?? 1000);
const filter = process.argv[3] ?? '';
for (const scenario of SCENARIOS(n).filter((s) => s.id.includes(filter))) {
  const bytes = Buffer.from(RunFunctionRequest.encode(scenario.request).finish());
  const handler = HANDLERS[scenario.fn];
  const decode: number[] = [];
  const compose: number[] = [];
  const encode: number[] = [];
  let size = 0;
  for (let i = 0; i < 25; i++) {
    const t0 = performance.now();
    const req = decodeRequest(bytes);
    const t1 = performance.now();
    const rsp = handler(req);
    const t2 = performance.now();
    size = encodeResponse(rsp).length;
    const t3 = performance.now();
    if (i >= 5) {
      decode.push(t1 - t0);
      compose.push(t2 - t1);
      encode.push(t3 - t2);
    }
  }
  console.log(
    `${scenario.id.padEnd(52)} request ${(bytes.length / 1e6).toFixed(2)} MB  response ${(size / 1e6).toFixed(2)} MB  decode ${p50(decode).toFixed(2)}  compose ${p50(compose).toFixed(2)}  encode ${p50(encode).toFixed(2)} ms`,
  );
}
