// What the OCI resolver found, read back from its ConfigMap, and what kind of
// artifact that is. The resolver only fetches: it writes the reference, the
// raw manifest and the manifest's sha256, and this module (pure, testable)
// decides what the manifest means.

import { createHash } from 'node:crypto';
import {
  DIGEST_PATTERN,
  asArray,
  asString,
  getIn,
  getObject,
  isObject,
  remoteManifest,
  stringProblem,
  type ArtifactKind,
  type JsonObject,
  type ReportProblem,
} from '#lib';

/** The ConfigMap keys the resolver writes. */
export const RESULT_KEYS = { ref: 'ref', digest: 'digest', manifest: 'manifest', error: 'error' } as const;

const MEDIA = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
} as const;
const IMAGE_MANIFESTS: readonly string[] = [MEDIA.ociManifest, MEDIA.dockerManifest];
const INDEXES: readonly string[] = [MEDIA.ociIndex, MEDIA.dockerList];
const IMAGE_CONFIGS: readonly string[] = [MEDIA.ociConfig, MEDIA.dockerConfig];
/** Layers a container runtime unpacks into an image volume; anything else it can't. */
const STANDARD_LAYERS: readonly string[] = [
  'application/vnd.oci.image.layer.v1.tar',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd',
  'application/vnd.oci.image.layer.nondistributable.v1.tar',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+zstd',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
];
/** CNCF ModelPack: config `application/vnd.cncf.model.config.v1+json`, layers `application/vnd.cncf.model.weight.*`, … */
const MODELPACK_PREFIX = 'application/vnd.cncf.model.';

// Bounds for what a registry's content may put into a status message.
const MAX_SHOWN_TYPES = 5;
const MAX_TYPE_LENGTH = 100;
const MAX_ERROR_LENGTH = 500;

export type Classification = { kind: ArtifactKind } | { unsupported: string };

/**
 * Image: an image manifest with an image config and only standard layers (or
 * an index of such images: the kubelet picks the node's platform).
 * ModelArtifact: a ModelPack artifactType, config or layer. Anything else is
 * unsupported, described by the media types it holds.
 */
export function classify(manifest: JsonObject): Classification {
  const mediaType = asString(manifest['mediaType']);
  const entries = asArray(manifest['manifests']);
  if ((mediaType !== undefined && INDEXES.includes(mediaType)) || (mediaType === undefined && Array.isArray(manifest['manifests']))) {
    return classifyIndex(mediaType, entries);
  }
  const artifactType = asString(manifest['artifactType']);
  const configType = asString(getIn(manifest, 'config', 'mediaType'));
  const layerTypes = asArray(manifest['layers']).map((layer) => asString(getIn(layer, 'mediaType')) ?? '(none)');
  const isModelPack = [artifactType, configType, ...layerTypes].some((type) => type?.startsWith(MODELPACK_PREFIX));
  if (isModelPack) return { kind: 'ModelArtifact' };
  const isImage =
    (mediaType === undefined || IMAGE_MANIFESTS.includes(mediaType)) &&
    artifactType === undefined &&
    configType !== undefined &&
    IMAGE_CONFIGS.includes(configType) &&
    layerTypes.length > 0 &&
    layerTypes.every((type) => STANDARD_LAYERS.includes(type));
  if (isImage) return { kind: 'Image' };
  const seen = [`manifest ${shown(mediaType)}`];
  if (artifactType !== undefined) seen.push(`artifactType ${shown(artifactType)}`);
  seen.push(`config ${shown(configType)}`, `layers ${layerTypes.length === 0 ? '(none)' : distinct(layerTypes)}`);
  return { unsupported: seen.join(', ') };
}

/** Platform images, with attestations (platform unknown/unknown) left aside: Image. */
function classifyIndex(mediaType: string | undefined, entries: unknown[]): Classification {
  const types = entries.map((entry) => asString(getIn(entry, 'mediaType')) ?? '(none)');
  const artifactTypes = entries.map((entry) => asString(getIn(entry, 'artifactType'))).filter((t): t is string => t !== undefined);
  const platformImages = entries.filter((entry) => {
    const type = asString(getIn(entry, 'mediaType'));
    const os = asString(getIn(entry, 'platform', 'os'));
    return type !== undefined && IMAGE_MANIFESTS.includes(type) && os !== undefined && os !== 'unknown';
  });
  if (platformImages.length > 0 && !artifactTypes.some((t) => t.startsWith(MODELPACK_PREFIX))) return { kind: 'Image' };
  const seen = [`index ${shown(mediaType)}`, `entries ${types.length === 0 ? '(none)' : distinct(types)}`];
  if (artifactTypes.length > 0) seen.push(`artifactTypes ${distinct(artifactTypes)}`);
  seen.push('no entry is a platform image');
  return { unsupported: seen.join(', ') };
}

function shown(type: string | undefined): string {
  if (type === undefined) return '(none)';
  return type.length > MAX_TYPE_LENGTH ? `${type.slice(0, MAX_TYPE_LENGTH)}…` : type;
}

function distinct(types: string[]): string {
  const unique = [...new Set(types)];
  const listed = unique.slice(0, MAX_SHOWN_TYPES).map(shown).join(', ');
  return unique.length > MAX_SHOWN_TYPES ? `${listed} and ${unique.length - MAX_SHOWN_TYPES} more` : listed;
}

export type ResolverResult =
  /** No result for this reference yet (no ConfigMap, an empty one, or one for an earlier reference). */
  | { state: 'none' }
  /** The last attempt for this reference failed, saying why. */
  | { state: 'error'; error: string }
  | { state: 'resolved'; digest: string; kind: ArtifactKind }
  /** Definitive for this reference: neither kind, or a result that can't be trusted. */
  | { state: 'unsupported'; digest?: string; message: string }
  | { state: 'invalid'; message: string; problem: ReportProblem };

/** A registry serves manifests of at most 4 MiB (the distribution spec); a ConfigMap holds 1 MiB. */
const MAX_MANIFEST_LENGTH = 4 * 1024 * 1024;

/**
 * The resolver's ConfigMap, as observed, for the reference `ref` (`pinned`:
 * its own digest, if it names one). Written on a workload cluster, so it is
 * checked against what it claims: a well-formed digest, the sha256 of the
 * very manifest it comes with, the pinned one when the reference names one.
 * `label` names the result in a problem.
 */
export function readResult(
  configMap: JsonObject | undefined,
  ref: string,
  pinned?: string,
  label = "the resolver's result",
): ResolverResult {
  const data = getObject(remoteManifest(configMap), 'data');
  if (!data || data[RESULT_KEYS.ref] !== ref) return { state: 'none' };
  const error = asString(data[RESULT_KEYS.error]);
  if (error !== undefined) return { state: 'error', error: bounded(error.trim()) };
  const digest = asString(data[RESULT_KEYS.digest]);
  const text = asString(data[RESULT_KEYS.manifest]);
  if (digest === undefined || text === undefined) return { state: 'none' };
  const invalid = (field: string, problem: string, message: string): ResolverResult => ({
    state: 'invalid',
    message,
    problem: { report: label, field, problem },
  });
  const malformed = stringProblem(digest, 71, DIGEST_PATTERN);
  if (malformed !== undefined) return invalid('digest', malformed, `the resolver reported a malformed digest (it ${malformed})`);
  if (text.length > MAX_MANIFEST_LENGTH) {
    const problem = `is ${text.length} characters, over the bound ${MAX_MANIFEST_LENGTH}`;
    return invalid('manifest', problem, `the resolver reported a manifest that ${problem}`);
  }
  if (`sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}` !== digest) {
    const problem = 'is not the sha256 of the manifest it came with';
    return invalid('digest', problem, `the resolver reported a digest ${digest} that ${problem}`);
  }
  if (pinned !== undefined && digest !== pinned) {
    return invalid(
      'digest',
      `is not the digest the reference is pinned to`,
      `the resolver read a manifest with digest ${digest} for a reference pinned to ${pinned}`,
    );
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return { state: 'unsupported', digest, message: 'its manifest is not JSON' };
  }
  if (!isObject(manifest)) return { state: 'unsupported', digest, message: 'its manifest is not a JSON object' };
  const classification = classify(manifest);
  if ('kind' in classification) return { state: 'resolved', digest, kind: classification.kind };
  return { state: 'unsupported', digest, message: classification.unsupported };
}

function bounded(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `…${text.slice(-MAX_ERROR_LENGTH)}` : text;
}
