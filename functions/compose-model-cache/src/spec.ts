// The ModelCache as this function reads it. Everything the XRD refuses at apply
// time is refused here too, naming the field: an XR can reach the function
// from an older XRD (or be written before a rule existed), and a bad value must
// become a Fatal result, never a silently wrong child.

import {
  InputError,
  array,
  assertNamePart,
  describe,
  dnsSubdomain,
  integer,
  labelSelector,
  object,
  oneOf,
  optional,
  refine,
  string,
  type Composite,
  type LabelSelector,
  type Parser,
} from '#lib';

export const SOURCES = ['HuggingFace', 'OCI', 'PersistentVolumeClaim'] as const;
export type SourceName = (typeof SOURCES)[number];

/** The spec field that carries each source's settings: exactly one is set, the one `source` names. */
export const SIBLING: Readonly<Record<SourceName, 'huggingFace' | 'oci' | 'persistentVolumeClaim'>> = {
  HuggingFace: 'huggingFace',
  OCI: 'oci',
  PersistentVolumeClaim: 'persistentVolumeClaim',
};

/** The key a token is read from when authSecret names none: the XRD's default and upstream's. */
export const DEFAULT_TOKEN_KEY = 'HF_TOKEN';

export interface HuggingFaceSource {
  repo: string;
  revision?: string;
  sizeGiB: number;
}

/** Where the child finds the token: a reference only, never a value. */
export interface AuthSecretRef {
  name: string;
  key: string;
  namespace: string;
}

export interface OciSource {
  ref: string;
  imagePullSecrets?: { name: string }[];
  subPath?: string;
}

export interface ClaimSource {
  claimName: string;
  subPath?: string;
}

export type CacheSource =
  | { source: 'HuggingFace'; huggingFace: HuggingFaceSource; authSecret?: AuthSecretRef }
  | { source: 'OCI'; oci: OciSource }
  | { source: 'PersistentVolumeClaim'; persistentVolumeClaim: ClaimSource };

export interface ModelCache {
  name: string;
  namespace: string;
  source: CacheSource;
  clusterSelector: LabelSelector;
}

// Bounds shared with the XRD (package/modelcaches/definition.yaml), so both refuse the same values.
const MAX_SIZE_GIB = 100_000;
/** A HuggingFace repo id or revision (branch, tag, commit) is far shorter; the bound keeps messages and Job commands small. */
const MAX_HF_FIELD = 256;
/** An OCI reference is a registry host, a path, a tag and a digest: well under this. */
const MAX_OCI_REF = 1024;
const MAX_SUBPATH = 1024;
/** The mount contract admits at most this many pull secrets (lib validateMount). */
const MAX_PULL_SECRETS = 8;
/** A Secret data key: what the API server admits. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const NO_WHITESPACE = /^\S+$/;
/** A reference that pins a digest must pin a whole, well-formed sha256 one. */
const DIGEST_REFERENCE = /^[^@]+@sha256:[0-9a-f]{64}$/;

/** A directory inside the artifact or claim: relative, without empty, "." or ".." segments (it becomes a mount subPath). */
const subPath: Parser<string> = refine(string({ maxLength: MAX_SUBPATH }), (value, field) =>
  value.startsWith('/') || value.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
    ? new InputError(field, `must be a relative path inside the artifact, without empty, "." or ".." segments (got ${describe(value)})`)
    : undefined,
);

const ociReference: Parser<string> = refine(
  string({ maxLength: MAX_OCI_REF, pattern: NO_WHITESPACE, patternHint: 'an OCI reference without spaces' }),
  (value, field) =>
    value.includes('@') && !DIGEST_REFERENCE.test(value)
      ? new InputError(field, `must end in @sha256: and 64 lower-case hex digits when it names a digest (got ${describe(value)})`)
      : undefined,
);

const huggingFaceParser = object({
  repo: string({ maxLength: MAX_HF_FIELD }),
  revision: optional(string({ maxLength: MAX_HF_FIELD })),
  sizeGiB: integer({ min: 1, max: MAX_SIZE_GIB }),
  authSecret: optional(
    object({
      name: dnsSubdomain(),
      key: optional(string({ maxLength: 253, pattern: SECRET_KEY, patternHint: 'a Secret data key (letters, digits, "-", "_", ".")' })),
    }),
  ),
});

const ociParser = object({
  ref: ociReference,
  imagePullSecrets: optional(array(object({ name: dnsSubdomain() }), { maxItems: MAX_PULL_SECRETS })),
  subPath: optional(subPath),
});

const claimParser = object({
  claimName: dnsSubdomain(),
  subPath: optional(subPath),
});

const topLevel = object({
  source: oneOf(SOURCES),
  clusterSelector: labelSelector(),
});

/**
 * Parse the XR: its name and namespace (they reach childName, so they must be
 * DNS labels), the source and exactly its sibling, and the selector (which
 * must select something).
 */
export function parseModelCache(xr: Composite): ModelCache {
  const name = assertNamePart(xr.name, 'metadata.name');
  const namespace = assertNamePart(xr.namespace, 'metadata.namespace');
  const { source, clusterSelector } = topLevel(xr.spec, 'spec');
  const spec = xr.spec as Record<string, unknown>; // an object: topLevel checked it
  const present = (field: string): boolean => spec[field] !== undefined && spec[field] !== null;
  // The missing sibling first: "source: OCI" with only huggingFace set is above all missing its oci.
  if (!present(SIBLING[source])) throw new InputError(`spec.${SIBLING[source]}`, `is required when spec.source is ${source}`);
  for (const other of SOURCES) {
    if (other !== source && present(SIBLING[other])) {
      throw new InputError(`spec.${SIBLING[other]}`, `must be absent when spec.source is ${source} (only spec.${SIBLING[source]} is read)`);
    }
  }
  return { name, namespace, source: parseSource(source, spec, namespace), clusterSelector };
}

function parseSource(source: SourceName, spec: Record<string, unknown>, namespace: string): CacheSource {
  switch (source) {
    case 'HuggingFace': {
      const parsed = huggingFaceParser(spec['huggingFace'], 'spec.huggingFace');
      const huggingFace: HuggingFaceSource = { repo: parsed.repo, sizeGiB: parsed.sizeGiB };
      if (parsed.revision !== undefined) huggingFace.revision = parsed.revision;
      if (!parsed.authSecret) return { source, huggingFace };
      // The child reads the Secret in the cache's own namespace: a cache can't point at another team's token.
      const authSecret: AuthSecretRef = { name: parsed.authSecret.name, key: parsed.authSecret.key ?? DEFAULT_TOKEN_KEY, namespace };
      return { source, huggingFace, authSecret };
    }
    case 'OCI': {
      const parsed = ociParser(spec['oci'], 'spec.oci');
      const oci: OciSource = { ref: parsed.ref };
      if (parsed.imagePullSecrets && parsed.imagePullSecrets.length > 0) {
        oci.imagePullSecrets = parsed.imagePullSecrets.map((secret) => ({ name: secret.name }));
      }
      if (parsed.subPath !== undefined) oci.subPath = parsed.subPath;
      return { source, oci };
    }
    case 'PersistentVolumeClaim': {
      const parsed = claimParser(spec['persistentVolumeClaim'], 'spec.persistentVolumeClaim');
      const persistentVolumeClaim: ClaimSource = { claimName: parsed.claimName };
      if (parsed.subPath !== undefined) persistentVolumeClaim.subPath = parsed.subPath;
      return { source, persistentVolumeClaim };
    }
  }
}

/** What a person recognises the cache by, in events: the repo, the reference or the claim. */
export function artifactLabel(source: CacheSource): string {
  switch (source.source) {
    case 'HuggingFace':
      return source.huggingFace.repo;
    case 'OCI':
      return source.oci.ref;
    case 'PersistentVolumeClaim':
      return source.persistentVolumeClaim.claimName;
  }
}
