// What the node e2e tests share: whether this plane has real nodes, and the
// plane hub's controls (test/e2e/hub/main.ts) as the tests call them.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Faults } from '../../support/fake-hub.js';
import { STATE_DIR, WORKLOAD_CLUSTERS } from '../plane.js';
import { HUB_PORT } from './repo.js';

/** `make up` with MODELPLANE_UP_NODES=1 leaves each node's pids in its state directory. */
export const PLANE_HAS_NODES = WORKLOAD_CLUSTERS.every((cluster) => existsSync(join(STATE_DIR, 'nodes', cluster, 'pids')));

const HUB = `http://127.0.0.1:${HUB_PORT}`;

/** One of the hub's controls: GET requests, POST reset, PUT faults. */
export async function hub(path: 'requests' | 'reset' | 'faults', init?: RequestInit): Promise<unknown> {
  const response = await fetch(`${HUB}/_hub/${path}`, init);
  if (!response.ok) throw new Error(`hub ${path}: ${response.status}`);
  return response.json();
}

/** Replace the hub's faults (an empty object: none). */
export const setFaults = (faults: Faults): Promise<unknown> => hub('faults', { method: 'PUT', body: JSON.stringify(faults) });
