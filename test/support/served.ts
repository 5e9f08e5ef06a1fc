// A function's built server for the length of one test file, with a client to
// it: started before the file's first test, stopped after its last.

import { afterAll, beforeAll } from 'vitest';
import { functionClient, type FunctionClient } from './client.js';
import { startServer, type FunctionName, type RunningServer, type StartOptions } from './server.js';

export interface Served {
  server: RunningServer;
  client: FunctionClient;
}

/** Register the hooks; the fields are there once `beforeAll` has run. */
export function serveForFile(name: FunctionName, options: StartOptions = {}): Served {
  const served = {} as Served;
  beforeAll(async () => {
    served.server = await startServer(name, options);
    served.client = functionClient(served.server.address);
  });
  afterAll(async () => {
    served.client.close();
    await served.server.stop();
  });
  return served;
}
