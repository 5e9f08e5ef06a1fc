// The platform team's settings (issue 15): the function step's input, what
// each group changes in what is composed, per-cluster overrides, the per-team
// workload namespace, and a Fatal naming the field for every bad setting.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NAMESPACE_POLICIES, SETTINGS_API_VERSION, WORKLOAD_NAMESPACE_ENV, childName, type JsonObject } from '#lib';
import { compositeStatus, desiredResources, inferenceCluster, manifestOf } from '#testing';
import { CLUSTER_A, HF, HF_AUTH, NAMESPACE, hydration, observe, resolved, run, tokenSecret, type World } from './support.js';

const settings = (fields: JsonObject): JsonObject => ({ apiVersion: SETTINGS_API_VERSION, kind: 'HydrationSettings', ...fields });

async function compose(world: World, input?: JsonObject) {
  const req = resolved(world);
  if (input) req.input = input;
  return run(req);
}

function fatals(rsp: Awaited<ReturnType<typeof compose>>): string[] {
  return rsp.results.filter((r) => r.severity === 'SEVERITY_FATAL').map((r) => r.message);
}

interface Pod {
  nodeSelector?: JsonObject;
  tolerations?: JsonObject[];
  priorityClassName?: string;
  imagePullSecrets?: { name: string }[];
  volumes: JsonObject[];
  containers: {
    image: string;
    command: string[];
    env: { name: string; value?: string }[];
    volumeMounts: JsonObject[];
    resources?: JsonObject;
  }[];
  initContainers?: Pod['containers'];
}
interface Job {
  metadata: { namespace: string };
  spec: { backoffLimit: number; ttlSecondsAfterFinished: number; template: { spec: Pod } };
}

function hydrateJob(rsp: Awaited<ReturnType<typeof compose>>): Job {
  return manifestOf(desiredResources(rsp)['hydrate']) as unknown as Job;
}

const OCI_REF = 'registry.example.com/models/qwen:v1';
const OCI: JsonObject = { source: 'OCI', oci: { ref: OCI_REF, imagePullSecrets: [{ name: 'regcred' }] } };

describe('no input, or an input that sets nothing', () => {
  it('composes exactly what no input composes', async () => {
    for (const spec of [HF, HF_AUTH, OCI, { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'weights' } }]) {
      const world: World = { xr: hydration(spec), ...(spec === HF_AUTH ? { secret: tokenSecret() } : {}) };
      const bare = await compose(world);
      for (const input of [{}, settings({}), settings({ workloadNamespace: 'Shared', clusters: [] })]) {
        const rsp = await compose(world, input);
        expect(rsp.desired, JSON.stringify(input)).toEqual(bare.desired);
        expect(rsp.results).toEqual(bare.results);
      }
    }
  });
});

describe('each group of settings reaches the Jobs', () => {
  it('images, pull secrets, pip and its index, the network, the CA bundle, scheduling, TTL and backoff', async () => {
    const rsp = await compose(
      { xr: hydration(HF) },
      settings({
        images: { hydration: 'registry.corp.example/ml/hf-hub:1.33', pullSecrets: ['corp-registry'] },
        install: { pip: true, indexUrl: 'https://pypi.corp.example/simple' },
        network: {
          hfEndpoint: 'https://hf-mirror.corp.example',
          httpsProxy: 'http://proxy.corp.example:3128',
          noProxy: '10.0.0.0/8,.svc,.cluster.local',
          caBundle: { configMap: 'corp-ca' },
        },
        jobs: {
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: 2 } },
          nodeSelector: { 'node-role.corp.example/staging': 'true' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'staging', effect: 'NoSchedule' }],
          priorityClassName: 'staging-low',
          ttlSecondsAfterFinished: 600,
          backoffLimit: 5,
        },
        storage: { accessMode: 'ReadWriteOnce' },
      }),
    );
    expect(fatals(rsp)).toEqual([]);
    const job = hydrateJob(rsp);
    expect(job.spec.backoffLimit).toBe(5);
    expect(job.spec.ttlSecondsAfterFinished).toBe(600);
    const pod = job.spec.template.spec;
    expect(pod.nodeSelector).toEqual({ 'node-role.corp.example/staging': 'true' });
    expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'staging', effect: 'NoSchedule' }]);
    expect(pod.priorityClassName).toBe('staging-low');
    expect(pod.imagePullSecrets).toEqual([{ name: 'corp-registry' }]);
    expect(pod.volumes).toContainEqual({ name: 'ca-bundle', configMap: { name: 'corp-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    const [container] = pod.containers;
    expect(container!.image).toBe('registry.corp.example/ml/hf-hub:1.33');
    expect(container!.resources).toEqual({ requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2' } });
    expect(container!.volumeMounts).toContainEqual({ name: 'ca-bundle', mountPath: '/etc/modelplane/ca', readOnly: true });
    const env = Object.fromEntries(container!.env.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      HF_ENDPOINT: 'https://hf-mirror.corp.example',
      HTTPS_PROXY: 'http://proxy.corp.example:3128',
      https_proxy: 'http://proxy.corp.example:3128',
      // The download's progress reports to the API server bypass the proxy.
      NO_PROXY: '10.0.0.0/8,.svc,.cluster.local,$(KUBERNETES_SERVICE_HOST)',
      SSL_CERT_FILE: '/etc/modelplane/ca/ca.crt',
      REQUESTS_CA_BUNDLE: '/etc/modelplane/ca/ca.crt',
      PIP_CERT: '/etc/modelplane/ca/ca.crt',
    });
    expect(env).not.toHaveProperty('HTTP_PROXY');
    expect(container!.command[2]).toContain("--index-url 'https://pypi.corp.example/simple'");
    const pvc = manifestOf(desiredResources(rsp)['pvc']) as { spec: { accessModes: string[] } };
    expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it('a claim already composed keeps its access modes (they are immutable), new claims take the setting', async () => {
    const first = await compose({ xr: hydration(HF) });
    const observed = { pvc: observe(desiredResources(first)['pvc']!) };
    const rsp = await compose({ xr: hydration(HF), observed }, settings({ storage: { accessMode: 'ReadWriteOncePod' } }));
    expect((manifestOf(desiredResources(rsp)['pvc']) as { spec: { accessModes: string[] } }).spec.accessModes).toEqual(['ReadWriteMany']);
  });

  it('the OCI resolver: its images, the proxies and CA for crane only, scheduling, and both sets of pull secrets', async () => {
    const rsp = await compose(
      { xr: hydration(OCI), cluster: inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' }) },
      settings({
        images: {
          resolver: 'registry.corp.example/tools/crane:v0.20.2-debug',
          publisher: 'registry.corp.example/tools/kubectl:v1.33.4',
          pullSecrets: ['corp-registry'],
        },
        network: { httpsProxy: 'http://proxy.corp.example:3128', caBundle: { configMap: 'corp-ca', key: 'bundle.pem' } },
        jobs: { priorityClassName: 'staging-low', backoffLimit: 1 },
      }),
    );
    const job = manifestOf(desiredResources(rsp)['resolve']) as unknown as Job;
    const pod = job.spec.template.spec;
    expect(job.spec.backoffLimit).toBe(1);
    expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'corp-registry' }]);
    expect(pod.priorityClassName).toBe('staging-low');
    const byName = Object.fromEntries(
      [...(pod.initContainers ?? []), ...pod.containers].map((c) => [(c as unknown as { name: string }).name, c]),
    );
    expect(byName['resolve']!.image).toBe('registry.corp.example/tools/crane:v0.20.2-debug');
    expect(byName['publish']!.image).toBe('registry.corp.example/tools/kubectl:v1.33.4');
    expect(byName['credentials']!.image).toBe('registry.corp.example/tools/kubectl:v1.33.4');
    expect(byName['resolve']!.env.map((e) => e.name)).toEqual(
      expect.arrayContaining(['HTTPS_PROXY', 'https_proxy', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE']),
    );
    // kubectl talks to the cluster's own API server: no proxy for it.
    expect(byName['publish']!.env.map((e) => e.name)).not.toContain('HTTPS_PROXY');
    expect(pod.volumes).toContainEqual({
      name: 'ca-bundle',
      configMap: { name: 'corp-ca', items: [{ key: 'bundle.pem', path: 'ca.crt' }] },
    });
  });
});

describe('image volumes, declared by the platform team', () => {
  const IMAGE_MANIFEST = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json' },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip' }],
  });
  // The resolver writes the sha256 of the very manifest it read (the function checks it).
  const DIGEST = `sha256:${createHash('sha256').update(IMAGE_MANIFEST).digest('hex')}`;
  async function resolvedImage(cluster: JsonObject, input?: JsonObject) {
    const first = await compose({ xr: hydration(OCI), cluster }, input);
    const result = observe(desiredResources(first)['resolve-result']!, {
      fields: { data: { ref: OCI_REF, digest: DIGEST, manifest: IMAGE_MANIFEST } },
    });
    return compose({ xr: hydration(OCI), cluster, observed: { 'resolve-result': result } }, input);
  }
  const silent = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', labels: { 'modelplane.ai/runtime': 'containerd-2.2' } });

  it.each([
    ['the cluster reports nothing, the settings say nothing', silent, undefined, 'Failed'],
    ['the cluster reports nothing, the settings declare it', silent, settings({ storage: { imageVolumes: true } }), 'Ready'],
    [
      'declared for clusters with a label',
      silent,
      settings({
        clusters: [{ clusterSelector: { matchLabels: { 'modelplane.ai/runtime': 'containerd-2.2' } }, storage: { imageVolumes: true } }],
      }),
      'Ready',
    ],
    [
      'declared for other clusters only',
      silent,
      settings({ clusters: [{ clusterSelector: { matchLabels: { 'modelplane.ai/runtime': 'cri-o' } }, storage: { imageVolumes: true } }] }),
      'Failed',
    ],
    [
      'the cluster reports it, the settings deny it there',
      inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', imageVolumes: true }),
      settings({ storage: { imageVolumes: false } }),
      'Failed',
    ],
  ])('%s: %s', async (_what, cluster, input, phase) => {
    const rsp = await resolvedImage(cluster, input);
    expect(compositeStatus(rsp)['phase']).toBe(phase);
  });
});

describe('per-cluster overrides', () => {
  it('apply in order to the clusters they select, over the top level', async () => {
    const input = settings({
      jobs: { priorityClassName: 'fleet-default' },
      clusters: [
        {
          clusterSelector: { matchLabels: { region: 'eu' } },
          network: { httpsProxy: 'http://proxy.eu.corp.example:3128' },
          jobs: { priorityClassName: 'eu' },
        },
        { clusterSelector: { matchExpressions: [{ key: 'gpu', operator: 'In', values: ['h100'] }] }, jobs: { priorityClassName: 'h100' } },
      ],
    });
    const cases: [Record<string, string>, string, string | undefined][] = [
      [{}, 'fleet-default', undefined],
      [{ region: 'eu' }, 'eu', 'http://proxy.eu.corp.example:3128'],
      [{ region: 'eu', gpu: 'h100' }, 'h100', 'http://proxy.eu.corp.example:3128'],
      [{ region: 'us', gpu: 'h100' }, 'h100', undefined],
    ];
    for (const [labels, priority, proxy] of cases) {
      const cluster = inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc', storageClassName: 'modelplane-rwx', labels });
      const pod = hydrateJob(await compose({ xr: hydration(HF), cluster }, input)).spec.template.spec;
      expect(pod.priorityClassName, JSON.stringify(labels)).toBe(priority);
      expect(pod.containers[0]!.env.find((e) => e.name === 'HTTPS_PROXY')?.value, JSON.stringify(labels)).toBe(proxy);
    }
  });
});

describe('a per-team workload namespace', () => {
  const TEAM_NS = childName('mp', NAMESPACE);
  const perTeam = settings({ workloadNamespace: 'PerTeam' });

  it('is childName("mp", <namespace>), a DNS label however long the team namespace', () => {
    expect(TEAM_NS).toBe('mp-ml-team-51733');
    expect(childName('mp', 'a'.repeat(63))).toMatch(/^[a-z0-9-]{1,63}$/);
  });

  it('holds everything the cache stages, and is created without a Delete policy', async () => {
    const rsp = await compose({ xr: hydration(HF_AUTH), secret: tokenSecret() }, perTeam);
    const desired = desiredResources(rsp);
    expect(Object.keys(desired)[0]).toBe('namespace');
    expect(manifestOf(desired['namespace'])).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: TEAM_NS, labels: { 'modelplane.ai/namespace': NAMESPACE } },
    });
    const policies = (desired['namespace'] as { spec: { managementPolicies: string[] } }).spec.managementPolicies;
    expect(policies).toEqual([...NAMESPACE_POLICIES]);
    expect(policies).not.toContain('Delete');
    expect(policies).not.toContain('*');
    for (const key of ['pvc', 'auth', 'hydrate']) {
      expect((manifestOf(desired[key]) as { metadata: { namespace: string } }).metadata.namespace, key).toBe(TEAM_NS);
    }
  });

  it('the OCI resolver, its access and its result, and a claim source, live there too', async () => {
    const oci = desiredResources(
      await compose({ xr: hydration(OCI), cluster: inferenceCluster('cluster-a', { providerConfig: 'cluster-a-pc' }) }, perTeam),
    );
    for (const key of ['resolve', 'resolve-account', 'resolve-role', 'resolve-binding', 'resolve-result']) {
      expect((manifestOf(oci[key]) as { metadata: { namespace: string } }).metadata.namespace, key).toBe(TEAM_NS);
    }
    const binding = manifestOf(oci['resolve-binding']) as { subjects: { namespace: string }[] };
    expect(binding.subjects[0]!.namespace).toBe(TEAM_NS);
    const claim = desiredResources(
      await compose({ xr: hydration({ source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'weights' } }) }, perTeam),
    );
    expect((manifestOf(claim['claim']) as { metadata: { namespace: string } }).metadata.namespace).toBe(TEAM_NS);
  });

  it('a published mount names it, so the replica follows', async () => {
    const claimSpec = { source: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'weights' } };
    const first = await compose({ xr: hydration(claimSpec) }, perTeam);
    const observed = {
      namespace: observe(desiredResources(first)['namespace']!, { ready: true }),
      claim: observe(desiredResources(first)['claim']!, { status: { phase: 'Bound', accessModes: ['ReadWriteMany'] }, ready: true }),
    };
    const rsp = await compose({ xr: hydration(claimSpec), observed }, perTeam);
    const mount = compositeStatus(rsp)['mount'] as { env: { name: string; value: string }[] };
    expect(mount.env).toContainEqual({ name: WORKLOAD_NAMESPACE_ENV, value: TEAM_NS });
  });

  it('a cache staged in default before the switch stays there: nothing is deleted, moved or staged twice', async () => {
    // Ready in default, as before the switch.
    const first = await compose({ xr: hydration(HF) });
    const observed = { pvc: observe(desiredResources(first)['pvc']!, { status: { phase: 'Bound' }, ready: true }) };
    const before = await compose({ xr: hydration(HF), observed });
    const rsp = await compose({ xr: hydration(HF), observed }, perTeam);
    const desired = desiredResources(rsp);
    // The same PVC, in default, desired as before: provider-kubernetes neither deletes nor recreates it.
    expect(desired['pvc']).toEqual(desiredResources(before)['pvc']);
    expect(desired).not.toHaveProperty('namespace');
    for (const object of Object.values(desired)) {
      expect((manifestOf(object) as { metadata: { namespace?: string } }).metadata.namespace).toBe('default');
    }
    const warning = rsp.results.find((r) => r.severity === 'SEVERITY_WARNING');
    expect(warning?.message).toContain(`staged in namespace default before the workload namespace setting changed to ${TEAM_NS}`);
    expect(warning?.message).toContain('nothing is moved or deleted');
  });
});

describe('an air-gapped cluster: a preinstalled image, an internal mirror, a CA bundle', () => {
  const AIR_GAPPED = settings({
    images: {
      hydration: 'registry.corp.example/ml/hf-hub:1.33',
      resolver: 'registry.corp.example/tools/crane:v0.20.2-debug',
      publisher: 'registry.corp.example/tools/kubectl:v1.33.4',
      pullSecrets: ['corp-registry'],
    },
    install: { pip: false },
    network: { hfEndpoint: 'https://hf-mirror.corp.example', caBundle: { configMap: 'corp-ca' } },
  });
  const PUBLIC_HOSTS = /huggingface\.co|hf\.co|pypi\.org|pythonhosted\.org|docker\.io|gcr\.io|ghcr\.io|quay\.io|registry\.k8s\.io|python:3/;

  it('runs no pip, and no composed object names a public host', async () => {
    const hf = await compose({ xr: hydration(HF_AUTH), secret: tokenSecret() }, AIR_GAPPED);
    const job = hydrateJob(hf);
    expect(job.spec.template.spec.containers[0]!.command.join(' ')).not.toMatch(/\bpip\b/);
    const oci = await compose(
      { xr: hydration({ source: 'OCI', oci: { ref: 'registry.corp.example/models/qwen:v1', imagePullSecrets: [] } }), cluster: CLUSTER_A },
      AIR_GAPPED,
    );
    for (const rsp of [hf, oci]) {
      expect(fatals(rsp)).toEqual([]);
      const text = JSON.stringify(rsp.desired);
      expect(text).not.toMatch(PUBLIC_HOSTS);
      expect(text).toContain('registry.corp.example');
    }
    // The token stays where it was: in the Secret's data only, never in a setting-made field.
    const objects = desiredResources(hf);
    expect(JSON.stringify(objects['hydrate'])).not.toContain('aGYtdG9rZW4tdmFsdWU=');
  });
});

describe('a bad setting is Fatal, naming the field', () => {
  const cases: [string, JsonObject, string][] = [
    ['kind', { apiVersion: SETTINGS_API_VERSION, kind: 'Settings' }, 'input.kind must be HydrationSettings'],
    ['apiVersion', { apiVersion: 'fn.modelplane.ai/v1', kind: 'HydrationSettings' }, 'input.apiVersion must be fn.modelplane.ai/v1alpha1'],
    ['image', settings({ images: { hydration: 'Python 3.11' } }), 'input.images.hydration must be an image reference'],
    ['resolver image', settings({ images: { resolver: 'crane;rm -rf /' } }), 'input.images.resolver must be an image reference'],
    ['pull secret', settings({ images: { pullSecrets: ['Corp_Registry'] } }), 'input.images.pullSecrets[0] must be a DNS subdomain'],
    ['pip', settings({ install: { pip: 'no' } }), 'input.install.pip must be true or false'],
    [
      'index',
      settings({ install: { indexUrl: "https://pypi.corp.example/'$(id)'" } }),
      'input.install.indexUrl must be printable ASCII without spaces, quotes, "$", backquotes or backslashes',
    ],
    ['endpoint', settings({ network: { hfEndpoint: 'hf-mirror.corp.example' } }), 'input.network.hfEndpoint must be an http or https URL'],
    ['proxy', settings({ network: { httpsProxy: 'socks5://proxy:1080' } }), 'input.network.httpsProxy must be an http or https URL'],
    [
      'proxy password',
      settings({ network: { httpProxy: 'http://me:hunter2@proxy:3128' } }),
      'input.network.httpProxy must not carry credentials',
    ],
    ['no proxy', settings({ network: { noProxy: '.svc, .local' } }), 'input.network.noProxy must be host names'],
    ['CA name', settings({ network: { caBundle: { configMap: 'Corp CA' } } }), 'input.network.caBundle.configMap must be a DNS subdomain'],
    [
      'CA key',
      settings({ network: { caBundle: { configMap: 'corp-ca', key: '../etc/passwd' } } }),
      'input.network.caBundle.key must be a data key',
    ],
    [
      'quantity',
      settings({ jobs: { resources: { limits: { memory: 'lots' } } } }),
      'input.jobs.resources.limits.memory must be a quantity',
    ],
    [
      'toleration',
      settings({ jobs: { tolerations: [{ operator: 'Equal', value: 'x' }] } }),
      'input.jobs.tolerations[0].operator must be Exists',
    ],
    [
      'node selector',
      settings({ jobs: { nodeSelector: { 'bad key!': 'x' } } }),
      'input.jobs.nodeSelector.bad key! must be a qualified name',
    ],
    ['priority', settings({ jobs: { priorityClassName: 'High' } }), 'input.jobs.priorityClassName must be a DNS subdomain'],
    ['ttl', settings({ jobs: { ttlSecondsAfterFinished: 5 } }), 'input.jobs.ttlSecondsAfterFinished must be an integer from 60 to 86400'],
    ['backoff', settings({ jobs: { backoffLimit: 2.5 } }), 'input.jobs.backoffLimit must be an integer from 0 to 10'],
    [
      'access mode',
      settings({ storage: { accessMode: 'ReadOnlyMany' } }),
      'input.storage.accessMode must be one of ReadWriteMany, ReadWriteOnce, ReadWriteOncePod',
    ],
    ['namespace mode', settings({ workloadNamespace: 'mp-ml-team' }), 'input.workloadNamespace must be one of Shared, PerTeam'],
    [
      'override selector',
      settings({ clusters: [{ clusterSelector: {}, storage: { imageVolumes: true } }] }),
      'input.clusters[0].clusterSelector must select',
    ],
    [
      'override field',
      settings({ clusters: [{ clusterSelector: { matchLabels: { a: 'b' } }, images: { hydration: 'x y' } }] }),
      'input.clusters[0].images.hydration must be an image reference',
    ],
  ];
  it.each(cases)('%s', async (_what, input, message) => {
    const rsp = await compose({ xr: hydration(HF) }, input);
    const [fatal, ...more] = fatals(rsp);
    expect(more).toEqual([]);
    expect(fatal).toContain(message);
    expect(rsp.desired?.resources ?? {}).toEqual({});
  });

  it('never echoes a proxy password back', async () => {
    const rsp = await compose({ xr: hydration(HF) }, settings({ network: { httpsProxy: 'http://me:hunter2@proxy:3128' } }));
    expect(JSON.stringify(rsp)).not.toContain('hunter2');
  });
});
