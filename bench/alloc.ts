// Heap bytes each phase of a call allocates (decode on demand, compose,
// encode), per scenario at one N. It needs gc() and a young generation big
// enough that no collection runs mid-call:
//   node --expose-gc --max-semi-space-size=512 bench/dist/alloc.js [N] [scenario-id-substring]
import { encodeResponse } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { HANDLERS, decodeAsServed } from '../test/support/handlers.js';
import { SCENARIOS } from './scenarios.js';

const n = Number(process.argv[2] ?? 1000);
const filter = process.argv[3] ?? '';
const gc = (globalThis as { gc?: () => void }).gc!;
for (const scenario of SCENARIOS(n).filter((s) => s.id.includes(filter))) {
  const bytes = Buffer.from(RunFunctionRequest.encode(scenario.request).finish());
  const handler = HANDLERS[scenario.fn];
  let out = '';
  for (let i = 0; i < 8; i++) {
    gc();
    const h0 = process.memoryUsage().heapUsed;
    const req = decodeAsServed(scenario.fn, bytes);
    const h1 = process.memoryUsage().heapUsed;
    const rsp = handler(req);
    const h2 = process.memoryUsage().heapUsed;
    const buf = encodeResponse(rsp);
    const h3 = process.memoryUsage().heapUsed;
    out = `${scenario.id.padEnd(50)} req ${(bytes.length / 1e6).toFixed(2)} MB rsp ${(buf.length / 1e6).toFixed(2)} MB  decode ${((h1 - h0) / 1e6).toFixed(2)}  compose ${((h2 - h1) / 1e6).toFixed(2)}  encode ${((h3 - h2) / 1e6).toFixed(2)} MB`;
  }
  console.log(out);
}
