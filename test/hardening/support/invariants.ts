// What every answer must hold, whatever the request: the checks the fuzzer
// (and the other hardening tests) apply to each response.

import {
  MAX_ATTEMPTS,
  MAX_REPORT_BYTES,
  MAX_REPORT_FILES,
  MAX_RESPONSE_BYTES,
  MAX_SIZE_GIB,
  MIN_SIZE_GIB,
  type JsonObject,
  type RunFunctionResponse,
} from '#lib';
import { manifestOf, type FunctionName, type TestRequest, type TestResponse } from '#testing';
import { FUZZ_TOKEN } from '../fuzz/mutate.js';
import { INPUT_SCHEMA, PLANTED_PASSWORD, credentialForms, fieldPath, unknownFields } from './settings-input.js';

export interface Violation {
  kind: string;
  detail: string;
}

/**
 * What a Fatal result's message starts with: the field it is about. The
 * functions throw InputError(field, problem), whose message is "<field>
 * <problem>"; the runtime's own catch-all ("<function> failed: ...") is an
 * internal error, never this.
 */
export const NAMES_A_FIELD =
  /^(?:(?:spec|metadata|status|input)(?:[.[]\S*)?|observed composite resource|InferenceCluster \S+ spec\.\w+) \S/;

// Kubernetes' name rules.
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Kinds whose name Kubernetes uses as a Service name (a DNS-1035 label:
 * starts with a letter): a Service, and a LeaderWorkerSet, whose controller
 * creates a headless Service of its own name.
 */
const SERVICE_NAMED_KINDS = new Set(['Service', 'LeaderWorkerSet']);

/** Every path in a value that holds null, NaN or ±Infinity. */
export function nullsAndNaNs(value: unknown, path = ''): string[] {
  if (value === null) return [path || '(root)'];
  if (typeof value === 'number' && !Number.isFinite(value)) return [`${path || '(root)'} (${String(value)})`];
  if (Array.isArray(value)) return value.flatMap((item, i) => nullsAndNaNs(item, `${path}[${i}]`));
  if (typeof value === 'object' && value !== undefined) {
    const out: string[] = [];
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      // undefined is "unset" in JS and never reaches the wire.
      if (child !== undefined) out.push(...nullsAndNaNs(child, path ? `${path}.${key}` : key));
    }
    return out;
  }
  return [];
}

function stringAt(value: unknown, ...path: string[]): string | undefined {
  let node = value;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'string' ? node : undefined;
}

function managementPolicies(object: JsonObject): string[] {
  const spec = object['spec'];
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return [];
  const policies = spec['managementPolicies'];
  return Array.isArray(policies) ? policies.filter((p): p is string => typeof p === 'string') : [];
}

function nameProblem(name: string, rule: 'label' | 'service' | 'subdomain'): string | undefined {
  if (rule === 'subdomain') return name.length <= 253 && DNS_1123_SUBDOMAIN.test(name) ? undefined : 'not a DNS subdomain';
  if (name.length > 63) return `${name.length} characters, over 63`;
  if (rule === 'service') return DNS_1035_LABEL.test(name) ? undefined : 'not a DNS-1035 label (a Service name starts with a letter)';
  return DNS_1123_LABEL.test(name) ? undefined : 'not a DNS label';
}

/**
 * Names in desired state that Kubernetes would refuse. Everything we create
 * is named as a DNS label of at most 63 characters (a DNS-1035 label where
 * it names a Service); an observe-only Object names something that exists,
 * so it need only be a valid name. A name that is exactly what was observed
 * under the same key is what exists, kept as it is: not ours to judge again.
 */
export function badNames(req: TestRequest, resources: Record<string, JsonObject>): Violation[] {
  const out: Violation[] = [];
  for (const [key, object] of Object.entries(resources)) {
    const observed = req.observed?.resources?.[key]?.resource;
    const own = stringAt(object, 'metadata', 'name');
    if (own !== undefined && own !== stringAt(observed, 'metadata', 'name')) {
      const problem = nameProblem(own, 'label');
      if (problem) out.push({ kind: 'bad-name', detail: `${key}: metadata.name ${JSON.stringify(own.slice(0, 80))}: ${problem}` });
    }
    const manifest = manifestOf(object);
    const remote = stringAt(manifest, 'metadata', 'name');
    if (remote === undefined || remote === stringAt(manifestOf(observed), 'metadata', 'name')) continue;
    const kind = typeof manifest['kind'] === 'string' ? manifest['kind'] : '';
    const policies = managementPolicies(object);
    const observeOnly = policies.length === 1 && policies[0] === 'Observe';
    const rule = observeOnly ? 'subdomain' : SERVICE_NAMED_KINDS.has(kind) ? 'service' : 'label';
    const problem = nameProblem(remote, rule);
    if (problem) out.push({ kind: 'bad-name', detail: `${key}: ${kind} ${JSON.stringify(remote.slice(0, 80))}: ${problem}` });
  }
  return out;
}

// Kubernetes' label and annotation rules: a key is [prefix/]name, the prefix a
// DNS subdomain, the name 63 characters of alphanumerics, "-", "_" and "."
// between alphanumerics; a label value the same, and may be empty.
const QUALIFIED_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function keyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_1123_SUBDOMAIN.test(prefix))) return 'its prefix is not a DNS subdomain';
  return QUALIFIED_NAME.test(name) ? undefined : 'not a qualified name';
}

/** Maps whose keys (and, but for annotations, values) Kubernetes checks as labels. */
const LABEL_MAPS = new Set(['labels', 'matchLabels', 'nodeSelector']);

/** A value as a person reads it in a report, whatever it is. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 60));
  try {
    return (JSON.stringify(value) ?? typeof value).slice(0, 60);
  } catch {
    return typeof value;
  }
}

/** The same path in another value, if it is there (for "was this observed so?"). */
function same(other: unknown, path: readonly (string | number)[]): unknown {
  let node = other;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/**
 * Every bad label or annotation key (and label value) in `value`. One that
 * `observed` holds at the same place, with the same value, is what was
 * observed, kept as it is (a hold, the upgrade): not ours to judge again.
 */
function labelProblems(value: unknown, observed: unknown, label: string, path: (string | number)[], out: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      labelProblems(item, observed, label, [...path, i], out);
    });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const at = [...path, key];
    const isLabels = LABEL_MAPS.has(key);
    if ((isLabels || key === 'annotations') && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      const before = same(observed, at);
      for (const [name, entry] of Object.entries(child as Record<string, unknown>)) {
        if (
          before !== null &&
          typeof before === 'object' &&
          Object.hasOwn(before, name) &&
          shown((before as Record<string, unknown>)[name]) === shown(entry)
        ) {
          continue;
        }
        const where = `${label}.${at.join('.')}`;
        const problem = keyProblem(name);
        if (problem) out.push(`${where} key ${JSON.stringify(name.slice(0, 60))}: ${problem}`);
        if (isLabels && (typeof entry !== 'string' || entry.length > 63 || !LABEL_VALUE.test(entry))) {
          out.push(`${where}[${JSON.stringify(name.slice(0, 60))}] ${shown(entry)}: not a label value`);
        }
      }
      continue;
    }
    labelProblems(child, observed, label, at, out);
  }
}

/** Labels, selectors and annotation keys Kubernetes would refuse, in what we compose (a child's metadata, a remote manifest). */
export function badLabels(req: TestRequest, resources: Record<string, JsonObject>): Violation[] {
  const out: Violation[] = [];
  for (const [key, object] of Object.entries(resources)) {
    const observed = req.observed?.resources?.[key]?.resource;
    const problems: string[] = [];
    if (object['kind'] === 'Object') {
      labelProblems(manifestOf(object), observed === undefined ? undefined : manifestOf(observed), 'manifest', [], problems);
    } else {
      labelProblems({ metadata: object['metadata'] }, { metadata: observed?.['metadata'] }, key, [], problems);
    }
    for (const problem of problems.slice(0, 3)) out.push({ kind: 'bad-label', detail: `${key}: ${problem}` });
  }
  return out;
}

/** Checks on the handler's own answer, before the codec (which drops NaN and undefined on the way out) sees it. */
export function checkHandlerOutput(rsp: RunFunctionResponse): Violation[] {
  const out: Violation[] = [];
  for (const [key, resource] of Object.entries(rsp.desired?.resources ?? {})) {
    for (const path of nullsAndNaNs(resource.resource)) out.push({ kind: 'null-or-nan', detail: `desired ${key}: ${path}` });
  }
  for (const path of nullsAndNaNs(rsp.desired?.composite?.resource))
    out.push({ kind: 'null-or-nan', detail: `desired composite: ${path}` });
  return out;
}

export function fatalMessages(rsp: TestResponse): string[] {
  return rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL').map((r) => r.message);
}

/** Checks on the answer as it came over the wire. */
export function checkResponse(name: FunctionName, req: TestRequest, rsp: TestResponse): Violation[] {
  const out: Violation[] = [];
  if (rsp.meta.tag !== (req.meta?.tag ?? ''))
    out.push({ kind: 'tag', detail: `tag ${JSON.stringify(rsp.meta.tag.slice(0, 40))} not echoed` });
  if (rsp.meta.ttl?.seconds !== 60) out.push({ kind: 'ttl', detail: `ttl ${JSON.stringify(rsp.meta.ttl)}` });
  const fatal = fatalMessages(rsp);
  for (const message of fatal) {
    // The runtime's own answer to a response over Crossplane's 4 MiB: it names the limit, the size and the fleet.
    if (OVER_LIMIT.test(message)) continue;
    if (message.startsWith(`${name} failed:`)) out.push({ kind: 'internal-error', detail: message.slice(0, 300) });
    else if (!NAMES_A_FIELD.test(message)) out.push({ kind: 'fatal-without-field', detail: message.slice(0, 300) });
  }
  const resources: Record<string, JsonObject> = {};
  for (const [key, value] of Object.entries(rsp.desired?.resources ?? {})) resources[key] = value.resource;
  for (const [key, resource] of Object.entries(resources)) {
    for (const path of nullsAndNaNs(resource)) out.push({ kind: 'null-or-nan', detail: `desired ${key}: ${path}` });
  }
  for (const path of nullsAndNaNs(rsp.desired?.composite?.resource))
    out.push({ kind: 'null-or-nan', detail: `desired composite: ${path}` });
  out.push(...badNames(req, resources));
  out.push(...badLabels(req, resources));
  if (name === 'compose-model-cache-hydration') out.push(...unpinnedMount(rsp));
  out.push(...composedSizes(req, resources));
  out.push(...statusNumbers(rsp.desired?.composite?.resource['status'], 'status'));
  for (const [key, resource] of Object.entries(resources)) {
    const inherited = (resource['spec'] as JsonObject | undefined)?.['inheritedStatus'];
    if (inherited !== undefined) out.push(...statusNumbers(inherited, `desired ${key} spec.inheritedStatus`));
    const members = (resource['spec'] as JsonObject | undefined)?.['clusters'];
    if (Array.isArray(members)) {
      members.forEach((member, i) => {
        const carried = (member as JsonObject | null)?.['inheritedStatus'];
        if (carried !== undefined) out.push(...statusNumbers(carried, `desired ${key} spec.clusters[${i}].inheritedStatus`));
      });
    }
  }
  return out;
}

/** The runtime's Fatal result for a response over 4 MiB (lib runtime/limit.ts). */
export const OVER_LIMIT =
  /^response size [\d,]+ bytes is over the [\d,]+-byte \([\d.]+ MiB\) limit .* a fleet of [\d,]+ clusters?: nothing was applied/;

/** A response's bytes on the wire: never over what Crossplane's client takes. */
export function responseTooBig(bytes: number): Violation[] {
  return bytes > MAX_RESPONSE_BYTES ? [{ kind: 'response-over-4MiB', detail: `${bytes} bytes` }] : [];
}

const GI = /^([0-9]+)Gi$/;

/**
 * Every claim size composed is inside the XRD's bounds (1..100000 GiB), on a
 * PVC and in a Job's --size-gib: whatever a cluster reported. A claim kept
 * exactly as observed is what exists, not composed by us.
 */
export function composedSizes(req: TestRequest, resources: Record<string, JsonObject>): Violation[] {
  const out: Violation[] = [];
  const inBounds = (n: number): boolean => Number.isSafeInteger(n) && n >= MIN_SIZE_GIB && n <= MAX_SIZE_GIB;
  for (const [key, object] of Object.entries(resources)) {
    const manifest = manifestOf(object);
    if (manifest['kind'] === 'PersistentVolumeClaim') {
      const storage = stringAt(manifest, 'spec', 'resources', 'requests', 'storage');
      const observed = req.observed?.resources?.[key]?.resource;
      const before = observed === undefined ? undefined : stringAt(manifestOf(observed), 'spec', 'resources', 'requests', 'storage');
      const policies = managementPolicies(object);
      const observeOnly = policies.length === 1 && policies[0] === 'Observe';
      if (storage !== undefined && storage !== before && !observeOnly) {
        const match = GI.exec(storage);
        if (!match || !inBounds(Number(match[1])))
          out.push({ kind: 'size-out-of-bounds', detail: `${key}: storage ${JSON.stringify(storage.slice(0, 40))}` });
      }
    }
    for (const size of JSON.stringify(manifest).matchAll(/--size-gib=([^"\s']*)/g)) {
      if (!inBounds(Number(size[1]))) out.push({ kind: 'size-out-of-bounds', detail: `${key}: --size-gib=${size[1]!.slice(0, 40)}` });
    }
  }
  return out;
}

const isCount = (value: unknown, max: number): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;

/**
 * The numbers of a status (a hydration's, a shard's or a cache's, each
 * `clusters[]` entry, an inherited status): sizes in the XRD's bounds,
 * attempts bounded, progress whole and consistent (done ≤ total, percent
 * 0-100), a summary's sums non-negative and done ≤ total.
 */
export function statusNumbers(status: unknown, label: string): Violation[] {
  const out: Violation[] = [];
  if (status === null || typeof status !== 'object' || Array.isArray(status)) return out;
  const record = status as JsonObject;
  const bad = (what: string, value: unknown): void => {
    out.push({ kind: 'status-number', detail: `${label}.${what} = ${JSON.stringify(value)?.slice(0, 40)}` });
  };
  if (record['sizeGiB'] !== undefined) {
    const size = record['sizeGiB'];
    if (!(typeof size === 'number' && Number.isSafeInteger(size) && size >= MIN_SIZE_GIB && size <= MAX_SIZE_GIB)) bad('sizeGiB', size);
  }
  if (record['attempts'] !== undefined && !(isCount(record['attempts'], MAX_ATTEMPTS) && (record['attempts'] as number) >= 1))
    bad('attempts', record['attempts']);
  const progress = record['progress'];
  if (progress !== undefined && progress !== null && typeof progress === 'object' && !Array.isArray(progress)) {
    const p = progress;
    if (!isCount(p['percent'], 100)) bad('progress.percent', p['percent']);
    for (const field of ['bytesDone', 'bytesTotal'] as const) if (!isCount(p[field], MAX_REPORT_BYTES)) bad(`progress.${field}`, p[field]);
    for (const field of ['filesDone', 'filesTotal'] as const) if (!isCount(p[field], MAX_REPORT_FILES)) bad(`progress.${field}`, p[field]);
    if ((p['bytesDone'] as number) > (p['bytesTotal'] as number)) bad('progress.bytesDone', p['bytesDone']);
    if ((p['filesDone'] as number) > (p['filesTotal'] as number)) bad('progress.filesDone', p['filesDone']);
    if (typeof p['summary'] !== 'string' || p['summary'].length > 64) bad('progress.summary', p['summary']);
  }
  const summary = record['summary'];
  if (summary !== null && typeof summary === 'object' && !Array.isArray(summary)) {
    const s = summary;
    for (const field of ['bytesDone', 'bytesTotal'] as const) {
      if (s[field] !== undefined && !(typeof s[field] === 'number' && Number.isFinite(s[field]) && s[field] >= 0))
        bad(`summary.${field}`, s[field]);
    }
    if (typeof s['bytesDone'] === 'number' && typeof s['bytesTotal'] === 'number' && s['bytesDone'] > s['bytesTotal'])
      bad('summary.bytesDone', s['bytesDone']);
  }
  const entries = record['clusters'];
  if (Array.isArray(entries)) entries.forEach((entry, i) => out.push(...statusNumbers(entry, `${label}.clusters[${i}]`)));
  return out;
}

const PINNED = /@sha256:[0-9a-f]{64}$/;

/**
 * An OCI mount names the digest the reference resolved to, never a tag or a
 * malformed digest: a moved tag must never change what a new pod serves.
 */
export function unpinnedMount(rsp: TestResponse): Violation[] {
  const status = rsp.desired?.composite?.resource['status'];
  const mount = status !== null && typeof status === 'object' && !Array.isArray(status) ? status['mount'] : undefined;
  const volumes = mount !== null && typeof mount === 'object' && !Array.isArray(mount) ? mount['volumes'] : undefined;
  const out: Violation[] = [];
  for (const volume of Array.isArray(volumes) ? volumes : []) {
    const image = stringAt(volume, 'image', 'reference');
    const csi = stringAt(volume, 'csi', 'volumeAttributes', 'model.csi.modelpack.org/reference');
    for (const reference of [image, csi]) {
      if (reference !== undefined && !PINNED.test(reference)) {
        out.push({ kind: 'unpinned-mount', detail: `status.mount names ${JSON.stringify(reference.slice(0, 120))}` });
      }
    }
  }
  return out;
}

/** Log lines that mean a bug: a handler threw something other than InputError, or a promise was dropped. */
export function badLogLines(lines: readonly string[]): Violation[] {
  const out: Violation[] = [];
  for (const line of lines) {
    if (line.includes('"msg":"handler failed"')) out.push({ kind: 'handler-failed-log', detail: line.slice(0, 400) });
    else if (line.includes('"msg":"unhandled rejection"')) out.push({ kind: 'unhandled-rejection', detail: line.slice(0, 400) });
  }
  return out;
}

// --- Issue 29: credentials and the token never leave; unknown fields never pass ---

/** Every form of each planted secret (the settings' password, the token Secret's token), computed once. */
const PLANTED: { what: string; forms: string[] }[] = [
  { what: 'the password planted in a setting', forms: credentialForms(PLANTED_PASSWORD) },
  { what: 'the token', forms: credentialForms(FUZZ_TOKEN) },
];

/** The answer without the data of any Secret it desires (the workload Secret holds the token on purpose). */
function withoutSecretData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretData);
  if (value === null || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  const secret = node['kind'] === 'Secret' && node['apiVersion'] === 'v1';
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node))
    if (!(secret && (key === 'data' || key === 'stringData'))) out[key] = withoutSecretData(child);
  return out;
}

/**
 * No form of a planted secret (raw, base64 at any alignment, URL-safe,
 * URL-encoded, hex) in the answer: not in its bytes, but for the base64 the
 * workload Secret's data holds (the one place the token goes on purpose),
 * which is taken out before the answer is searched.
 */
export function leaks(rsp: TestResponse, answer: Buffer): Violation[] {
  const out: Violation[] = [];
  // The bytes first (fast); only a form found there is looked for again in the answer without Secret data.
  let text: string | undefined;
  for (const { what, forms } of PLANTED) {
    const found = forms.find((form) => answer.includes(form) && (text ??= JSON.stringify(withoutSecretData(rsp))).includes(form));
    if (found !== undefined)
      out.push({ kind: 'secret-in-answer', detail: `${what} (as ${JSON.stringify(found.slice(0, 12))}…) is in the answer` });
  }
  return out;
}

/** No form of a planted secret in any log line. */
export function logLeaks(lines: readonly string[]): Violation[] {
  const out: Violation[] = [];
  for (const { what, forms } of PLANTED) {
    const line = lines.find((l) => forms.some((form) => l.includes(form)));
    if (line !== undefined) out.push({ kind: 'secret-in-log', detail: `${what} is in a log line: ${line.slice(0, 200)}` });
  }
  return out;
}

/** Whether a Crossplane step input is "no input" (absent, or an empty struct), as the functions read it. */
function noInput(input: unknown): boolean {
  return input === undefined || input === null || (typeof input === 'object' && Object.keys(input).length === 0);
}

/**
 * An input with a field its CRD does not know (or any input, for a function
 * that takes none) is answered with a Fatal result: never composed as if the
 * field were not there. A planted credential is never accepted either.
 */
export function unknownFieldPassed(name: FunctionName, req: TestRequest, rsp: TestResponse): Violation[] {
  if (noInput(req.input)) return [];
  const fatal = fatalMessages(rsp).length > 0;
  if (fatal) return [];
  const schema = INPUT_SCHEMA[name];
  const unknown = schema === undefined ? [['(any input)']] : unknownFields(schema, req.input);
  const out: Violation[] = [];
  if (unknown.length > 0) {
    out.push({
      kind: 'unknown-field-passed',
      detail: `${unknown
        .map((p) => fieldPath(p))
        .join(', ')
        .slice(0, 200)} answered without a Fatal result`,
    });
  }
  if (JSON.stringify(req.input).includes(PLANTED_PASSWORD)) {
    out.push({ kind: 'credential-accepted', detail: 'a setting with a planted credential was answered without a Fatal result' });
  }
  return out;
}
