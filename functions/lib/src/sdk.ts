// The TypeScript SDK's generated message codecs and gRPC service definition,
// for tests, the render driver and the benchmark: building requests with
// fromPartial, encoding them as Crossplane would, serving or calling
// RunFunction with gRPC-js. Never imported by a function (see protocol.ts):
// loading it loads gRPC-js, protobufjs and pino.

export { FunctionRunnerServiceService, RunFunctionRequest, RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
