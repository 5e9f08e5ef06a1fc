// What each source decides, in one shape, so fn.ts reports every source the
// same way: the phase and why, what to compose, what to publish.

import type { ArtifactKind, CacheMount, CacheNames, InferenceCluster, JsonObject, Phase } from '#lib';

/**
 * The reasons of the ArtifactReady condition. The first five are the ones the
 * parent and the contract know; the others say which gate or source check
 * holds a cluster, so a person reading the child sees why. A list, not only a
 * type, so the README's troubleshooting table can be checked against it.
 */
export const REASONS = [
  'Staged', // Ready
  'Hydrating', // HuggingFace: the claim is bound, the download runs
  'Pending', // waiting for something that will come (a claim to bind, a resolver to finish)
  'HydrationFailed', // the hydration Job or the OCI resolver Job failed
  'AuthSecretMissing', // HuggingFace: the token Secret or its key is missing
  'ClusterNotFound', // Pending: no InferenceCluster of that name
  'ClusterNotProvisioned', // Pending: the cluster reports no provider config yet
  'NoStorageClass', // Pending, HuggingFace: the cluster reports no ReadWriteMany class
  'ClaimNotFound', // Pending, PersistentVolumeClaim: the claim doesn't exist (yet)
  'ClaimNotBound', // Pending, PersistentVolumeClaim: the claim exists, unbound
  'UnsupportedArtifact', // Failed, OCI: neither a container image nor a ModelPack artifact
  'ImageVolumesUnsupported', // Failed, OCI: an image, and the cluster can't mount image volumes
] as const;
export type Reason = (typeof REASONS)[number];

/** Facts a source reports beside the phase (status fields; each also in readCacheState). */
export interface SourceFacts {
  /** PersistentVolumeClaim: the observed claim's access modes. */
  accessModes?: string[];
  /** OCI: the digest the reference resolved to, latched. */
  digest?: string;
  artifactKind?: ArtifactKind;
  /** OCI: the reference the latched digest belongs to; a different spec.oci.ref re-resolves. */
  resolvedRef?: string;
  /** HuggingFace: what the Ready volume holds ("repo" or "repo@revision"); another one is staged anew. */
  staged?: string;
}

export interface Outcome {
  phase: Phase;
  reason: Reason;
  /** Always when not Ready. */
  message?: string;
  /** Only when Ready. */
  mount?: CacheMount;
  facts: SourceFacts;
  /** Desired composed resources by key, in the order they are written. */
  resources: [key: string, resource: JsonObject][];
  /** A hold: desire every observed Object exactly as observed, and compose nothing new. */
  keepObserved?: boolean;
  /** Warnings to emit whenever they hold (before any other event). */
  warnings: { reason: Reason; message: string }[];
  /** What the first compose on this cluster stages, e.g. "Staging Qwen/Qwen3-0.6B on cluster-a". */
  firstCompose?: string;
  /** What this cluster serves, for the event on the transition to Ready. */
  artifact: string;
}

/** The XR's own last status: the Ready latch and the latched OCI result live there. */
export interface PreviousStatus extends SourceFacts {
  phase: Phase;
}

/** Everything a source needs to decide, read once from the request. */
export interface Stage {
  cacheName: string;
  names: CacheNames;
  /** A provisioned cluster: the gate has passed. */
  cluster: InferenceCluster & { providerConfigName: string };
  observed: (key: string) => JsonObject | undefined;
  previous: PreviousStatus;
}
