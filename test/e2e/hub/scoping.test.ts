// The plane's hub keeps one story's faults and request log out of another's
// (`make e2e` plays two lanes of stories at once, docs/nodes.md "Two lanes"):
// faults naming a repository touch only its requests, refuseFrom included,
// and the history outlives the resets the other lane makes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeHub, type Recorded } from '../../support/fake-hub.js';
import { hubControls } from './client.js';
import { HUB_BESIDE_REPO, HUB_FLEET_REPO, HUB_REPO, HUB_WALKTHROUGH_REPO, hubRevision } from './repo.js';

const main = hubRevision();
const hub = new FakeHub(HUB_REPO, { main });
for (const repo of [HUB_WALKTHROUGH_REPO, HUB_BESIDE_REPO, HUB_FLEET_REPO]) hub.addRepo(repo, { main });

// The stories' own client, at this hub's address (known once it listens).
let controls: ReturnType<typeof hubControls>;
beforeAll(async () => {
  await hub.start('127.0.0.1', 0);
  controls = hubControls(hub.url);
});
afterAll(() => hub.stop());

const status = async (path: string): Promise<number> => {
  const response = await fetch(`${hub.url}${path}`);
  await response.arrayBuffer();
  return response.status;
};
const info = (repo: string): string => `/api/models/${repo}/revision/main`;
const config = (repo: string): string => `/${repo}/resolve/${main.commit}/config.json`;

describe('the plane hub: one story’s faults and log beside another’s', () => {
  // The clients here are 127.0.0.1: refuseFrom ['127.'] stands for a cluster's pods.
  it.each([
    { faults: { refuseFrom: ['127.'] }, repo: HUB_BESIDE_REPO, refused: true },
    { faults: { refuseFrom: ['127.'], repo: HUB_WALKTHROUGH_REPO }, repo: HUB_WALKTHROUGH_REPO, refused: true },
    { faults: { refuseFrom: ['127.'], repo: HUB_WALKTHROUGH_REPO }, repo: HUB_BESIDE_REPO, refused: false },
    { faults: { refuseFrom: ['10.209.1.'] }, repo: HUB_BESIDE_REPO, refused: false },
  ])('refuseFrom $faults.refuseFrom for $faults.repo: $repo refused $refused', async ({ faults, repo, refused }) => {
    await controls.setFaults(faults);
    const expected = refused ? 403 : 200;
    expect([await status(info(repo)), await status(config(repo))]).toEqual([expected, expected]);
    await controls.setFaults({});
  });

  it('corrupts only the repository the faults name', async () => {
    const file = main.files.find((f) => f.path === 'config.json')!;
    await controls.setFaults({ corrupt: 'config.json', repo: HUB_REPO });
    const bytes = async (repo: string): Promise<Buffer> => Buffer.from(await (await fetch(`${hub.url}${config(repo)}`)).arrayBuffer());
    expect((await bytes(HUB_REPO)).equals(file.content)).toBe(false);
    expect((await bytes(HUB_BESIDE_REPO)).equals(file.content)).toBe(true);
    await controls.setFaults({});
  });

  it('keeps the history through a reset, which empties the requests', async () => {
    await status(config(HUB_FLEET_REPO));
    await controls.hub('reset', { method: 'POST' });
    expect(await controls.hub('requests')).toEqual([]);
    const history = (await controls.hub('history')) as Recorded[];
    expect(history.filter((r) => r.url === config(HUB_FLEET_REPO))).toHaveLength(1);
  });
});
