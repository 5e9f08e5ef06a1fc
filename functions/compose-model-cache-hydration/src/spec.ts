// The ModelCacheHydration spec, as the parent stamps it (contract.md). Every
// field this function uses is parsed here; anything unusable is an InputError
// naming the field, which the runtime turns into a Fatal result so Crossplane
// changes nothing on the cluster.

import {
  InputError,
  array,
  assertNamePart,
  dnsLabel,
  dnsSubdomain,
  integer,
  object,
  oneOf,
  optional,
  refine,
  string,
  type Composite,
  type Parser,
} from '#lib';

/** The key a HuggingFace token Secret holds when the reference names none (upstream's default). */
export const DEFAULT_TOKEN_KEY = 'HF_TOKEN';

export const SOURCES = ['HuggingFace', 'OCI', 'PersistentVolumeClaim'] as const;

export interface HuggingFaceSource {
  repo: string;
  revision?: string;
  sizeGiB: number;
}
export interface OciSource {
  ref: string;
  imagePullSecrets: string[];
  subPath?: string;
}
export interface ClaimSource {
  claimName: string;
  subPath?: string;
}
export interface AuthSecretRef {
  name: string;
  key: string;
  namespace: string;
}

interface Common {
  clusterName: string;
  cacheName: string;
}
export type HydrationSpec =
  | (Common & { source: 'HuggingFace'; huggingFace: HuggingFaceSource; authSecret?: AuthSecretRef })
  | (Common & { source: 'OCI'; oci: OciSource })
  | (Common & { source: 'PersistentVolumeClaim'; persistentVolumeClaim: ClaimSource });

/**
 * A string that becomes one argument of a shell command (quoted) or of a
 * program. It may hold anything a shell treats specially, because the Job
 * quotes it, but not a NUL (an argument can't carry one) and not a leading
 * "-" (the program would read it as an option; no repo id or git revision
 * starts with one).
 */
const commandArgument = (): Parser<string> =>
  refine(string(), (value, field) => {
    if (value.includes('\0')) return new InputError(field, 'must not contain a NUL character');
    if (value.startsWith('-')) return new InputError(field, `must not start with "-" (got ${JSON.stringify(value.slice(0, 40))})`);
    return undefined;
  });

/** A repo id: a command argument without "@", which separates it from the revision in `repo@revision`. */
const repoId = (): Parser<string> =>
  refine(commandArgument(), (value, field) => (value.includes('@') ? new InputError(field, 'must not contain "@"') : undefined));

/**
 * A directory inside the artifact or claim: relative, no "." or ".." segment,
 * so the mount and MODELPLANE_MODEL stay below /mnt/models (the rule
 * validateMount applies to the published contract).
 */
const subPath = (): Parser<string> =>
  refine(string({ maxLength: 1024 }), (value, field) => {
    const segments = value.split('/');
    if (value.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..')) {
      return new InputError(
        field,
        `must be a relative path without empty, "." or ".." segments (got ${JSON.stringify(value.slice(0, 40))})`,
      );
    }
    return undefined;
  });

/** Secret data keys: Kubernetes' rule. */
const secretKey = (): Parser<string> =>
  string({ maxLength: 253, pattern: /^[-._a-zA-Z0-9]+$/, patternHint: 'a Secret key (letters, digits, "-", "_" and ".")' });

// An OCI reference: [registry/]path[:tag][@sha256:<64 hex>], the distribution
// grammar without IPv6 hosts. As in Docker, the first component is a registry
// only when it has a "." or a port, or is localhost; otherwise it is a path
// component, lower case. The digest form is checked apart, so its message can
// say what a well-formed digest looks like.
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

/** Split a reference; undefined when it is not one. */
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

const reference = (): Parser<string> =>
  refine(string({ maxLength: 1024 }), (value, field) => {
    const at = value.indexOf('@');
    if (at >= 0 && !DIGEST.test(value.slice(at + 1))) {
      return new InputError(
        field,
        `must end in a well-formed digest, @sha256: and 64 lower-case hex digits (got ${JSON.stringify(value.slice(at, at + 80))})`,
      );
    }
    if (!parseReference(value)) {
      return new InputError(
        field,
        `must be an OCI reference, [registry/]repository[:tag][@sha256:<digest>] (got ${JSON.stringify(value.slice(0, 80))})`,
      );
    }
    return undefined;
  });

const parseSpecFields = object({
  clusterName: dnsSubdomain(),
  cacheName: string(),
  source: oneOf(SOURCES),
  huggingFace: optional(object({ repo: repoId(), revision: optional(commandArgument()), sizeGiB: integer({ min: 1, max: 100000 }) })),
  oci: optional(
    object({
      ref: reference(),
      imagePullSecrets: optional(array(object({ name: dnsSubdomain() }), { maxItems: 8 })),
      subPath: optional(subPath()),
    }),
  ),
  persistentVolumeClaim: optional(object({ claimName: dnsSubdomain(), subPath: optional(subPath()) })),
  authSecret: optional(object({ name: dnsSubdomain(), key: optional(secretKey()), namespace: optional(dnsLabel()) })),
});

function required<T>(value: T | undefined, field: string, source: string): T {
  if (value === undefined) throw new InputError(field, `is required when spec.source is ${source}`);
  return value;
}

export function parseSpec(xr: Composite): HydrationSpec {
  const fields = parseSpecFields(xr.spec, 'spec');
  // Both reach childName for the names on the workload cluster, which must stay DNS labels.
  assertNamePart(xr.namespace, 'metadata.namespace');
  const common: Common = { clusterName: fields.clusterName, cacheName: assertNamePart(fields.cacheName, 'spec.cacheName') };

  switch (fields.source) {
    case 'HuggingFace': {
      const hf = required(fields.huggingFace, 'spec.huggingFace', 'HuggingFace');
      const huggingFace: HuggingFaceSource = { repo: hf.repo, sizeGiB: hf.sizeGiB };
      if (hf.revision !== undefined) huggingFace.revision = hf.revision;
      const spec: HydrationSpec = { ...common, source: 'HuggingFace', huggingFace };
      if (fields.authSecret) {
        // Crossplane reads the Secret with its own rights: a reference into another
        // namespace would copy someone else's token onto a workload cluster.
        const namespace = fields.authSecret.namespace ?? xr.namespace;
        if (namespace !== xr.namespace) {
          throw new InputError(
            'spec.authSecret.namespace',
            `must be this ModelCacheHydration's own namespace ${xr.namespace} (got ${namespace})`,
          );
        }
        spec.authSecret = { name: fields.authSecret.name, key: fields.authSecret.key ?? DEFAULT_TOKEN_KEY, namespace };
      }
      return spec;
    }
    case 'OCI': {
      const oci = required(fields.oci, 'spec.oci', 'OCI');
      const source: OciSource = { ref: oci.ref, imagePullSecrets: (oci.imagePullSecrets ?? []).map((s) => s.name) };
      if (oci.subPath !== undefined) source.subPath = oci.subPath;
      return { ...common, source: 'OCI', oci: source };
    }
    case 'PersistentVolumeClaim': {
      const claim = required(fields.persistentVolumeClaim, 'spec.persistentVolumeClaim', 'PersistentVolumeClaim');
      const source: ClaimSource = { claimName: claim.claimName };
      if (claim.subPath !== undefined) source.subPath = claim.subPath;
      return { ...common, source: 'PersistentVolumeClaim', persistentVolumeClaim: source };
    }
  }
}
