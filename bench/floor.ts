// The floor: the same runtime, flags and codec as the functions, with a
// handler that returns the request's desired state untouched. It pays only
// decode, dispatch and encode, so a function's cost above it is its own. It
// decodes every request in full (the functions decode on demand): the floor
// is what a call costs a server that reads the whole request.

import { RESPONSE_TTL_SECONDS, serveFunction, type RunFunctionRequest, type RunFunctionResponse } from '#lib';

function echoDesired(req: RunFunctionRequest): RunFunctionResponse {
  const rsp: RunFunctionResponse = {
    meta: { tag: req.meta?.tag ?? '', ttl: { seconds: RESPONSE_TTL_SECONDS, nanos: 0 } },
    desired: req.desired,
    results: [],
    requirements: undefined,
    conditions: [],
  };
  if (req.context !== undefined) rsp.context = req.context;
  return rsp;
}

await serveFunction({ name: 'floor', handler: echoDesired, decode: 'full' });
