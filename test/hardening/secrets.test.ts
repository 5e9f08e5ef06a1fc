// Secret hygiene: with a token in the auth Secret, the token, raw or base64,
// appears in no response field except the workload Secret's `data`
// (compose-model-cache-hydration's `auth` Object), in no event or condition,
// and in no log line at any level (the servers run with --debug). Every
// function, every lifecycle stage where a token exists, Fatal paths included.
// A second value in the same Secret, under a key nobody asked for, appears
// nowhere at all; nor does the Secret's kubectl last-applied annotation,
// which holds both in clear.

import { describe, expect, it } from 'vitest';
import { composedManifest, secretForms, type JsonObject } from '#lib';
import { FUNCTION_NAMES, functionClient, parseLine, type FunctionName, type TestRequest, type TestResponse } from '#testing';
import { legacyObjects, seedsFor } from './support/seeds.js';
import { serveEveryFunction } from './support/servers.js';

const TOKEN = 'hf_HardeningTokenValue_5Jq9xWz2';
const TOKEN_B64 = Buffer.from(TOKEN).toString('base64');
const OTHER = 'another-secret-nobody-asked-for';
const OTHER_B64 = Buffer.from(OTHER).toString('base64');
/** The placeholder token of the examples, replaced everywhere by ours. */
const EXAMPLE_TOKEN_B64 = 'aGYtdG9rZW4tdmFsdWU=';
/** The token in every form a leak could take (raw, base64 at any alignment, URL-safe, URL-encoded, hex), and the other value. */
const FORBIDDEN = [...secretForms(TOKEN_B64), OTHER, OTHER_B64];

/** How a pod, a tool or a person could print the token into what the cluster reports. */
const PRINTED: [how: string, text: string][] = [
  ['raw, in a Bearer header', `401 Unauthorized for Bearer ${TOKEN}`],
  ['base64, as the Secret holds it', `token ${TOKEN_B64} refused`],
  ['base64 without padding, URL-safe', `token ${Buffer.from(TOKEN).toString('base64url')} refused`],
  ['inside a Basic header', `Authorization: Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`],
  ['URL-encoded in a query', `GET https://hf.co/api?token=${encodeURIComponent(`${TOKEN}&`)} 403`],
  ['hex', `key ${Buffer.from(TOKEN).toString('hex')}`],
];

/** The observed hydration Job of a request, as provider-kubernetes reports it. */
function observedJob(req: TestRequest): JsonObject {
  return ((req.observed!.resources!['hydrate']!.resource['status'] as JsonObject)['atProvider'] as JsonObject)['manifest'] as JsonObject;
}

const { servers, clients } = serveEveryFunction(functionClient);

/** The request with our token in place of the examples', and a second value beside it in every token Secret. */
function withToken(req: TestRequest): TestRequest {
  const text = JSON.stringify(req).replaceAll(EXAMPLE_TOKEN_B64, TOKEN_B64);
  const out = JSON.parse(text) as TestRequest;
  for (const set of Object.values(out.requiredResources ?? {})) {
    for (const item of set.items) {
      if (item.resource['kind'] !== 'Secret') continue;
      (item.resource['data'] as JsonObject)['OTHER'] = OTHER_B64;
      // As a real Crossplane sends it (bench/captured/): a Secret made with `kubectl apply` carries itself,
      // stringData in clear, in its last-applied annotation, and Crossplane forwards metadata whole.
      const metadata = (item.resource['metadata'] ??= {}) as JsonObject;
      const applied = { apiVersion: 'v1', kind: 'Secret', metadata: { name: metadata['name'] }, stringData: { HF_TOKEN: TOKEN, OTHER } };
      metadata['annotations'] = {
        ...(metadata['annotations'] as JsonObject | undefined),
        'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n`,
      };
    }
  }
  return out;
}

function tokenSecret(data: JsonObject = { HF_TOKEN: TOKEN_B64, OTHER: OTHER_B64 }): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace: 'ml-team' }, type: 'Opaque', data };
}

async function seed(name: FunctionName, stage: string): Promise<TestRequest> {
  const found = (await seedsFor(name)).find((s) => s.name === stage);
  if (!found) throw new Error(`no seed ${stage} for ${name}`);
  return withToken(found.request);
}

const xrSpec = (req: TestRequest): JsonObject => req.observed!.composite!.resource['spec'] as JsonObject;

/**
 * Where the token may be: the `data` of the workload Secret the hydration
 * composes (key `auth`), and nowhere else. Returns the response without it,
 * and what it held.
 */
function withoutWorkloadSecretData(rsp: TestResponse): { rest: TestResponse; data: JsonObject | undefined } {
  const rest = structuredClone(rsp);
  const auth = rest.desired?.resources['auth']?.resource;
  const manifest = composedManifest(auth);
  if (manifest?.['kind'] !== 'Secret') return { rest, data: undefined };
  const data = manifest['data'] as JsonObject | undefined;
  delete manifest['data'];
  return { rest, data };
}

interface Case {
  name: string;
  request: () => Promise<TestRequest>;
  /** The workload Secret carries the token (and only it). */
  workloadSecret: boolean;
  fatal?: boolean;
}

const HYDRATION = 'compose-model-cache-hydration';
const CACHE = 'compose-model-cache';
const REPLICA = 'compose-model-replica';

const CASES: Record<FunctionName, Case[]> = {
  [HYDRATION]: [
    { name: 'first compose: the Secret and the Job', request: () => seed(HYDRATION, 'huggingface-first-compose'), workloadSecret: true },
    {
      name: 'hydrating: the Secret observed with the token',
      request: () => seed(HYDRATION, 'huggingface-hydrating'),
      workloadSecret: true,
    },
    { name: 'failed', request: () => seed(HYDRATION, 'huggingface-failed'), workloadSecret: true },
    { name: 'downloading: the Job reports progress', request: () => seed(HYDRATION, 'huggingface-progress'), workloadSecret: true },
    {
      name: 'sizing: the sizing Job reads the listing with the token',
      request: () => seed(HYDRATION, 'huggingface-sizing'),
      workloadSecret: true,
    },
    {
      name: 'a failed download whose report quotes the token (a pod wrote it: the function cuts it out)',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-verification-failed');
        const job = req.observed!.resources!['hydrate']!.resource;
        const annotations = (
          ((job['status'] as JsonObject)['atProvider'] as JsonObject)['manifest'] as { metadata: { annotations: JsonObject } }
        ).metadata.annotations;
        annotations['modelplane.ai/progress'] = JSON.stringify({ state: 'Failed', message: `401 Unauthorized for Bearer ${TOKEN}` });
        return req;
      },
      workloadSecret: true,
    },
    ...PRINTED.map(([how, text]): Case => ({
      name: `a failed download whose report quotes the token ${how}`,
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-verification-failed');
        const metadata = observedJob(req)['metadata'] as { annotations: JsonObject };
        metadata.annotations['modelplane.ai/progress'] = JSON.stringify({ state: 'Failed', message: text });
        return req;
      },
      workloadSecret: true,
    })),
    ...PRINTED.map(([how, text]): Case => ({
      name: `a failed Job whose condition quotes the token ${how}`,
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-failed');
        const conditions = (observedJob(req)['status'] as { conditions: JsonObject[] }).conditions;
        for (const condition of conditions) if (condition['type'] === 'Failed') condition['message'] = text;
        return req;
      },
      workloadSecret: true,
    })),
    ...PRINTED.map(([how, text]): Case => ({
      name: `the spec names no token any more, and the Job that ran with it reports it ${how}`,
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-failed');
        delete xrSpec(req)['authSecret'];
        delete req.requiredResources!['auth-secret'];
        const conditions = (observedJob(req)['status'] as { conditions: JsonObject[] }).conditions;
        for (const condition of conditions) if (condition['type'] === 'Failed') condition['message'] = text;
        return req;
      },
      workloadSecret: false,
    })),
    {
      name: 'ready: the Secret handed to its finished Job, emptied',
      request: () => seed(HYDRATION, 'huggingface-ready'),
      workloadSecret: false,
    },
    {
      name: 'ready, the cluster shows the Secret owned by the Job: dropped',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-ready');
        // Observed as handed over: no Delete policy, no data asked for (the cluster's copy, as observed, still has it).
        const auth = req.observed!.resources!['auth']!.resource;
        (auth['spec'] as JsonObject)['managementPolicies'] = ['Observe', 'Create', 'Update', 'LateInitialize'];
        delete (((auth['spec'] as JsonObject)['forProvider'] as JsonObject)['manifest'] as JsonObject)['data'];
        const manifest = ((auth['status'] as JsonObject)['atProvider'] as JsonObject)['manifest'] as JsonObject;
        const job = observedJob(req)['metadata'] as JsonObject;
        (manifest['metadata'] as JsonObject)['ownerReferences'] = [
          { apiVersion: 'batch/v1', kind: 'Job', name: job['name'] as string, uid: job['uid'] as string },
        ];
        return req;
      },
      workloadSecret: false,
    },
    {
      name: 'hold, cluster gone: the observed Secret kept as it is',
      request: () => seed(HYDRATION, 'huggingface-hydrating-cluster-gone'),
      workloadSecret: true,
    },
    {
      name: 'hold, cluster not provisioned',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-hydrating');
        delete (req.requiredResources!['cluster']!.items[0]!.resource['status'] as JsonObject)['providerConfigRef'];
        return req;
      },
      workloadSecret: true,
    },
    {
      name: 'hold, no ReadWriteMany class',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-hydrating');
        delete (req.requiredResources!['cluster']!.items[0]!.resource['status'] as JsonObject)['cache'];
        return req;
      },
      workloadSecret: true,
    },
    {
      name: 'the key asked for is missing: the other value goes nowhere',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-first-compose');
        req.requiredResources!['auth-secret'] = { items: [{ resource: tokenSecret({ OTHER: OTHER_B64, ALSO: TOKEN_B64 }) }] };
        return req;
      },
      workloadSecret: false,
    },
    {
      name: 'a key of the user’s choosing',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-first-compose');
        (xrSpec(req)['authSecret'] as JsonObject)['key'] = 'MY_TOKEN';
        req.requiredResources!['auth-secret'] = { items: [{ resource: tokenSecret({ MY_TOKEN: TOKEN_B64, HF_TOKEN: OTHER_B64 }) }] };
        return req;
      },
      workloadSecret: true,
    },
    {
      name: 'Fatal: a bad spec with the token present',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-hydrating');
        (xrSpec(req)['huggingFace'] as JsonObject)['sizeGiB'] = -1;
        return req;
      },
      workloadSecret: false,
      fatal: true,
    },
    {
      name: 'Fatal: a Secret in another namespace',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-first-compose');
        (xrSpec(req)['authSecret'] as JsonObject)['namespace'] = 'other-team';
        return req;
      },
      workloadSecret: false,
      fatal: true,
    },
    {
      name: 'the Secret sent where the cluster should be',
      request: async () => {
        const req = await seed(HYDRATION, 'huggingface-first-compose');
        req.requiredResources!['cluster'] = { items: [{ resource: tokenSecret() }] };
        return req;
      },
      workloadSecret: false,
    },
  ],
  [CACHE]: [
    {
      name: 'upgrade: the single-function token Secret observed, re-desired without its data',
      request: () => seed(CACHE, 'upgrade-legacy-with-delete'),
      workloadSecret: false,
    },
    { name: 'upgrade: handed over', request: () => seed(CACHE, 'upgrade-legacy-without-delete'), workloadSecret: false },
    {
      name: 'upgrade held: the cluster no longer provisioned',
      request: async () => {
        const req = await seed(CACHE, 'upgrade-legacy-with-delete');
        delete (req.requiredResources!['clusters']!.items[0]!.resource['status'] as JsonObject)['providerConfigRef'];
        return req;
      },
      workloadSecret: false,
    },
    {
      name: 'Fatal: a bad spec while upgrading',
      request: async () => {
        const req = await seed(CACHE, 'upgrade-legacy-with-delete');
        xrSpec(req)['source'] = 'S3';
        return req;
      },
      workloadSecret: false,
      fatal: true,
    },
    {
      name: 'a Secret among the clusters and the replicas',
      request: async () => {
        const req = await seed(CACHE, 'ready');
        req.requiredResources!['clusters']!.items.push({ resource: tokenSecret() });
        req.requiredResources!['replicas']!.items.push({ resource: tokenSecret() });
        return req;
      },
      workloadSecret: false,
    },
  ],
  [REPLICA]: [
    {
      name: 'a Secret sent as the cluster',
      request: async () => {
        const req = await seed(REPLICA, 'cache-ready');
        req.requiredResources!['cluster'] = { items: [{ resource: tokenSecret() }] };
        return req;
      },
      workloadSecret: false,
    },
    {
      name: 'a Secret sent as the cache, while serving',
      request: async () => {
        const req = await seed(REPLICA, 'cache-ready-serving');
        req.requiredResources!['cache'] = { items: [{ resource: tokenSecret() }] };
        return req;
      },
      workloadSecret: false,
    },
    {
      name: 'Fatal: a bad spec with a Secret in a requirement',
      request: async () => {
        const req = await seed(REPLICA, 'cache-ready');
        xrSpec(req)['engines'] = 'none';
        req.requiredResources!['cache'] = { items: [{ resource: tokenSecret() }] };
        return req;
      },
      workloadSecret: false,
      fatal: true,
    },
  ],
};

describe.each(FUNCTION_NAMES)('%s', (name) => {
  it.each(CASES[name])('$name', async ({ request, workloadSecret, fatal }) => {
    const req = await request();
    // The request really carries the token, or the test proves nothing.
    expect(JSON.stringify(req)).toContain(TOKEN_B64);
    const rsp = await clients.get(name)!.run(req);
    expect(rsp.results.some((r) => r.severity === 'SEVERITY_FATAL')).toBe(fatal === true);

    const { rest, data } = withoutWorkloadSecretData(rsp);
    const everywhereElse = JSON.stringify(rest);
    for (const secret of FORBIDDEN) expect(everywhereElse).not.toContain(secret);
    if (workloadSecret) {
      // Verbatim, and only the key asked for: the other value never leaves the control plane.
      expect(Object.values(data ?? {})).toEqual([TOKEN_B64]);
    } else {
      expect(data).toBeUndefined();
    }
  });
});

describe('the logs', () => {
  // Runs after every call above (a file's tests run in order).
  it('hold no secret in any line, at any level (the servers ran with --debug)', async () => {
    const logs: string[] = [];
    for (const server of servers.values()) {
      // Stopped, so every line the server wrote has arrived.
      await server.stop();
      logs.push(...server.lines, server.stderr());
    }
    // Only worth something if the servers logged at debug level, about these very calls.
    expect(logs.some((line) => parseLine(line)?.['level'] === 'debug')).toBe(true);
    expect(logs.filter((line) => parseLine(line)?.['msg'] === 'RunFunction').length).toBeGreaterThanOrEqual(20);
    for (const secret of FORBIDDEN) expect(logs.filter((line) => line.includes(secret))).toEqual([]);
  });
});

describe('the fixtures', () => {
  it('the single-function layout really holds the token it must not copy', () => {
    const auth = legacyObjects('cluster-a')['auth-cluster-a']!.resource;
    expect(JSON.stringify(auth)).toContain(EXAMPLE_TOKEN_B64);
  });
});
