// Where a model's weights come from: the `source` field and its one sibling,
// as ModelCache carries them and ModelCacheHydration receives them. Parsed
// once, here, so a value the parent admits is always one the child admits.

import { MAX_SIZE_GIB } from './reports.js';
import {
  InputError,
  array,
  describe,
  dnsLabel,
  dnsSubdomain,
  integer,
  object,
  oneOf,
  optional,
  refine,
  string,
  type Parser,
} from './input.js';
import { isObject, type JsonObject } from './json.js';

export const SOURCES = ['HuggingFace', 'OCI', 'PersistentVolumeClaim'] as const;
export type SourceName = (typeof SOURCES)[number];

/** The spec field that carries each source's settings: exactly one is set, the one `source` names. */
export const SIBLING: Readonly<Record<SourceName, 'huggingFace' | 'oci' | 'persistentVolumeClaim'>> = {
  HuggingFace: 'huggingFace',
  OCI: 'oci',
  PersistentVolumeClaim: 'persistentVolumeClaim',
};

/** The Secret key a HuggingFace token is read from when the reference names none (upstream's default). */
export const DEFAULT_TOKEN_KEY = 'HF_TOKEN';

export interface HuggingFaceSource {
  repo: string;
  revision?: string;
  /** The claim size; absent: sized on the workload cluster from the hub's listing of the selected files, then latched. */
  sizeGiB?: number;
  /** Glob patterns (huggingface_hub's allow_patterns): only matching files are staged. Absent: every file. */
  include?: string[];
  /** Glob patterns (huggingface_hub's ignore_patterns): matching files are not staged. */
  exclude?: string[];
}

export interface OciSource {
  ref: string;
  /** Secret names in the workload namespace; empty when none. */
  imagePullSecrets: string[];
  subPath?: string;
}

export interface ClaimSource {
  claimName: string;
  subPath?: string;
}

/** Where a HuggingFace token is: a reference only, never a value. */
export interface AuthSecretRef {
  name: string;
  key: string;
  namespace: string;
}

export type ModelSource =
  | { source: 'HuggingFace'; huggingFace: HuggingFaceSource }
  | { source: 'OCI'; oci: OciSource }
  | { source: 'PersistentVolumeClaim'; persistentVolumeClaim: ClaimSource };

// Bounds, the same in the XRDs (package/modelcaches, package/modelcachehydrations).
/** A repo id or revision is far shorter; the bound keeps messages and the Job's command small. */
const MAX_HF_FIELD = 256;
/** A registry host, a path, a tag and a digest fit well under this. */
const MAX_OCI_REF = 1024;
const MAX_SUBPATH = 1024;
/** include/exclude: a handful of patterns in practice; the bound keeps the Job's command small. */
const MAX_PATTERNS = 32;
/** The mount contract admits at most this many pull secrets (validateMount). */
const MAX_PULL_SECRETS = 8;

/**
 * A string that becomes one argument of a program (quoted in a shell). It may
 * hold anything a shell treats specially, because the Job quotes it, but not a
 * NUL (an argument can't carry one) and not a leading "-" (the program would
 * read it as an option; no repo id or git revision starts with one).
 */
const commandArgument = (): Parser<string> =>
  refine(string({ maxLength: MAX_HF_FIELD }), (value, field) => {
    if (value.includes('\0')) return new InputError(field, 'must not contain a NUL character');
    if (value.startsWith('-')) return new InputError(field, `must not start with "-" (got ${describe(value)})`);
    return undefined;
  });

/** A repo id: a command argument without "@", which separates repo and revision in `repo@revision`. */
const repoId = (): Parser<string> =>
  refine(commandArgument(), (value, field) => (value.includes('@') ? new InputError(field, 'must not contain "@"') : undefined));

/**
 * A directory inside the artifact or claim: relative, without empty, "." or
 * ".." segments, so the mount and MODELPLANE_MODEL stay below /mnt/models (the
 * rule validateMount applies to the published contract).
 */
export const subPath = (): Parser<string> =>
  refine(string({ maxLength: MAX_SUBPATH }), (value, field) =>
    value.startsWith('/') || value.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
      ? new InputError(field, `must be a relative path without empty, "." or ".." segments (got ${describe(value)})`)
      : undefined,
  );

/** A Secret data key: Kubernetes' rule. */
export const secretKey = (): Parser<string> =>
  string({ maxLength: 253, pattern: /^[-._a-zA-Z0-9]+$/, patternHint: 'a Secret key (letters, digits, "-", "_" and ".")' });

// An OCI reference: [registry/]path[:tag][@sha256:<64 hex>], the distribution
// grammar without IPv6 hosts. As in Docker, the first component is a registry
// only when it has a "." or a port, or is localhost; otherwise it is a path
// component, lower case.
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const HOST_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const REGISTRY = `(?:${HOST_LABEL}(?:\\.${HOST_LABEL})+(?::[0-9]+)?|${HOST_LABEL}:[0-9]+|localhost)`;
const REFERENCE_NAME = new RegExp(`^(?:${REGISTRY}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const REFERENCE_TAG = /^[\w][\w.-]{0,127}$/;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

export interface Reference {
  /** Registry and path, without tag or digest. */
  repository: string;
  tag?: string;
  digest?: string;
}

/** Split an OCI reference into repository, tag and digest; undefined when it is not a reference. */
export function parseReference(ref: string): Reference | undefined {
  const at = ref.indexOf('@');
  const name = at < 0 ? ref : ref.slice(0, at);
  const digest = at < 0 ? undefined : ref.slice(at + 1);
  if (digest !== undefined && !DIGEST.test(digest)) return undefined;
  const colon = name.lastIndexOf(':');
  const hasTag = colon > name.lastIndexOf('/');
  const repository = hasTag ? name.slice(0, colon) : name;
  const tag = hasTag ? name.slice(colon + 1) : undefined;
  if (!REFERENCE_NAME.test(repository) || (tag !== undefined && !REFERENCE_TAG.test(tag))) return undefined;
  const parsed: Reference = { repository };
  if (tag !== undefined) parsed.tag = tag;
  if (digest !== undefined) parsed.digest = digest;
  return parsed;
}

const ociReference = (): Parser<string> =>
  refine(string({ maxLength: MAX_OCI_REF }), (value, field) => {
    const at = value.indexOf('@');
    if (at >= 0 && !DIGEST.test(value.slice(at + 1))) {
      return new InputError(
        field,
        `must end in a well-formed digest, @sha256: and 64 lower-case hex digits (got ${describe(value.slice(at))})`,
      );
    }
    if (!parseReference(value)) {
      return new InputError(field, `must be an OCI reference, [registry/]repository[:tag][@sha256:<digest>] (got ${describe(value)})`);
    }
    return undefined;
  });

/**
 * A file pattern, in huggingface_hub's semantics (fnmatch, case-sensitive,
 * `*` crossing "/", a trailing "/" meaning everything below): one command
 * argument, never empty.
 */
const filePattern = (): Parser<string> =>
  refine(commandArgument(), (value, field) => (value === '' ? new InputError(field, 'must not be empty') : undefined));

const huggingFaceParser = object({
  repo: repoId(),
  revision: optional(commandArgument()),
  sizeGiB: optional(integer({ min: 1, max: MAX_SIZE_GIB })),
  include: optional(array(filePattern(), { maxItems: MAX_PATTERNS })),
  exclude: optional(array(filePattern(), { maxItems: MAX_PATTERNS })),
});
const ociParser = object({
  ref: ociReference(),
  imagePullSecrets: optional(array(object({ name: dnsSubdomain() }), { maxItems: MAX_PULL_SECRETS })),
  subPath: optional(subPath()),
});
const claimParser = object({ claimName: dnsSubdomain(), subPath: optional(subPath()) });
const sourceName = oneOf(SOURCES);

/**
 * `spec.source` and exactly its sibling: the named sibling must be there and
 * the other two absent (the missing one is reported first: "source: OCI" with
 * only huggingFace set is above all missing its oci). Fields of the sibling
 * this function doesn't read (huggingFace.authSecret) are left to the caller.
 */
export function parseModelSource(spec: unknown, field = 'spec'): ModelSource {
  if (!isObject(spec)) throw new InputError(field, `must be an object (got ${describe(spec)})`);
  if (spec['source'] === undefined || spec['source'] === null) throw new InputError(`${field}.source`, 'is required');
  const source = sourceName(spec['source'], `${field}.source`);
  const present = (name: string): boolean => spec[name] !== undefined && spec[name] !== null;
  const sibling = SIBLING[source];
  if (!present(sibling)) throw new InputError(`${field}.${sibling}`, `is required when ${field}.source is ${source}`);
  for (const other of SOURCES) {
    if (other !== source && present(SIBLING[other])) {
      throw new InputError(
        `${field}.${SIBLING[other]}`,
        `must be absent when ${field}.source is ${source} (only ${field}.${sibling} is read)`,
      );
    }
  }
  const at = `${field}.${sibling}`;
  switch (source) {
    case 'HuggingFace': {
      const parsed = huggingFaceParser(spec[sibling], at);
      const huggingFace: HuggingFaceSource = { repo: parsed.repo };
      if (parsed.revision !== undefined) huggingFace.revision = parsed.revision;
      if (parsed.sizeGiB !== undefined) huggingFace.sizeGiB = parsed.sizeGiB;
      if (parsed.include !== undefined && parsed.include.length > 0) huggingFace.include = parsed.include;
      if (parsed.exclude !== undefined && parsed.exclude.length > 0) huggingFace.exclude = parsed.exclude;
      return { source, huggingFace };
    }
    case 'OCI': {
      const parsed = ociParser(spec[sibling], at);
      const oci: OciSource = { ref: parsed.ref, imagePullSecrets: (parsed.imagePullSecrets ?? []).map((secret) => secret.name) };
      if (parsed.subPath !== undefined) oci.subPath = parsed.subPath;
      return { source, oci };
    }
    case 'PersistentVolumeClaim': {
      const parsed = claimParser(spec[sibling], at);
      const persistentVolumeClaim: ClaimSource = { claimName: parsed.claimName };
      if (parsed.subPath !== undefined) persistentVolumeClaim.subPath = parsed.subPath;
      return { source, persistentVolumeClaim };
    }
  }
}

/** The source and its sibling as spec fields, the way a ModelCacheHydration carries them. */
export function sourceFields(source: ModelSource): JsonObject {
  switch (source.source) {
    case 'HuggingFace': {
      const { repo, revision, sizeGiB, include, exclude } = source.huggingFace;
      const huggingFace: JsonObject = { repo };
      if (sizeGiB !== undefined) huggingFace['sizeGiB'] = sizeGiB;
      if (revision !== undefined) huggingFace['revision'] = revision;
      if (include !== undefined) huggingFace['include'] = [...include];
      if (exclude !== undefined) huggingFace['exclude'] = [...exclude];
      return { source: source.source, huggingFace };
    }
    case 'OCI': {
      const oci: JsonObject = { ref: source.oci.ref };
      if (source.oci.imagePullSecrets.length > 0) oci['imagePullSecrets'] = source.oci.imagePullSecrets.map((name) => ({ name }));
      if (source.oci.subPath !== undefined) oci['subPath'] = source.oci.subPath;
      return { source: source.source, oci };
    }
    case 'PersistentVolumeClaim': {
      const persistentVolumeClaim: JsonObject = { claimName: source.persistentVolumeClaim.claimName };
      if (source.persistentVolumeClaim.subPath !== undefined) persistentVolumeClaim['subPath'] = source.persistentVolumeClaim.subPath;
      return { source: source.source, persistentVolumeClaim };
    }
  }
}

/** What a person recognises the model by, in events and messages: the repo, the reference or the claim. */
export function artifactLabel(source: ModelSource): string {
  switch (source.source) {
    case 'HuggingFace':
      return source.huggingFace.repo;
    case 'OCI':
      return source.oci.ref;
    case 'PersistentVolumeClaim':
      return source.persistentVolumeClaim.claimName;
  }
}

const authSecretParser = object({ name: dnsSubdomain(), key: optional(secretKey()), namespace: optional(dnsLabel()) });

/**
 * The token reference a ModelCacheShard or ModelCacheHydration carries
 * (`spec.authSecret`), for the HuggingFace source only. Crossplane reads the
 * Secret with its own rights, so a reference into another namespace would
 * copy someone else's token onto a workload cluster: it must name the XR's
 * own namespace (or none, meaning that one).
 */
export function parseAuthSecretRef(
  value: unknown,
  field: string,
  source: ModelSource,
  ownNamespace: string,
  kind: string,
): AuthSecretRef | undefined {
  if (value === undefined || value === null) return undefined;
  const parsed = authSecretParser(value, field);
  if (source.source !== 'HuggingFace')
    throw new InputError(field, `applies only to the HuggingFace source (spec.source is ${source.source})`);
  const namespace = parsed.namespace ?? ownNamespace;
  if (namespace !== ownNamespace)
    throw new InputError(`${field}.namespace`, `must be this ${kind}'s own namespace ${ownNamespace} (got ${namespace})`);
  return { name: parsed.name, key: parsed.key ?? DEFAULT_TOKEN_KEY, namespace };
}
