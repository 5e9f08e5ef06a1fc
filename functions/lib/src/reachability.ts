// Whether a workload cluster's API server can be reached, as the
// provider-kubernetes Objects on it report: an Object that can't reach the
// cluster is Synced=False with its client's error (crossplane-runtime's
// ReconcileError: "observe failed: cannot get object: Get \"https://…\": dial
// tcp …: connect: connection refused"). Only the error's words say why it
// failed, so they are classified here, once: a network failure (nothing
// answered) is "unreachable"; anything the API server answered (403, 404, a
// validation or a webhook's refusal) is not, however it was worded.

import { asArray, getIn, isObject } from './json.js';
import { OBJECT_KIND } from './remote.js';
import { redactMessage } from './redact.js';

/**
 * Words that mean the API server answered: the request reached it, whatever
 * failed after. Checked first, so a webhook the API server could not call
 * ("failed calling webhook …: dial tcp …: connection refused") is not taken
 * for the API server itself.
 */
const ANSWERED: readonly RegExp[] = [
  /failed calling webhook|admission webhook|denied the request/i,
  /\bforbidden\b/i,
  /\bunauthorized\b/i,
  /\bis invalid\b|\bfield is immutable\b|\bunprocessable\b/i,
  /\bnot found\b|could not find the requested resource/i,
  /\balready exists\b|the object has been modified|\bconflict\b/i,
  /\binternal error occurred\b|exceeded quota|\btoo many requests\b/i,
  // The API server's own timeout (a 504 it wrote), though its words end in "context deadline exceeded".
  /request did not complete within (?:the )?(?:requested|allowed) timeout|unable to return a response in the time allotted/i,
];

/**
 * A network failure's words, each with the name a message gives it. A
 * cluster whose Objects fail with one of these is unreachable from the
 * control plane (it may be up and serving its pods all the same).
 */
export const NETWORK_FAILURES: readonly (readonly [name: string, words: RegExp])[] = [
  ['connection refused', /connection refused/i],
  ['connection reset', /connection reset by peer|broken pipe/i],
  ['no route to host', /no route to host|network is unreachable|host is unreachable/i],
  ['name not resolved', /no such host|server misbehaving|temporary failure in name resolution/i],
  ['i/o timeout', /i\/o timeout/i],
  ['TLS handshake timeout', /TLS handshake timeout/i],
  ['timeout', /context deadline exceeded|Client\.Timeout exceeded|timeout awaiting response headers|net\/http: request canceled/i],
  ['connection lost', /http2: client connection lost|use of closed network connection/i],
  // An answer cut off: io.EOF as Go prints it, on its own or "unexpected EOF".
  ['EOF', /(?:^|[\s:"])(?:unexpected )?EOF(?:$|[\s;,)"])/],
  ['dial failed', /\bdial (?:tcp|udp|unix)\b/i],
];

/**
 * Why an Object's error means its cluster can't be reached (the name of the
 * network failure), or undefined when it doesn't: the API server answered,
 * or the error says nothing of the network.
 */
export function unreachableCause(error: string): string | undefined {
  if (ANSWERED.some((words) => words.test(error))) return undefined;
  return NETWORK_FAILURES.find(([, words]) => words.test(error))?.[0];
}

/** What a status quotes of the error: redacted, one line, cut to this many characters. */
export const UNREACHABLE_ERROR_MAX = 256;
/** An RFC 3339 time, as Kubernetes writes lastTransitionTime. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
export const TIMESTAMP_PATTERN = { test: TIMESTAMP, what: 'an RFC 3339 time' };

/** A cluster its Objects can't reach: since when, and the error that says so. */
export interface Unreachable {
  /** The earliest lastTransitionTime of an Object's Synced=False with a network failure; absent when none says. */
  since?: string;
  /** The error, redacted and bounded. */
  error: string;
}

/** A cluster error as a status may quote it: credentials redacted, one line, at most UNREACHABLE_ERROR_MAX characters. */
export function quotedError(error: string): string {
  const line = redactMessage(error.length > 4 * UNREACHABLE_ERROR_MAX ? error.slice(0, 4 * UNREACHABLE_ERROR_MAX) : error)
    .replace(/\s+/g, ' ')
    .trim();
  return line.length <= UNREACHABLE_ERROR_MAX ? line : `${line.slice(0, UNREACHABLE_ERROR_MAX - 1)}…`;
}

const timeOf = (value: string): number => Date.parse(value);

/** The earlier of two RFC 3339 times (either may be absent). */
export function earlier(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return timeOf(b) < timeOf(a) ? b : a;
}

/**
 * Whether `objects` (the observed composed resources of one cluster) say the
 * cluster can't be reached: at least one provider-kubernetes Object is
 * Synced=False with a network failure. Since the earliest such Object's
 * lastTransitionTime (and, while it lasts, no later than `since`, what the
 * last status said), with the error of the earliest.
 */
export function unreachableOf(objects: readonly unknown[], since?: string): Unreachable | undefined {
  let found: { since?: string; error: string } | undefined;
  for (const object of objects) {
    if (getIn(object, 'kind') !== OBJECT_KIND) continue;
    const synced = asArray(getIn(object, 'status', 'conditions')).find((c) => isObject(c) && c['type'] === 'Synced');
    if (!isObject(synced) || synced['status'] !== 'False' || typeof synced['message'] !== 'string') continue;
    if (unreachableCause(synced['message']) === undefined) continue;
    const at = synced['lastTransitionTime'];
    const when = typeof at === 'string' && TIMESTAMP.test(at) && Number.isFinite(timeOf(at)) ? at : undefined;
    if (found === undefined || (when !== undefined && (found.since === undefined || timeOf(when) < timeOf(found.since)))) {
      found = when === undefined ? { error: synced['message'] } : { since: when, error: synced['message'] };
    }
  }
  if (found === undefined) return undefined;
  const out: Unreachable = { error: quotedError(found.error) };
  const first = earlier(found.since, since !== undefined && TIMESTAMP.test(since) ? since : undefined);
  if (first !== undefined) out.since = first;
  return out;
}

/** "unreachable since <time>" (or "unreachable"), and the error, for a message. */
export function unreachableWords(cluster: string, unreachable: Unreachable): string {
  const since = unreachable.since === undefined ? '' : ` since ${unreachable.since}`;
  return `cluster ${cluster} unreachable${since} (${unreachable.error})`;
}
