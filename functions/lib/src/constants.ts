// The names, paths and numbers that more than one function must agree on, each
// defined once, each with the reason it has the value it has.

/** The API group and version of every XR these functions compose or read. */
export const MODELPLANE_API_VERSION = 'modelplane.ai/v1alpha1';

export const KIND = {
  ModelCache: 'ModelCache',
  ModelCacheHydration: 'ModelCacheHydration',
  ModelCacheShard: 'ModelCacheShard',
  ModelReplica: 'ModelReplica',
  InferenceCluster: 'InferenceCluster',
} as const;

/**
 * The namespace on every workload cluster for the cache and the serving pods
 * alike: a pod can mount only a claim in its own namespace (architecture
 * decision 4), and upstream Modelplane v0.3.1 uses `default` for both.
 */
export const REMOTE_NAMESPACE = 'default';

/**
 * A mount staged outside `default` (a per-team workload namespace, settings.ts)
 * names its namespace in this env var: the replica reads it, so engine pods
 * land where the claim is (a pod can mount only a claim in its own namespace),
 * and a replica configured otherwise can say so. Absent means `default`.
 */
export const WORKLOAD_NAMESPACE_ENV = 'MODELPLANE_WORKLOAD_NAMESPACE';

/** Where engine pods read the model. Upstream's path; engines are configured against it. */
export const CACHE_MOUNT_PATH = '/mnt/models';

/**
 * The pod volume that carries the cache. Never `dshm` (the shared-memory volume
 * every engine pod has) and never the HOME scratch volume's name.
 */
export const CACHE_VOLUME = 'model-cache';

/** The shared-memory volume every engine pod gets first (upstream's name). */
export const SHM_VOLUME = 'dshm';

/**
 * A read-only cache leaves an engine nowhere to write its caches (HuggingFace,
 * torch, vLLM all write under $HOME), so such pods get this writable scratch
 * volume as HOME.
 */
export const HOME_VOLUME = 'modelplane-home';
export const HOME_MOUNT_PATH = '/modelplane-home';
/** Bounded so a runaway engine cache evicts its own pod, not the node. */
export const HOME_SIZE_LIMIT = '20Gi';

/**
 * The shared-memory volume a PrefillDecode engine pod also declares for NIXL
 * KV transfer (upstream's name; compose-model-replica adds it).
 */
export const NIXL_SHM_VOLUME = 'nixl-shm';

/** Volume names a cache contract may not use: the pod already has them. */
export const RESERVED_VOLUME_NAMES: readonly string[] = [SHM_VOLUME, HOME_VOLUME, NIXL_SHM_VOLUME];

/** Where the hydration Job writes the weights (a different path from engines', so they can't be confused). */
export const HYDRATION_MOUNT_PATH = '/mnt/artifact';

/**
 * The hydration Job's image: the Modelplane hydration image (images/hydration/),
 * Python with the pinned huggingface_hub preinstalled and the script at
 * /opt/modelplane/hydrate.py, so a Job installs nothing and carries no script.
 * Its tag is the package version; images/digests.json has its digest.
 */
export const HYDRATION_IMAGE = 'xpkg.upbound.io/modelplane/hydration:v0.1.0';
/** The plain Python image a platform may name instead (the script then goes inline, huggingface_hub from pip). */
export const STOCK_PYTHON_IMAGE = 'python:3.11-slim';

/** Bounded retries: after three failed pods the Job is Failed and the cluster reports why. */
export const JOB_BACKOFF_LIMIT = 3;
/**
 * A finished Job (and its pod, with its logs) stays three minutes for a person to read, then goes. It is
 * also the clock of the automatic retries (a function can't read the time): attempt k's Job carries
 * JOB_TTL_SECONDS * 2^(k-1), and the next attempt starts when Kubernetes removes the failed one.
 */
export const JOB_TTL_SECONDS = 180;
/**
 * Job attempts per artifact before a cluster stays Failed until a person asks again: the first and two
 * automatic retries, 3 and 6 minutes after a failure (the Job's TTL, doubled per attempt). Each attempt
 * already retries its pod JOB_BACKOFF_LIMIT times within about a minute, so these cover an outage of
 * minutes (a hub or registry blip, a proxy being fixed); a failure that outlasts ~10 minutes is rarely
 * transient (a wrong repo, a token without access, a full volume), and retrying it only hides it.
 */
export const JOB_ATTEMPTS = 3;

/**
 * A person asks for another round of attempts on a Failed cluster by setting this annotation to a new
 * value: on a ModelCache (every failed cluster) or on one ModelCacheHydration (that cluster).
 */
export const RETRY_ANNOTATION = 'modelplane.ai/retry';
/**
 * Where compose-model-cache copies the ModelCache's retry annotation on each child: a key of its own, so
 * the parent never overwrites a retry a person asked of one child.
 */
export const CACHE_RETRY_ANNOTATION = 'modelplane.ai/cache-retry';
/**
 * A person asks to check a Ready HuggingFace copy against the hub again by setting this annotation to a
 * new value: on a ModelCache (every cluster) or on one ModelCacheHydration (that cluster). The cluster
 * stays Ready while it is checked, then is Ready again or Failed naming the file that no longer matches.
 */
export const REVERIFY_ANNOTATION = 'modelplane.ai/reverify';
/** Where compose-model-cache copies the ModelCache's re-verify annotation on each child (as the retry's). */
export const CACHE_REVERIFY_ANNOTATION = 'modelplane.ai/cache-reverify';

/** On everything the cache composes on a workload cluster, so a person can list it. */
export const LABEL_MODELCACHE = 'modelplane.ai/modelcache';
/**
 * On everything a cache stages remotely: the control-plane namespace it was staged for. Every team's
 * objects share the workload namespace, so this is how a claim staged for one team is told from another
 * team's (a PersistentVolumeClaim-source cache can't mount it).
 */
export const LABEL_NAMESPACE = 'modelplane.ai/namespace';
/** On everything a replica composes on a workload cluster (with LABEL_NAMESPACE): the replica it belongs to. */
export const LABEL_MODELREPLICA = 'modelplane.ai/modelreplica';
/** The label that names the owning XR on a remote object, per kind (docs/design/names.md). */
export const OWNED_LABELS_KINDS: readonly (readonly ['ModelCache' | 'ModelReplica', string])[] = [
  ['ModelCache', LABEL_MODELCACHE],
  ['ModelReplica', LABEL_MODELREPLICA],
];
/** On each ModelCacheHydration: the cluster it stages. */
export const LABEL_CLUSTER = 'modelplane.ai/cluster';
/** On each ModelCacheShard: its index among the cache's shards. */
export const LABEL_SHARD = 'modelplane.ai/shard';

// ---------------------------------------------------------------------------
// The fan-out's bounds (docs/design/fleet.md): every XR composes about a
// hundred resources at most, and no status grows with the fleet.

/**
 * Clusters one ModelCacheShard stages: a reconcile applies at most this many
 * children, well inside Crossplane's two minutes, and the shard's status (one
 * entry each) stays under 100 kB. 100 shards of 100 make the 10,000-cluster
 * design point with the ModelCache itself composing 100 resources.
 */
export const SHARD_CAPACITY = 100;
/**
 * A ModelCache lists every cluster's entry, mount included, while its fleet
 * has at most this many (exactly as before shards); a larger fleet lists only
 * the clusters that are not Ready and those being handed over.
 */
export const CLUSTER_LIST_LIMIT = 100;
/** Of a fleet above CLUSTER_LIST_LIMIT, the not-Ready clusters a ModelCache lists (Failed first, then by name). */
export const NOT_READY_LISTED = 50;
/** Children of the old flat layout handed over to shards at a time: bounded work per reconcile, per step. */
export const HANDOVER_BATCH = 50;
/** A status entry's message is cut to this length ("…" at the end): a child's words never grow a parent past its bound. */
export const ENTRY_MESSAGE_MAX = 512;
/**
 * On a ModelCacheHydration being handed to another parent: compose every
 * Object without the Delete management policy, so deleting the hydration
 * leaves the remote objects (the staged claim above all) where they are.
 */
export const ORPHAN_ON_DELETE_ANNOTATION = 'modelplane.ai/orphan-on-delete';

/** The env var a cache contract always sets: what `--model=$(MODELPLANE_MODEL)` should read. */
export const MODEL_ENV = 'MODELPLANE_MODEL';
/** HuggingFace reads and writes its hub cache here (the hub layout, not a flat directory). */
export const HF_HUB_CACHE_ENV = 'HF_HUB_CACHE';
/**
 * huggingface_hub reads only its cache when this is "1": no call to the hub, no
 * download into the shared claim at serve time (the hydration Job staged it).
 */
export const HF_HUB_OFFLINE_ENV = 'HF_HUB_OFFLINE';
export const HF_HUB_OFFLINE_VALUE = '1';
/**
 * The revision a HuggingFace cache staged, for `--revision=$(MODELPLANE_MODEL_REVISION)`:
 * offline, huggingface_hub resolves a branch or tag through the refs the
 * download wrote, and a commit directly, so the engine reads exactly the
 * staged snapshot.
 */
export const MODEL_REVISION_ENV = 'MODELPLANE_MODEL_REVISION';
/** What `hf download` fetches when no revision is given (huggingface_hub's DEFAULT_REVISION). */
export const HF_DEFAULT_REVISION = 'main';

/** The ModelPack CSI driver that mounts CNCF model artifacts, and its reference attribute. */
export const MODELPACK_CSI_DRIVER = 'model.csi.modelpack.org';
export const MODELPACK_CSI_REFERENCE_ATTRIBUTE = 'model.csi.modelpack.org/reference';

/** Upstream's response TTL: Crossplane calls again within a minute even when nothing changes. */
export const RESPONSE_TTL_SECONDS = 60;

/** The HTTPRoute parent on every workload cluster (upstream v0.3.1), unless the cluster reports another. */
export const DEFAULT_GATEWAY = { name: 'inference-gateway', namespace: 'modelplane-system' } as const;
