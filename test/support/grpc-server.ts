// gRPC-js servers for tests that stand in for a function or sit in front of
// one (the render driver's fake function, the e2e tap). The functions
// themselves serve RunFunction with the library's own HTTP/2 server.

import * as grpc from '@grpc/grpc-js';
import type { ServerTls } from '#lib';
import { FunctionRunnerServiceService } from '#lib/sdk';

/** RunFunction carrying raw bytes both ways: for a server that passes requests on untouched. */
export const RAW_RUN_FUNCTION_SERVICE = {
  runFunction: {
    ...FunctionRunnerServiceService.runFunction,
    requestDeserialize: (bytes: Buffer): Buffer => bytes,
    responseSerialize: (bytes: Buffer): Buffer => bytes,
  },
};

/** gRPC-js credentials from the library's TLS material (mTLS: a client certificate required). */
export function grpcServerCredentials(tls: ServerTls): grpc.ServerCredentials {
  if (tls.insecure) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/** Bind and resolve with the port actually bound. */
export function listenGrpc(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => {
      if (error) reject(error);
      else resolve(port);
    });
  });
}
