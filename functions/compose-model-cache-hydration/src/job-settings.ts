// What the platform team's settings add to the two Jobs this function runs on
// a workload cluster (the HuggingFace download and the OCI resolver): the
// network (mirror, proxies, a CA bundle), the scheduling and the resources.
// Nothing here is a shell word: every value is an env value or an object
// field, so no setting can change what a script runs.

import type { V1Container, V1EnvVar, V1PodSpec, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { ClusterSettings } from '#lib';

/** Where the CA bundle is mounted in a Job's containers, and the one file in it. */
export const CA_DIR = '/etc/modelplane/ca';
export const CA_FILE = `${CA_DIR}/ca.crt`;
export const CA_VOLUME = 'ca-bundle';
/** The in-cluster API server's address, as the kubelet expands it in an env value. */
export const API_SERVER_HOST = '$(KUBERNETES_SERVICE_HOST)';

/**
 * The env that points a download at the mirror, through the proxies, trusting
 * the bundle. HF_ENDPOINT only for the HuggingFace download (it is what
 * huggingface_hub reads); the proxies and the CA for whatever talks to the
 * outside: Python (requests, httpx, pip) and Go (crane) read these names.
 */
export function networkEnv(settings: ClusterSettings, options: { huggingFace: boolean }): V1EnvVar[] {
  const { network } = settings;
  const env: V1EnvVar[] = [];
  if (options.huggingFace && network.hfEndpoint !== undefined) env.push({ name: 'HF_ENDPOINT', value: network.hfEndpoint });
  // The download reports its progress to the cluster's own API server, which a proxy must not see:
  // behind a proxy, that server's address (the kubelet expands the service variable) bypasses it.
  const proxied = network.httpsProxy !== undefined || network.httpProxy !== undefined;
  const noProxy =
    options.huggingFace && proxied ? [network.noProxy, API_SERVER_HOST].filter((v) => v !== undefined).join(',') : network.noProxy;
  // Both spellings: Go and curl read the upper case, some Python tools only the lower.
  for (const [name, value] of [
    ['HTTPS_PROXY', network.httpsProxy],
    ['HTTP_PROXY', network.httpProxy],
    ['NO_PROXY', noProxy],
  ] as const) {
    if (value === undefined) continue;
    env.push({ name, value }, { name: name.toLowerCase(), value });
  }
  if (network.caBundle) {
    env.push({ name: 'SSL_CERT_FILE', value: CA_FILE }, { name: 'REQUESTS_CA_BUNDLE', value: CA_FILE });
    if (options.huggingFace) env.push({ name: 'PIP_CERT', value: CA_FILE });
  }
  return env;
}

/** The CA bundle's volume (the ConfigMap's one key, as ca.crt), when there is one. */
export function caVolumes(settings: ClusterSettings): V1Volume[] {
  const bundle = settings.network.caBundle;
  if (!bundle) return [];
  // Not optional: a bundle that isn't there must hold the pod (its event names the ConfigMap), not run it untrusting.
  return [{ name: CA_VOLUME, configMap: { name: bundle.configMap, items: [{ key: bundle.key, path: 'ca.crt' }] } }];
}

export function caMounts(settings: ClusterSettings): V1VolumeMount[] {
  return settings.network.caBundle ? [{ name: CA_VOLUME, mountPath: CA_DIR, readOnly: true }] : [];
}

/** Scheduling and pull secrets on a Job's pod spec: only what is set, so defaults add nothing. */
export function applyPodSettings(spec: V1PodSpec, settings: ClusterSettings, pullSecrets: readonly string[] = []): void {
  const { jobs, images } = settings;
  if (jobs.nodeSelector && Object.keys(jobs.nodeSelector).length > 0) spec.nodeSelector = { ...jobs.nodeSelector };
  if (jobs.tolerations && jobs.tolerations.length > 0) spec.tolerations = structuredClone(jobs.tolerations);
  if (jobs.priorityClassName !== undefined) spec.priorityClassName = jobs.priorityClassName;
  const secrets = [...new Set([...pullSecrets, ...images.pullSecrets])];
  if (secrets.length > 0) spec.imagePullSecrets = secrets.map((name) => ({ name }));
}

/** The container resources, when set. */
export function containerResources(settings: ClusterSettings): Pick<V1Container, 'resources'> {
  const resources = settings.jobs.resources;
  if (!resources || (resources.requests === undefined && resources.limits === undefined)) return {};
  const out: NonNullable<V1Container['resources']> = {};
  if (resources.requests) out.requests = { ...resources.requests };
  if (resources.limits) out.limits = { ...resources.limits };
  return { resources: out };
}
