// Every function's server, started with --debug (so its log lines can be
// searched for what must never be logged) before a file's tests and stopped
// after, each with a client of the file's choosing.

import { afterAll, beforeAll } from 'vitest';
import { FUNCTION_NAMES, startServer, type FunctionName, type RunningServer } from '#testing';

export interface EveryFunction<C> {
  servers: Map<FunctionName, RunningServer>;
  clients: Map<FunctionName, C>;
}

export function serveEveryFunction<C extends { close(): void }>(client: (address: string) => C): EveryFunction<C> {
  const servers = new Map<FunctionName, RunningServer>();
  const clients = new Map<FunctionName, C>();
  beforeAll(async () => {
    for (const name of FUNCTION_NAMES) {
      const server = await startServer(name, { args: ['--debug'] });
      servers.set(name, server);
      clients.set(name, client(server.address));
    }
  });
  afterAll(async () => {
    for (const each of clients.values()) each.close();
    for (const server of servers.values()) await server.stop();
  });
  return { servers, clients };
}
