// The function input as the hardening tests and the fuzzer break it: every
// URL-like setting with a credential inside, under every check that can
// refuse it, and a misspelled field at every level of the input CRDs the
// Function packages ship. Shared by test/hardening/input.test.ts and the
// fuzzer (mutate.ts, invariants.ts), so both cover the same classes.

import { SETTINGS_API_VERSION, secretForms, type JsonObject, type JsonValue } from '#lib';
import { loadYamlDocuments, xrdSchema, type FunctionName, type SchemaNode, type Xrd } from '#testing';

/** The input CRD of each function that takes settings; compose-model-cache takes none (any input is refused). */
export const INPUT_SCHEMA: Record<FunctionName, SchemaNode | undefined> = {
  'compose-model-cache': undefined,
  'compose-model-cache-hydration': xrdSchema(
    loadYamlDocuments('functions/compose-model-cache-hydration/package/input/fn.modelplane.ai_hydrationsettings.yaml')[0] as Xrd,
  ),
  'compose-model-replica': xrdSchema(
    loadYamlDocuments('functions/compose-model-replica/package/input/fn.modelplane.ai_replicasettings.yaml')[0] as Xrd,
  ),
};

export const INPUT_KIND: Record<FunctionName, string | undefined> = {
  'compose-model-cache': undefined,
  'compose-model-cache-hydration': 'HydrationSettings',
  'compose-model-replica': 'ReplicaSettings',
};

const GROUPS: JsonObject = {
  images: { hydration: 'registry.corp.example/ml/hf:1', pullSecrets: ['corp-registry'] },
  install: { pip: true, indexUrl: 'https://pypi.corp.example/simple' },
  network: { hfEndpoint: 'https://hf-mirror.corp.example', noProxy: '.svc', caBundle: { configMap: 'corp-ca' } },
  jobs: { resources: { requests: { cpu: '500m' } }, tolerations: [{ operator: 'Exists' }], ttlSecondsAfterFinished: 600 },
  storage: { accessMode: 'ReadWriteMany' },
};

/** A valid input that has every object level of its CRD (so a typo can go in at each one). */
export function fullInput(name: FunctionName): JsonObject | undefined {
  const kind = INPUT_KIND[name];
  if (kind === undefined) return undefined;
  if (name === 'compose-model-replica')
    return { apiVersion: SETTINGS_API_VERSION, kind, metadata: { name: 'settings' }, workloadNamespace: 'Shared' };
  // Through JSON: the override must not share the top level's objects.
  const input: JsonObject = {
    apiVersion: SETTINGS_API_VERSION,
    kind,
    metadata: { name: 'settings' },
    workloadNamespace: 'Shared',
    ...GROUPS,
    clusters: [
      {
        clusterSelector: { matchLabels: { 'modelplane.ai/tier': 'a100' }, matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
        ...GROUPS,
      },
    ],
  };
  return JSON.parse(JSON.stringify(input)) as JsonObject;
}

export type Path = (string | number)[];

/** The input's field path as a Fatal result names it: input.clusters[0].network.hfEndpoint. */
export function fieldPath(path: Path): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : `${out}.${part}`), 'input');
}

/**
 * Every object in `value` whose schema lists its fields (a closed object:
 * not a map such as nodeSelector, not the free-form metadata), with the
 * fields the schema knows there.
 */
export function objectLevels(schema: SchemaNode, value: JsonValue, path: Path = []): { path: Path; known: string[] }[] {
  const out: { path: Path; known: string[] }[] = [];
  if (schema.type === 'array' && schema.items && Array.isArray(value)) {
    value.forEach((item, i) => out.push(...objectLevels(schema.items!, item, [...path, i])));
  } else if (schema.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    out.push({ path, known: Object.keys(schema.properties) });
    for (const [key, child] of Object.entries(schema.properties)) {
      if (Object.hasOwn(value, key) && key !== 'metadata') out.push(...objectLevels(child, value[key] as JsonValue, [...path, key]));
    }
  }
  return out;
}

/**
 * Every field of `value` that `schema` does not know: a closed object's
 * unknown key (a map's keys and metadata are free). What the functions must
 * refuse, and what `crossplane beta validate` reports.
 */
export function unknownFields(schema: SchemaNode, value: unknown, path: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => out.push(...unknownFields(schema.items!, item, [...path, i])));
    return out;
  }
  if (value === null || typeof value !== 'object') return out;
  const object = value as Record<string, unknown>;
  if (schema.properties) {
    for (const key of Object.keys(object)) {
      const child = schema.properties[key];
      if (child === undefined) out.push([...path, key]);
      else if (key !== 'metadata') out.push(...unknownFields(child, object[key], [...path, key]));
    }
  } else if (schema.additionalProperties !== undefined && typeof schema.additionalProperties === 'object') {
    for (const key of Object.keys(object)) out.push(...unknownFields(schema.additionalProperties, object[key], [...path, key]));
  }
  return out;
}

/** The kinds of misspelling a person makes, each a different known field away from one edit or two. */
const TYPOS: ((name: string) => string)[] = [
  // Two neighbours swapped: hfEndpoint → hfEndpiont.
  (name) => (name.length < 4 ? `${name}s` : `${name.slice(0, -3)}${name.at(-2)!}${name.at(-3)!}${name.at(-1)!}`),
  // One letter dropped.
  (name) => (name.length < 4 ? `${name}x` : `${name.slice(0, 1)}${name.slice(2)}`),
  // The case of a word: hfendpoint, HfEndpoint.
  (name) => (name === name.toLowerCase() ? `${name[0]!.toUpperCase()}${name.slice(1)}` : name.toLowerCase()),
  // snake_case for camelCase, or an s too many.
  (name) => (/[A-Z]/.test(name) ? name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : `${name}s`),
];

/** A misspelling of `name` that is no known field itself (`pick` chooses the kind). */
export function typo(name: string, known: readonly string[], pick = 0): string {
  for (let i = 0; i < TYPOS.length; i++) {
    const candidate = TYPOS[(pick + i) % TYPOS.length]!(name);
    if (candidate !== name && !known.includes(candidate)) return candidate;
  }
  return `${name}Typo`;
}

// ---------------------------------------------------------------------------
// Credentials inside URL-like settings.

/** The password the tests and the fuzzer hide in settings: found anywhere in an answer or a log, it leaked. */
export const PLANTED_PASSWORD = 'Pw7PlantedQ9zX4';

/** Every form of a planted credential a leak could take (raw, base64 at any alignment, URL-encoded, hex). */
export function credentialForms(credential: string): string[] {
  return secretForms(Buffer.from(credential).toString('base64'));
}

export type SettingKind = 'url' | 'hosts' | 'image';

/** Every URL-like setting (the same under each per-cluster override). */
export const URL_SETTINGS: { path: [group: string, key: string]; kind: SettingKind }[] = [
  { path: ['install', 'indexUrl'], kind: 'url' },
  { path: ['network', 'hfEndpoint'], kind: 'url' },
  { path: ['network', 'httpsProxy'], kind: 'url' },
  { path: ['network', 'httpProxy'], kind: 'url' },
  { path: ['network', 'noProxy'], kind: 'hosts' },
  { path: ['images', 'hydration'], kind: 'image' },
  { path: ['images', 'resolver'], kind: 'image' },
  { path: ['images', 'publisher'], kind: 'image' },
];

export interface Refusal {
  /** Which check refuses it. */
  check: string;
  value: JsonValue;
  /** What the Fatal result says is wrong. */
  problem: RegExp;
}

const NOT_URL = /must be an http or https URL/;
const CREDENTIALS = /must not carry credentials/;
const CHARACTERS = /must be printable ASCII without spaces, quotes/;

/** A value with `c` inside for each check that can refuse a setting of this kind, and what that check says. */
export function refusals(kind: SettingKind, c: string): Refusal[] {
  if (kind === 'hosts') {
    return [
      { check: 'an entry with user info', value: `.svc,me:${c}@proxy.corp.example,10.0.0.0/8`, problem: /must be host names/ },
      { check: 'a URL for a host', value: `http://me:${c}@proxy.corp.example:3128`, problem: /must be host names/ },
      { check: 'a space', value: `.svc, me:${c}@proxy`, problem: /must be host names/ },
      { check: 'the length', value: `me:${c}@proxy,${'a,'.repeat(2100)}a`, problem: /must be at most 4096 characters/ },
      { check: 'not a string', value: { proxy: `me:${c}@proxy` }, problem: /must be a string \(got an object\)/ },
    ];
  }
  if (kind === 'image') {
    return [
      { check: 'user info before the registry', value: `me:${c}@registry.corp.example/ml/hf:1`, problem: /must be an image reference/ },
      { check: 'a URL for a reference', value: `https://me:${c}@registry.corp.example/ml/hf:1`, problem: /must be an image reference/ },
      { check: 'a space', value: `registry.corp.example/ml/hf:1 --password ${c}`, problem: /must be an image reference/ },
      { check: 'the length', value: `me:${c}@registry.corp.example/${'a'.repeat(600)}`, problem: /must be at most 512 characters/ },
      { check: 'not a string', value: [`me:${c}@registry.corp.example/ml/hf:1`], problem: /must be a string \(got a list\)/ },
    ];
  }
  return [
    { check: 'user info', value: `https://me:${c}@hf.corp.example`, problem: CREDENTIALS },
    { check: 'a token as the user', value: `https://${c}@hf.corp.example`, problem: CREDENTIALS },
    { check: 'an empty user', value: `https://:${c}@hf.corp.example`, problem: CREDENTIALS },
    { check: 'an "@" inside the password', value: `http://me:a@${c}@proxy.corp.example:3128`, problem: CREDENTIALS },
    { check: 'a percent-encoded password', value: `https://me:${encodeURIComponent(`${c}/@:`)}@hf.corp.example`, problem: CREDENTIALS },
    { check: 'the scheme', value: `ftp://me:${c}@hf.corp.example/`, problem: NOT_URL },
    { check: 'a SOCKS proxy', value: `socks5://me:${c}@proxy.corp.example:1080`, problem: NOT_URL },
    { check: 'no scheme', value: `me:${c}@proxy.corp.example:3128`, problem: NOT_URL },
    { check: 'a space in the password', value: `http://me:${c} x@proxy.corp.example`, problem: CHARACTERS },
    { check: 'a quote', value: `http://me:'${c}'@proxy.corp.example`, problem: CHARACTERS },
    { check: 'a dollar', value: `http://me:$${c}@proxy.corp.example`, problem: CHARACTERS },
    { check: 'a backslash', value: `http://me:${c}@proxy.corp.example/a\\b`, problem: CHARACTERS },
    { check: 'non-ASCII', value: `http://me:${c}@prøxy.corp.example`, problem: CHARACTERS },
    { check: 'no host', value: `http://me:${c}@`, problem: NOT_URL },
    { check: 'the length', value: `https://me:${c}@hf.corp.example/${'a'.repeat(2100)}`, problem: /must be at most 2048 characters/ },
    { check: 'a token in the query', value: `https://hf.corp.example/?token=${c}`, problem: /must not have a query or a fragment/ },
    { check: 'a token in the fragment', value: `https://hf.corp.example/simple#${c}`, problem: /must not have a query or a fragment/ },
    { check: 'a header for a URL', value: `Authorization: Bearer ${c}`, problem: NOT_URL },
    { check: 'not a string', value: { url: `https://me:${c}@hf.corp.example` }, problem: /must be a string \(got an object\)/ },
  ];
}
