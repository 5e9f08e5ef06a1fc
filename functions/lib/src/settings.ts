// The platform team's settings: what a Composition's function step `input`
// says about the images, the network, the Jobs, the storage and the workload
// namespace of everything a cache or a replica puts on a workload cluster.
//
// Absent, every setting is today's value, so an unchanged Composition renders
// exactly as before. Each setting is parsed here, once, and a bad one is an
// InputError naming the field under `input.` (a Fatal result: Crossplane then
// changes nothing). No setting is ever a secret: a URL that carries
// credentials is refused, so nothing here can leak a password into an object
// or a log.

import type { V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
import {
  HYDRATION_IMAGE,
  STOCK_PYTHON_IMAGE,
  JOB_BACKOFF_LIMIT,
  JOB_TTL_SECONDS,
  LABEL_CLUSTER,
  LABEL_NAMESPACE,
  REMOTE_NAMESPACE,
  WORKLOAD_NAMESPACE_ENV,
} from './constants.js';
import {
  DNS_LABEL,
  InputError,
  array,
  boolean,
  describe,
  dnsSubdomain,
  integer,
  object,
  oneOf,
  optional,
  record,
  string,
  type Parser,
} from './input.js';
import { isObject, type JsonObject } from './json.js';
import { childName } from './names.js';
import type { ManagementPolicy } from './remote.js';
import { labelSelector, matchesSelector, type LabelSelector } from './selector.js';
import { parseReference } from './source.js';

/** The API group and version of our function input kinds (the CRDs in each function's package/input/). */
export const SETTINGS_API_VERSION = 'fn.modelplane.ai/v1alpha1';
export const SETTINGS_KIND = { hydration: 'HydrationSettings', replica: 'ReplicaSettings' } as const;

/** crane reads manifests with docker credentials; the debug build adds the busybox shell the script needs. Pinned by tag. */
export const RESOLVER_IMAGE = 'gcr.io/go-containerregistry/crane/debug:v0.20.2';
/** kubectl writes the result; Kubernetes' own image carries sh and jq (for merging pull secrets). Pinned by tag. */
export const PUBLISHER_IMAGE = 'registry.k8s.io/kubectl:v1.33.4';

/** The CA bundle's key in its ConfigMap when none is named (cert-manager's trust-manager and most tools write this one). */
export const DEFAULT_CA_KEY = 'ca.crt';

// ---------------------------------------------------------------------------
// The workload namespace (architecture decision 4): one place decides it.

export const WORKLOAD_NAMESPACE_MODES = ['Shared', 'PerTeam', 'PerCluster'] as const;
export type WorkloadNamespaceMode = (typeof WORKLOAD_NAMESPACE_MODES)[number];

/**
 * Where a team's caches and replicas live on a workload cluster. Shared:
 * `default`, as upstream v0.3.1. PerTeam: `childName("mp", <team namespace>)`,
 * as upstream's newer replica code names it: always a DNS label of at most 63
 * characters (a plain `mp-<ns>` is not, for a namespace over 60 characters),
 * and the hash keeps it off a namespace someone named `mp-<ns>` by hand.
 * PerCluster: `childName("mp", "cluster", <cluster>)`, one namespace per
 * InferenceCluster, for platforms that run several InferenceClusters on one
 * physical cluster (one provider config): each keeps its objects apart.
 */
export function workloadNamespace(mode: WorkloadNamespaceMode, teamNamespace: string, cluster: string): string {
  switch (mode) {
    case 'PerTeam':
      return childName('mp', teamNamespace);
    case 'PerCluster':
      return childName('mp', 'cluster', cluster);
    case 'Shared':
      return REMOTE_NAMESPACE;
  }
}

/**
 * The per-team namespace is created, never deleted by us: one cache's (or one
 * replica's) removal must not delete a namespace another one still uses.
 */
export const NAMESPACE_POLICIES: readonly ManagementPolicy[] = ['Observe', 'Create', 'Update'];

/**
 * The Namespace manifest of a per-team workload namespace, labelled with the
 * team (control-plane) namespace; of a per-cluster one, with the cluster (every
 * team's objects there ask for the very same Namespace).
 */
export function namespaceManifest(name: string, owner: { label: string; value: string }): JsonObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [owner.label]: owner.value } } };
}

/** What a workload namespace's Namespace is labelled with: its team, or (PerCluster) its cluster. */
export function namespaceOwner(mode: WorkloadNamespaceMode, teamNamespace: string, cluster: string): { label: string; value: string } {
  return mode === 'PerCluster' ? { label: LABEL_CLUSTER, value: cluster } : { label: LABEL_NAMESPACE, value: teamNamespace };
}

export interface Placement {
  /** Where this cache's or replica's objects go on the workload cluster. */
  namespace: string;
  /** The namespace the settings name, when the objects stay elsewhere, and why they do. */
  elsewhere?: { configured: string; because: 'staged' | 'cache' };
}

/**
 * Where a cache's objects (or a replica's engines) go. The settings decide
 * for new ones; but what already exists stays where it is, and a replica
 * follows its cache, because a pod can mount only a claim in its own
 * namespace. So switching the setting never moves (deletes and recreates) a
 * staged volume or a running engine: `staged` is the namespace of what was
 * already composed, `cache` the namespace a replica's cache is staged in.
 * A value that is not a DNS label was not composed by us, and is not followed.
 */
export function placement(
  mode: WorkloadNamespaceMode,
  teamNamespace: string,
  cluster: string,
  found: { cache?: string; staged?: string } = {},
): Placement {
  const configured = workloadNamespace(mode, teamNamespace, cluster);
  const usable = (ns: string | undefined): ns is string => ns !== undefined && ns.length <= 63 && DNS_LABEL.test(ns);
  const [namespace, because] = usable(found.cache)
    ? [found.cache, 'cache' as const]
    : usable(found.staged)
      ? [found.staged, 'staged' as const]
      : [configured, undefined];
  return because === undefined || namespace === configured ? { namespace } : { namespace, elsewhere: { configured, because } };
}

/** The namespace a mount says it was staged in (absent: `default`). */
export function mountNamespace(mount: { env: readonly { name: string; value?: string }[] }): string {
  return mount.env.find((e) => e.name === WORKLOAD_NAMESPACE_ENV)?.value ?? REMOTE_NAMESPACE;
}

// ---------------------------------------------------------------------------
// Field parsers.

/**
 * Every object of the input is closed: no API server prunes a Composition's
 * step input, so an unknown field (a typo: network.hfEndpiont) is refused,
 * naming it and the nearest known field, never silently ignored.
 */
const CLOSED = { closed: true } as const;
/** The top level also has the metadata a manifest carries (the input CRD allows it); nothing reads it. */
const INPUT_TOP = { closed: true, ignored: ['metadata'] } as const;

/** An image reference as the kubelet takes it: registry/path[:tag][@sha256:...]. */
export const imageReference = (): Parser<string> => (value, field) => {
  const ref = string({ maxLength: 512 })(value, field);
  if (parseReference(ref) === undefined) {
    throw new InputError(field, `must be an image reference such as registry.example.com/team/image:tag (got ${describe(ref)})`);
  }
  return ref;
};

/**
 * An http(s) URL without credentials or anything a shell or an env reader
 * could misread. A proxy or mirror password belongs in a Secret, never in a
 * Composition, an object on a cluster or a log: a URL with user info
 * (user:password@, or a token before the "@") is refused, and so is a query or
 * a fragment (a base URL needs neither, and a token could hide in either).
 * Whichever check refuses the value, the message quotes it without its user
 * info, query or fragment (describe, through redactCredentials).
 */
export const httpUrl = (): Parser<string> => (value, field) => {
  const text = string({ maxLength: 2048 })(value, field);
  const refuse = (): never => {
    throw new InputError(field, `must be an http or https URL such as http://proxy.example.com:3128 (got ${describe(text)})`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse();
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') refuse();
  // Printable ASCII without quotes, "$", backquotes or backslashes: a URL needs none of them (they can be
  // percent-encoded), and without them no value reads differently to a shell, pip or an env parser.
  if (!/^[\x21-\x7e]+$/.test(text) || /['"$`\\]/.test(text)) {
    throw new InputError(
      field,
      `must be printable ASCII without spaces, quotes, "$", backquotes or backslashes (percent-encode them) (got ${describe(text)})`,
    );
  }
  // "http://@host" has an empty user, which URL reports as none: the "@" in the authority says it.
  const authority = /^[a-z]+:\/\/([^/?#]*)/i.exec(text)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    throw new InputError(
      field,
      `must not carry credentials (a user or password before the host; got ${describe(text)}): settings are not secret, so a password here would be in plain sight`,
    );
  }
  if (text.includes('?') || text.includes('#')) {
    throw new InputError(
      field,
      `must not have a query or a fragment (got ${describe(text)}): a base URL needs neither, and a token in one would be in plain sight`,
    );
  }
  return text;
};

/** NO_PROXY: host names, domains (.example.com), IPs and CIDRs, comma-separated. */
const NO_PROXY_ENTRY =
  /^(\*|\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?|[0-9.]+\/[0-9]{1,2}|[0-9A-Fa-f:]+(\/[0-9]{1,3})?)$/;
export const noProxyList = (): Parser<string> => (value, field) => {
  const text = string({ maxLength: 4096 })(value, field);
  const entries = text.split(',');
  const bad = entries.find((entry) => !NO_PROXY_ENTRY.test(entry));
  if (bad !== undefined) {
    throw new InputError(
      field,
      `must be host names, .domains, IP addresses or CIDRs separated by commas, without spaces (got ${describe(bad === '' ? text : bad)})`,
    );
  }
  return text;
};

/** A ConfigMap or Secret data key. */
export const dataKey = (): Parser<string> =>
  string({ maxLength: 253, pattern: /^[-._a-zA-Z0-9]+$/, patternHint: 'a data key: letters, digits, "-", "_" and "."' });

/** A Kubernetes qualified name (label keys, resource names): [prefix/]name. */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const qualifiedName = (): Parser<string> =>
  string({ maxLength: 317, pattern: QUALIFIED_NAME, patternHint: 'a qualified name such as nvidia.com/gpu or node-role' });
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const labelValue = (): Parser<string> =>
  string({ minLength: 0, maxLength: 63, pattern: LABEL_VALUE, patternHint: 'a label value: letters, digits, "-", "_" and "."' });

/** A resource quantity: 500m, 2, 4Gi, 1e3. A number is taken as its decimal text. */
const QUANTITY = /^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+|[KMGTPE]i|[mkMGTPE])?$/;
const quantity = (): Parser<string> => (value, field) => {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return String(value);
  return string({ maxLength: 64, pattern: QUANTITY, patternHint: 'a quantity such as 500m, 2 or 4Gi' })(value, field);
};

const parseResources: Parser<V1ResourceRequirements> = (value, field) => {
  const parsed = object(
    {
      requests: optional(record(quantity(), { maxProperties: 16 })),
      limits: optional(record(quantity(), { maxProperties: 16 })),
    },
    CLOSED,
  )(value, field);
  const out: V1ResourceRequirements = {};
  for (const part of ['requests', 'limits'] as const) {
    const entries = parsed[part];
    if (!entries) continue;
    for (const name of Object.keys(entries)) qualifiedName()(name, `${field}.${part}.${name}`);
    out[part] = entries;
  }
  return out;
};

const parseToleration: Parser<V1Toleration> = (value, field) => {
  const parsed = object(
    {
      key: optional(qualifiedName()),
      operator: optional(oneOf(['Exists', 'Equal'])),
      value: optional(labelValue()),
      effect: optional(oneOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
      tolerationSeconds: optional(integer({ min: 0, max: 31_536_000 })),
    },
    CLOSED,
  )(value, field);
  if (parsed.operator === 'Exists' && parsed.value !== undefined) {
    throw new InputError(`${field}.value`, 'must be empty when operator is Exists');
  }
  if (parsed.key === undefined && parsed.operator !== 'Exists') {
    throw new InputError(`${field}.operator`, 'must be Exists when key is empty (a toleration of every taint)');
  }
  if (parsed.tolerationSeconds !== undefined && parsed.effect !== 'NoExecute') {
    throw new InputError(`${field}.tolerationSeconds`, 'applies only to effect NoExecute');
  }
  // Kubernetes' field order, so a rendered Job reads as kubectl would show it.
  const out: V1Toleration = {};
  if (parsed.key !== undefined) out.key = parsed.key;
  if (parsed.operator !== undefined) out.operator = parsed.operator;
  if (parsed.value !== undefined) out.value = parsed.value;
  if (parsed.effect !== undefined) out.effect = parsed.effect;
  if (parsed.tolerationSeconds !== undefined) out.tolerationSeconds = parsed.tolerationSeconds;
  return out;
};

const nodeSelector = (): Parser<Record<string, string>> => (value, field) => {
  const parsed = record(labelValue(), { maxProperties: 32 })(value, field);
  for (const key of Object.keys(parsed)) qualifiedName()(key, `${field}.${key}`);
  return parsed;
};

/** Where the hydration Job's script comes from (ClusterSettings.install.script). */
export const HYDRATION_SCRIPTS = ['Image', 'Inline'] as const;
export type HydrationScript = (typeof HYDRATION_SCRIPTS)[number];

/** Modes a staged claim may ask for: the hydration Job writes it, so never ReadOnlyMany. */
export const STAGED_ACCESS_MODES = ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
export type StagedAccessMode = (typeof STAGED_ACCESS_MODES)[number];

// ---------------------------------------------------------------------------
// The groups. Each field optional: the same shapes serve the defaults and a
// per-cluster override, which sets only what differs.

const groups = {
  images: optional(
    object(
      {
        hydration: optional(imageReference()),
        resolver: optional(imageReference()),
        publisher: optional(imageReference()),
        pullSecrets: optional(array(dnsSubdomain(), { maxItems: 16 })),
      },
      CLOSED,
    ),
  ),
  install: optional(
    object({ pip: optional(boolean()), indexUrl: optional(httpUrl()), script: optional(oneOf(HYDRATION_SCRIPTS)) }, CLOSED),
  ),
  network: optional(
    object(
      {
        hfEndpoint: optional(httpUrl()),
        httpsProxy: optional(httpUrl()),
        httpProxy: optional(httpUrl()),
        noProxy: optional(noProxyList()),
        caBundle: optional(object({ configMap: dnsSubdomain(), key: optional(dataKey()) }, CLOSED)),
      },
      CLOSED,
    ),
  ),
  jobs: optional(
    object(
      {
        resources: optional(parseResources),
        nodeSelector: optional(nodeSelector()),
        tolerations: optional(array(parseToleration, { maxItems: 32 })),
        priorityClassName: optional(dnsSubdomain()),
        // The TTL is also the retry clock (attempt k waits TTL * 2^(k-1)): at least a minute, so a
        // person can read a failed pod's log and a hub blip has time to pass; at most a day.
        ttlSecondsAfterFinished: optional(integer({ min: 60, max: 86_400 })),
        backoffLimit: optional(integer({ min: 0, max: 10 })),
      },
      CLOSED,
    ),
  ),
  storage: optional(object({ accessMode: optional(oneOf(STAGED_ACCESS_MODES)), imageVolumes: optional(boolean()) }, CLOSED)),
};

type Groups = ReturnType<ReturnType<typeof object<typeof groups>>>;

const parseOverride = object({ clusterSelector: labelSelector(CLOSED), ...groups }, CLOSED);
const parseHydrationInput = object(
  {
    apiVersion: string(),
    kind: string(),
    workloadNamespace: optional(oneOf(WORKLOAD_NAMESPACE_MODES)),
    ...groups,
    clusters: optional(array(parseOverride, { maxItems: 64 })),
  },
  INPUT_TOP,
);
const parseReplicaInput = object(
  { apiVersion: string(), kind: string(), workloadNamespace: optional(oneOf(WORKLOAD_NAMESPACE_MODES)) },
  INPUT_TOP,
);
/** The kind first, open: settings for another function are named as such, not as a list of unknown fields. */
const parseKind = object({ apiVersion: string(), kind: string() });

// ---------------------------------------------------------------------------
// The settings one cluster gets.

export interface CaBundle {
  configMap: string;
  key: string;
}

export interface ClusterSettings {
  images: { hydration: string; resolver: string; publisher: string; pullSecrets: string[] };
  /**
   * script Image: the image is (a copy of) the Modelplane hydration image, and
   * carries the script and huggingface_hub. Inline: a plain Python image: the
   * script goes in the Job's command, pip installs huggingface_hub unless pip is false.
   */
  install: { pip: boolean; indexUrl?: string; script: HydrationScript };
  network: { hfEndpoint?: string; httpsProxy?: string; httpProxy?: string; noProxy?: string; caBundle?: CaBundle };
  jobs: {
    resources?: V1ResourceRequirements;
    nodeSelector?: Record<string, string>;
    tolerations?: V1Toleration[];
    priorityClassName?: string;
    ttlSecondsAfterFinished: number;
    backoffLimit: number;
  };
  /** imageVolumes absent: what the InferenceCluster reports (status.cache.imageVolumes). */
  storage: { accessMode: StagedAccessMode; imageVolumes?: boolean };
}

export interface HydrationSettings {
  workloadNamespace: WorkloadNamespaceMode;
  base: Groups;
  clusters: { selector: LabelSelector; patch: Groups }[];
}

export interface ReplicaSettings {
  workloadNamespace: WorkloadNamespaceMode;
}

/** Today's values: what a Composition without input gets. */
export function defaultClusterSettings(): ClusterSettings {
  return {
    images: { hydration: HYDRATION_IMAGE, resolver: RESOLVER_IMAGE, publisher: PUBLISHER_IMAGE, pullSecrets: [] },
    install: { pip: false, script: 'Image' },
    network: {},
    jobs: { ttlSecondsAfterFinished: JOB_TTL_SECONDS, backoffLimit: JOB_BACKOFF_LIMIT },
    storage: { accessMode: 'ReadWriteMany' },
  };
}

function checkKind(input: { apiVersion: string; kind: string }, kind: string): void {
  if (input.apiVersion !== SETTINGS_API_VERSION) {
    throw new InputError('input.apiVersion', `must be ${SETTINGS_API_VERSION} (got ${describe(input.apiVersion)})`);
  }
  if (input.kind !== kind) throw new InputError('input.kind', `must be ${kind} (got ${describe(input.kind)})`);
}

/** Whether a step carries no input at all (Crossplane sends none, or an empty struct). */
function absent(input: unknown): boolean {
  return input === undefined || input === null || (isObject(input) && Object.keys(input).length === 0);
}

/** The hydration function's input, parsed; no input is today's settings. */
export function parseHydrationSettings(input: unknown): HydrationSettings {
  if (absent(input)) return { workloadNamespace: 'Shared', base: {}, clusters: [] };
  checkKind(parseKind(input, 'input'), SETTINGS_KIND.hydration);
  const parsed = parseHydrationInput(input, 'input');
  const base: Groups = {};
  overlay(base, { images: parsed.images, install: parsed.install, network: parsed.network, jobs: parsed.jobs, storage: parsed.storage });
  return {
    workloadNamespace: parsed.workloadNamespace ?? 'Shared',
    base,
    clusters: (parsed.clusters ?? []).map(({ clusterSelector, ...patch }) => ({ selector: clusterSelector, patch })),
  };
}

/** The replica function's input, parsed; no input is today's settings. */
export function parseReplicaSettings(input: unknown): ReplicaSettings {
  if (absent(input)) return { workloadNamespace: 'Shared' };
  checkKind(parseKind(input, 'input'), SETTINGS_KIND.replica);
  const parsed = parseReplicaInput(input, 'input');
  return { workloadNamespace: parsed.workloadNamespace ?? 'Shared' };
}

/**
 * A function that takes no settings (compose-model-cache): any input is
 * refused rather than ignored, since settings put on the wrong step would
 * otherwise be silently without effect (an air-gapped platform's mirror
 * among them).
 */
export function refuseSettings(input: unknown, fn: string): void {
  if (absent(input)) return;
  const kind = isObject(input) && typeof input['kind'] === 'string' ? ` (got ${describe(input['kind'])})` : '';
  throw new InputError(
    'input',
    `must be absent: ${fn} takes no settings${kind}; ${SETTINGS_KIND.hydration} go in the ModelCacheHydration Composition's step, ${SETTINGS_KIND.replica} in the ModelReplica Composition's`,
  );
}

/** Lay a group's set fields over the defaults' (a list or a map replaces, never merges: what you write is what runs). */
function overlay(target: object, patch: object | undefined): void {
  if (!patch) return;
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
}

/**
 * The settings of one cluster: the defaults, then the input's top level, then
 * each entry of `clusters` whose selector matches the InferenceCluster's
 * labels, in order (a later entry wins a field both set).
 */
export function settingsFor(settings: HydrationSettings, clusterLabels: Record<string, string>): ClusterSettings {
  const out = defaultClusterSettings();
  const patches = [settings.base, ...settings.clusters.filter((c) => matchesSelector(clusterLabels, c.selector)).map((c) => c.patch)];
  // An image of the platform's own is a plain Python image unless the settings say otherwise: the
  // script goes inline and pip installs huggingface_hub, as before the Modelplane image existed.
  // Asking for pip (install.pip true, or an index) without naming an image asks for that same path,
  // on the stock Python image: never a setting silently ignored by an image that needs no pip.
  const ownImage = patches.some((patch) => patch.images?.hydration !== undefined);
  const wantsPip = patches.some((patch) => patch.install?.pip === true || patch.install?.indexUrl !== undefined);
  if (ownImage || wantsPip) out.install = { pip: true, script: 'Inline' };
  if (!ownImage && wantsPip) out.images.hydration = STOCK_PYTHON_IMAGE;
  for (const patch of patches) {
    overlay(out.images, patch.images);
    overlay(out.install, patch.install);
    overlay(out.network, patch.network);
    overlay(out.jobs, patch.jobs);
    overlay(out.storage, patch.storage);
  }
  if (out.network.caBundle)
    out.network.caBundle = { configMap: out.network.caBundle.configMap, key: out.network.caBundle.key ?? DEFAULT_CA_KEY };
  return out;
}
