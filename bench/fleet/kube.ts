// A small Kubernetes API client for the fleet benchmark: one keep-alive
// HTTPS agent per API server of the `make up` plane (its admin kubeconfig),
// JSON in and out, and a bounded number of calls in flight. A kubectl
// process per object costs ~100 ms of CPU each, which at a thousand
// simulated clusters is minutes of the machine the benchmark measures.

import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';

export interface KubeconfigParts {
  server: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

type Yaml = Record<string, unknown>;
const isRecord = (value: unknown): value is Yaml => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The server and credentials of a kubeconfig's first cluster and user (what up.sh writes: one of each, data inline). */
export function parseKubeconfig(text: string): KubeconfigParts {
  const doc: unknown = parseYaml(text);
  if (!isRecord(doc)) throw new Error('kubeconfig: not a YAML mapping');
  const first = (key: string, inner: string): Yaml => {
    const list = doc[key];
    const item: unknown = Array.isArray(list) ? list[0] : undefined;
    const value = isRecord(item) ? item[inner] : undefined;
    if (!isRecord(value)) throw new Error(`kubeconfig: no ${key}[0].${inner}`);
    return value;
  };
  const cluster = first('clusters', 'cluster');
  const user = first('users', 'user');
  const data = (from: Yaml, field: string): Buffer => {
    const value = from[field];
    if (typeof value !== 'string' || value === '') throw new Error(`kubeconfig: no ${field} (inline data only)`);
    return Buffer.from(value, 'base64');
  };
  const server = cluster['server'];
  if (typeof server !== 'string') throw new Error('kubeconfig: no clusters[0].cluster.server');
  return {
    server,
    ca: data(cluster, 'certificate-authority-data'),
    cert: data(user, 'client-certificate-data'),
    key: data(user, 'client-key-data'),
  };
}

export class KubeError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    body: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${body.slice(0, 400)}`);
  }
}

export type Json = Record<string, unknown>;

export interface Kube {
  readonly name: string;
  /** One call; the parsed JSON answer (or the raw text for text/plain, e.g. /metrics). */
  call(method: string, path: string, body?: unknown, contentType?: string, accept?: string): Promise<unknown>;
  text(path: string): Promise<string>;
  close(): void;
}

/** A client for one API server, from its kubeconfig file. */
export function kubeFrom(name: string, kubeconfigFile: string, maxInFlight = 16): Kube {
  const parts = parseKubeconfig(readFileSync(kubeconfigFile, 'utf8'));
  const base = new URL(parts.server);
  const agent = new Agent({ keepAlive: true, maxSockets: maxInFlight, ca: parts.ca, cert: parts.cert, key: parts.key });
  const raw = (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json, text/plain;q=0.9',
  ): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path,
          headers: {
            accept,
            ...(payload ? { 'content-type': contentType, 'content-length': payload.length } : {}),
          },
          timeout: 120_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  return {
    name,
    async call(method, path, body, contentType, accept) {
      // Every call here is idempotent (GET, apply, merge patch, DELETE): an overloaded API
      // server's 429 / 5xx (a 504 on a list, on a busy two-core machine) or a dropped
      // connection is tried again, 1 + 2 + 4 + 8 s apart, before it fails the run.
      for (let attempt = 0; ; attempt++) {
        let answer: { status: number; text: string } | undefined;
        let failure: unknown;
        try {
          answer = await raw(method, path, body, contentType, accept);
        } catch (error) {
          failure = error;
        }
        const transient = answer === undefined || answer.status === 429 || answer.status >= 500;
        if (transient && attempt < 4) {
          await sleep(1000 * 2 ** attempt);
          continue;
        }
        if (answer === undefined) throw failure instanceof Error ? failure : new Error(String(failure));
        if (answer.status < 200 || answer.status >= 300) throw new KubeError(answer.status, method, path, answer.text);
        return answer.text === '' ? {} : (JSON.parse(answer.text) as unknown);
      }
    },
    async text(path) {
      const { status, text } = await raw('GET', path);
      if (status !== 200) throw new KubeError(status, 'GET', path, text);
      return text;
    },
    close() {
      agent.destroy();
    },
  };
}

/** Run `fn` over `items`, at most `limit` at a time; the results in order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      if (index >= items.length) return;
      out[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** A resource's collection path: core (`v1`) or a group version; namespaced or cluster-wide. */
export function collectionPath(apiVersion: string, plural: string, namespace?: string): string {
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace === undefined ? `${root}/${plural}` : `${root}/namespaces/${namespace}/${plural}`;
}

/** Ask for metadata only: a list of a thousand Objects without their manifests and status. */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** Every item of a list, paged (`limit`) so a thousand-object list is not one giant answer. */
export async function listAll(
  kube: Kube,
  path: string,
  query: Record<string, string> = {},
  pageSize = 500,
  accept?: string,
): Promise<Json[]> {
  const items: Json[] = [];
  let token: string | undefined;
  do {
    const params = new URLSearchParams({ ...query, limit: String(pageSize), ...(token ? { continue: token } : {}) });
    const page = (await kube.call('GET', `${path}?${params.toString()}`, undefined, undefined, accept)) as {
      items?: Json[];
      metadata?: { continue?: string };
    };
    items.push(...(page.items ?? []));
    token = page.metadata?.continue || undefined;
  } while (token);
  return items;
}

/** Server-side apply of one object (field manager `modelplane-bench-fleet`, conflicts forced). */
export async function applyObject(kube: Kube, object: Json, plural: string): Promise<void> {
  const metadata = object['metadata'] as { name: string; namespace?: string };
  const path = `${collectionPath(String(object['apiVersion']), plural, metadata.namespace)}/${metadata.name}`;
  await kube.call('PATCH', `${path}?fieldManager=modelplane-bench-fleet&force=true`, object, 'application/apply-patch+yaml');
}

/** A merge patch of an object's status subresource, as its controller would write it. */
export async function patchStatus(kube: Kube, objectPath: string, status: unknown): Promise<void> {
  await kube.call('PATCH', `${objectPath}/status`, { status }, 'application/merge-patch+json');
}

/** Delete, ignoring NotFound. */
export async function deleteObject(kube: Kube, objectPath: string): Promise<void> {
  try {
    await kube.call('DELETE', objectPath, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
  } catch (error) {
    if (!(error instanceof KubeError && error.status === 404)) throw error;
  }
}
