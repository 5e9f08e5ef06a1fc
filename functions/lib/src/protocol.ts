// The one place that binds to the function protocol (apiextensions.fn.proto.v1).
// Message shapes are the TypeScript SDK's generated types, imported as types
// only. The few values a function needs (four enums and the method's name) are
// written here, because the SDK's module that holds them also loads gRPC-js,
// protobufjs and pino, which the runtime never calls: it speaks gRPC and
// protobuf itself (runtime/unary.ts, runtime/codec.ts). Without them a bundle
// is 107-178 kB instead of 1.3-1.4 MB, and an idle function 2.4 MB smaller.
// Each object is typed from the SDK's enum: the compiler refuses a missing
// member, an extra one or a wrong number, and treats the values as the SDK's
// enum everywhere; functions/lib/test/protocol.test.ts checks them against the
// SDK's own at run time too. Tests and tools that need the SDK's message
// codecs import them from './sdk.ts' ('#lib/sdk'), which functions never do.

import type {
  Ready as SdkReady,
  Severity as SdkSeverity,
  Status as SdkStatus,
  Target as SdkTarget,
} from '@crossplane-org/function-sdk-typescript';

/* eslint-disable @typescript-eslint/no-unsafe-enum-assignment -- the one place numbers become the SDK's enums, checked by the types below and the protocol test */

/** An SDK enum's members as a plain object, without ts-proto's UNRECOGNIZED (-1), which no function sends. */
type Members<E> = { readonly [K in Exclude<keyof E, 'UNRECOGNIZED'>]: E[K] };

export type {
  Condition,
  Resource,
  ResourceSelector,
  Result,
  RunFunctionRequest,
  RunFunctionResponse,
  State,
} from '@crossplane-org/function-sdk-typescript';

/** Whether a composed resource (or the composite) is ready. */
export type Ready = SdkReady;
export const Ready: Members<typeof SdkReady> = {
  READY_UNSPECIFIED: 0,
  READY_TRUE: 1,
  READY_FALSE: 2,
};

/** A result's severity. */
export type Severity = SdkSeverity;
export const Severity: Members<typeof SdkSeverity> = {
  SEVERITY_UNSPECIFIED: 0,
  SEVERITY_FATAL: 1,
  SEVERITY_WARNING: 2,
  SEVERITY_NORMAL: 3,
};

/** A condition's status. */
export type Status = SdkStatus;
export const Status: Members<typeof SdkStatus> = {
  STATUS_CONDITION_UNSPECIFIED: 0,
  STATUS_CONDITION_UNKNOWN: 1,
  STATUS_CONDITION_TRUE: 2,
  STATUS_CONDITION_FALSE: 3,
};

/** Where a result or condition is shown. */
export type Target = SdkTarget;
export const Target: Members<typeof SdkTarget> = {
  TARGET_UNSPECIFIED: 0,
  TARGET_COMPOSITE: 1,
  TARGET_COMPOSITE_AND_CLAIM: 2,
};

/** RunFunction's path on the wire: /package.Service/Method. */
export const RUN_FUNCTION_METHOD = '/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction';
