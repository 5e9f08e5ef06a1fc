// What each source decides, in one shape, so fn.ts reports every source the
// same way: the phase and why, what to compose, what to publish.

import type {
  ArtifactKind,
  CacheMount,
  CacheNames,
  CacheProgress,
  ClusterSettings,
  InferenceCluster,
  JsonObject,
  Phase,
  ReportProblem,
  Unreachable,
} from '#lib';

/** The Job attempts of one round at one artifact (status `attempts`, `attemptsFor`, `retryRequest`). */
export interface AttemptRecord {
  artifact: string;
  /** Attempts made this round; 0 before the first Job runs. */
  count: number;
  /** The retry request (annotation value) this round answers, or last seen while Ready. */
  retryRequest?: string;
}

/** An event, told once: on the reconcile where what it says became true. */
export interface Notice {
  reason: string;
  message: string;
}

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
  'Held', // Ready as last seen: the cluster can't be read (or staged on) now, the mount stays published
  'ClaimOwnedElsewhere', // Failed, PersistentVolumeClaim: the claim holds what Modelplane staged for another namespace
  'StagedInOtherNamespace', // Warning only: staged in a workload namespace before the setting changed; it stays there
  'OwnedElsewhere', // Failed: an object this cache composes on the cluster belongs to another XR (docs/design/names.md)
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
  /** What the Ready cluster serves ("repo[@revision]", the OCI reference, "claim <name>"); another one is staged anew. */
  staged?: string;
  /** HuggingFace and OCI: the Job attempts at this artifact. */
  attempts?: AttemptRecord;
  /** HuggingFace: the download's report, as observed on its Job (latched at 100% once Ready). */
  progress?: CacheProgress;
  /** HuggingFace: the download checked every file against the hub before it wrote its marker. */
  verified?: boolean;
  /** HuggingFace: the commit the revision resolved to (latched with Ready). */
  commit?: string;
  /** HuggingFace: the claim size asked for (spec.huggingFace.sizeGiB, or resolved on the cluster and latched). */
  sizeGiB?: number;
  /** HuggingFace: the re-verification request last answered (Ready again, or Failed). */
  reverifiedFor?: string;
  /** The cluster's Objects can't reach its API server (reach.ts): since when, and the error. */
  unreachable?: Unreachable;
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
  /** Observed keys whose remote objects another XR owns: kept observe-only in a hold. */
  othersOwn?: string[];
  /** Warnings, emitted when they hold and the last status did not already say the same. */
  warnings: { reason: Reason; message: string }[];
  /** Normal events of a transition the source saw (a retry starting). */
  notices?: Notice[];
  /** What the first compose on this cluster stages, e.g. "Staging Qwen/Qwen3-0.6B on cluster-a". */
  firstCompose?: string;
  /** What this cluster serves, for the event on the transition to Ready. */
  artifact: string;
  /** Reports read from the cluster that failed their checks (lib reports.ts): nothing was taken from them. */
  refused?: ReportProblem[];
}

/** The XR's own last status: the Ready and Failed latches and the latched OCI result live there. */
export interface PreviousStatus extends SourceFacts {
  phase: Phase;
  /** The last message: an event is told once, when what it says is new. */
  message?: string;
  /** The last published mount (only read when Ready): a hold keeps it. */
  mount?: JsonObject;
  /** Fields of that status that failed their checks, and were not read. */
  problems?: ReportProblem[];
}

/** Everything a source needs to decide, read once from the request. */
export interface Stage {
  cacheName: string;
  names: CacheNames;
  /** A provisioned cluster: the gate has passed. */
  cluster: InferenceCluster & { providerConfigName: string };
  observed: (key: string) => JsonObject | undefined;
  previous: PreviousStatus;
  /** The XR's namespace: what everything staged remotely is labelled with. */
  namespace: string;
  /** The retry request on this XR (its own, and its ModelCache's copied down), if any. */
  retryRequest?: string;
  /** HuggingFace: the re-verification request on this XR (its own, and its ModelCache's), if any. */
  reverifyRequest?: string;
  /** The platform team's settings for this cluster (the function input, its per-cluster overrides applied). */
  settings: ClusterSettings;
  /**
   * This XR takes the cluster over from the one it replaces (spec.inheritedStatus,
   * docs/design/fleet.md) and has no status of its own yet: `previous` is the
   * inherited status, and an Object it composes for the first time is adopting
   * a remote object that exists, not staging a new one.
   */
  adopting: boolean;
  /** The namespace on the workload cluster everything of this cache goes into (settings.ts decides it). */
  workloadNamespace: string;
}
