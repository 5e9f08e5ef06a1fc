// A stand-in composition function for tests of whatever calls functions (the
// render driver): a real gRPC server on an ephemeral port, speaking the
// protocol through the same generated codec as our servers, answering with
// whatever the test's handler returns and recording every request it got.

import * as grpc from '@grpc/grpc-js';
import { newResponse, type RunFunctionRequest, type RunFunctionResponse } from '#lib';
import { FunctionRunnerServiceService } from '#lib/sdk';
import { listenGrpc } from './grpc-server.js';

/** Answers one call; `call` counts from 1 for each server. */
export type FakeHandler = (req: RunFunctionRequest, call: number) => RunFunctionResponse;

export interface FakeFunction {
  /** host:port, as a Development runtime target. */
  target: string;
  /** Every request received, in order. */
  requests: RunFunctionRequest[];
  stop(): Promise<void>;
}

export async function startFakeFunction(handler: FakeHandler): Promise<FakeFunction> {
  const server = new grpc.Server();
  const requests: RunFunctionRequest[] = [];
  server.addService(FunctionRunnerServiceService, {
    runFunction: (
      call: grpc.ServerUnaryCall<RunFunctionRequest, RunFunctionResponse>,
      callback: grpc.sendUnaryData<RunFunctionResponse>,
    ) => {
      requests.push(call.request);
      try {
        callback(null, handler(call.request, requests.length));
      } catch (error) {
        callback({ code: grpc.status.INTERNAL, details: error instanceof Error ? error.message : String(error) });
      }
    },
  });
  const port = await listenGrpc(server, '127.0.0.1:0', grpc.ServerCredentials.createInsecure());
  return {
    target: `127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      }),
  };
}

/** A handler that echoes desired state and context, as a function that does nothing would. */
export const passThrough: FakeHandler = (req) => newResponse(req);
