// The plane's stand-in for huggingface.co (`make up` with nodes starts it):
// the test hub (test/support/fake-hub.ts) on every address, so the workload
// clusters' pods reach it at the plane's address, serving a small but real
// model repository twice, once public and once gated behind the e2e token,
// one whose listing is too large for a 1 GiB claim, and the same files
// again under the walkthrough's model name (Qwen/Qwen3-0.6B; its tag v2.0 is
// another commit) and under names of their own for the stories that set
// faults on them or play in the second lane (repo.ts).
// The hydration Jobs reach it through the hfEndpoint setting (up.sh puts it
// in the packaged Composition's HydrationSettings).
//
//   node hub.mjs --address 0.0.0.0:15080
//
// Its controls (for the tests): GET /_hub/requests, GET /_hub/history,
// PUT /_hub/faults, POST /_hub/reset, GET /_hub/healthz.

import { parseArgs } from 'node:util';
import { FakeHub, type FakeRevision } from '../../support/fake-hub.js';
import {
  HUB_BESIDE_REPO,
  HUB_FLEET_REPO,
  HUB_GATED_REPO,
  HUB_LARGE_REPO,
  HUB_PIP_REPO,
  HUB_REPO,
  HUB_RESTART_REPO,
  HUB_RELEASE_TAG,
  HUB_RESUME_REPO,
  HUB_TOKEN,
  HUB_WALKTHROUGH_REPO,
  hubLargeRevision,
  hubReleaseRevision,
  hubRevision,
} from './repo.js';

const { values } = parseArgs({ options: { address: { type: 'string', default: '127.0.0.1:15080' } } });
const address = values.address;
const colon = address.lastIndexOf(':');
const host = address.slice(0, colon);
const port = Number(address.slice(colon + 1));

const main: FakeRevision = hubRevision();
const hub = new FakeHub(HUB_REPO, { main });
hub.addRepo(HUB_GATED_REPO, { main }, { token: HUB_TOKEN });
hub.addRepo(HUB_LARGE_REPO, { main: hubLargeRevision() });
for (const repo of [HUB_RESUME_REPO, HUB_RESTART_REPO, HUB_BESIDE_REPO, HUB_FLEET_REPO, HUB_PIP_REPO]) hub.addRepo(repo, { main });
hub.addRepo(HUB_WALKTHROUGH_REPO, { main, [HUB_RELEASE_TAG]: hubReleaseRevision() });
// One line a request, without the token (only whether one came, and whether it was the right one).
hub.log = (request) => {
  const auth =
    request.authorization === undefined ? 'no token' : request.authorization === `Bearer ${HUB_TOKEN}` ? 'the e2e token' : 'another token';
  console.log(
    `${new Date().toISOString()} ${request.from ?? '?'} ${request.method} ${request.url}${request.range ? ` ${request.range}` : ''} (${auth})`,
  );
};
await hub.start(host, port);
console.log(`hub on ${address}: ${HUB_REPO} and ${HUB_GATED_REPO} (gated) at ${main.commit}, ${main.files.length} files`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    void hub.stop().then(() => process.exit(0));
  });
}
