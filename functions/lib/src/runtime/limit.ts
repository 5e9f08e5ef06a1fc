// The largest answer Crossplane takes from a function. Crossplane's function
// runner sets no message size of its own, so grpc-go's client default holds:
// a response over 4 MiB is refused (ResourceExhausted) and the XR reconciles
// with nothing applied and a gRPC error for a reason. A function that would
// answer more answers a Fatal result instead, naming the limit, the size and
// the fleet it was composing for: never a desired state cut to fit, which
// Crossplane would apply as if it were whole (and delete what it left out).

import { asArray, getIn, isObject } from '../json.js';
import { KIND, RESPONSE_TTL_SECONDS } from '../constants.js';
import { Severity, type RunFunctionRequest, type RunFunctionResponse } from '../protocol.js';
import { encodeResponse } from './codec.js';

/** grpc-go's default maximum receive message size, which Crossplane's client keeps: 4 MiB. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * How many clusters a request composes for: the InferenceClusters it was
 * sent (a ModelCache's fleet; one for a hydration or a replica), or the
 * clusters a ModelCacheShard's spec lists, whichever is more.
 */
export function fleetSize(req: RunFunctionRequest): number {
  const names = new Set<string>();
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- read on purpose, for Crossplane releases before v2
  for (const sets of [req.requiredResources, req.extraResources]) {
    for (const key in sets ?? {}) {
      for (const item of sets?.[key]?.items ?? []) {
        const resource: unknown = item.resource;
        if (getIn(resource, 'kind') !== KIND.InferenceCluster) continue;
        const name = getIn(resource, 'metadata', 'name');
        names.add(typeof name === 'string' ? name : `#${names.size}`);
      }
    }
  }
  const xr: unknown = req.observed?.composite?.resource;
  const listed = getIn(xr, 'kind') === KIND.ModelCacheShard ? asArray(getIn(xr, 'spec', 'clusters')).filter(isObject).length : 0;
  return Math.max(names.size, listed);
}

const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The Fatal result's words: the limit, the size, the fleet, and what to do. */
export function overLimitMessage(name: string, size: number, fleet: number, limit: number = MAX_RESPONSE_BYTES): string {
  const clusters = fleet === 1 ? '1 cluster' : `${grouped(fleet)} clusters`;
  const mib = Math.round((limit / (1024 * 1024)) * 100) / 100;
  return (
    `response size ${grouped(size)} bytes is over the ${grouped(limit)}-byte (${mib} MiB) limit Crossplane's gRPC client ` +
    `takes from a function; ${name} was composing for a fleet of ${clusters}: nothing was applied, and everything composed ` +
    `stays as it is (docs/limits.md: the largest fleet one ModelCache serves)`
  );
}

/**
 * Encode a response, or, when its bytes would be over MAX_RESPONSE_BYTES,
 * the Fatal result that says so (with the request's tag and TTL, and no
 * desired state at all). What every server answers and every in-process
 * test runs through.
 */
export function encodeWithinLimit(
  name: string,
  req: RunFunctionRequest,
  rsp: RunFunctionResponse,
  limit: number = MAX_RESPONSE_BYTES,
): { bytes: Buffer; overLimit?: { size: number; fleet: number } } {
  const bytes = encodeResponse(rsp);
  if (bytes.length <= limit) return { bytes };
  const fleet = fleetSize(req);
  const fatal: RunFunctionResponse = {
    meta: { tag: req.meta?.tag ?? '', ttl: { seconds: RESPONSE_TTL_SECONDS, nanos: 0 } },
    desired: undefined,
    results: [{ severity: Severity.SEVERITY_FATAL, message: overLimitMessage(name, bytes.length, fleet, limit) }],
    requirements: undefined,
    conditions: [],
  };
  return { bytes: encodeResponse(fatal), overLimit: { size: bytes.length, fleet } };
}
