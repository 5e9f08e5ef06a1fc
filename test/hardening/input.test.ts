// The function input, hostile and mistyped, through gRPC against the built
// servers (run with --debug), issue 29:
// - a credential inside any URL-like setting (the top level and a per-cluster
//   override), whichever check refuses it (its scheme, a character, its
//   length, the user info itself, a query): one Fatal result naming the field
//   and what is wrong; the credential, raw or encoded, in no byte of the
//   answer and no log line;
// - a misspelled field at every level of the input CRDs: a Fatal result
//   naming its path and the field it most likely meant, nothing composed;
// - compose-model-cache, which takes no settings, refuses any input.

import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '#lib';
import {
  FUNCTION_NAMES,
  rawFunctionClient,
  requestBytes,
  responseFromBytes,
  type FunctionName,
  type TestRequest,
  type TestResponse,
} from '#testing';
import { fatalMessages } from './support/invariants.js';
import { seedsFor } from './support/seeds.js';
import { serveEveryFunction } from './support/servers.js';
import {
  INPUT_KIND,
  INPUT_SCHEMA,
  PLANTED_PASSWORD,
  URL_SETTINGS,
  credentialForms,
  fieldPath,
  fullInput,
  objectLevels,
  refusals,
  typo,
  type Path,
} from './support/settings-input.js';

const HYDRATION = 'compose-model-cache-hydration';
const REPLICA = 'compose-model-replica';
const CACHE = 'compose-model-cache';
/** A stage that composes (a Job, a claim, an engine): a setting let through would show in it. */
const SEED: Record<FunctionName, string> = { [HYDRATION]: 'huggingface-first-compose', [REPLICA]: 'cache-ready', [CACHE]: 'first-compose' };

const { servers, clients } = serveEveryFunction(rawFunctionClient);

async function request(name: FunctionName, input: JsonObject | undefined): Promise<TestRequest> {
  const seed = (await seedsFor(name)).find((s) => s.name === SEED[name]);
  if (!seed) throw new Error(`no seed ${SEED[name]} for ${name}`);
  const req = structuredClone(seed.request);
  if (input === undefined) delete req.input;
  else req.input = input;
  return req;
}

async function call(name: FunctionName, req: TestRequest): Promise<{ bytes: Buffer; rsp: TestResponse }> {
  const bytes = await clients.get(name)!.call(requestBytes(req));
  return { bytes, rsp: responseFromBytes(bytes) };
}

/** Set `value` at `path` inside `root`, making objects on the way. */
function setPath(root: JsonObject, path: Path, value: JsonValue): void {
  let node = root as Record<string | number, JsonValue>;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string | number, JsonValue>;
  }
  node[path.at(-1)!] = value;
}

const CREDENTIAL_FORMS = credentialForms(PLANTED_PASSWORD);

describe('the inputs the tables start from', () => {
  it.each(FUNCTION_NAMES)('%s: the seed with its full input composes, without a Fatal result', async (name) => {
    const input = fullInput(name);
    const { rsp } = await call(name, await request(name, input));
    expect(fatalMessages(rsp)).toEqual([]);
    expect(Object.keys(rsp.desired?.resources ?? {}).length).toBeGreaterThan(0);
  });
});

describe('a credential inside a URL-like setting, whichever check refuses it', () => {
  // Every setting, at the top level and in a per-cluster override, under every check that can refuse it.
  const cases = URL_SETTINGS.flatMap(({ path, kind }) =>
    [[] as Path, ['clusters', 0] as Path].flatMap((at) =>
      refusals(kind, PLANTED_PASSWORD).map((refusal) => ({ field: [...at, ...path], ...refusal })),
    ),
  );

  it('covers every setting and check (a table that shrank would prove less)', () => {
    expect(cases.length).toBe(2 * (4 * 19 + 5 + 3 * 5));
  });

  it.each(cases.map((c) => [fieldPath(c.field), c.check, c] as const))('%s, refused for %s', async (_field, _check, c) => {
    const input = fullInput(HYDRATION)!;
    setPath(input, c.field, c.value);
    const req = await request(HYDRATION, input);
    const { bytes, rsp } = await call(HYDRATION, req);
    const [fatal, ...more] = fatalMessages(rsp);
    expect(more).toEqual([]);
    // The field, then what is wrong with it.
    expect(fatal?.startsWith(`${fieldPath(c.field)} `), fatal).toBe(true);
    expect(fatal).toMatch(c.problem);
    expect(rsp.desired?.resources ?? {}).toEqual({});
    const text = bytes.toString('latin1');
    for (const form of CREDENTIAL_FORMS) expect(text, form).not.toContain(form);
  });

  it.each([REPLICA, CACHE] as const)('%s: the same settings are refused without quoting them', async (name) => {
    for (const { path } of URL_SETTINGS) {
      const input: JsonObject = { apiVersion: 'fn.modelplane.ai/v1alpha1', kind: INPUT_KIND[name] ?? 'HydrationSettings' };
      setPath(input, path, `https://me:${PLANTED_PASSWORD}@hf.corp.example`);
      const { bytes, rsp } = await call(name, await request(name, input));
      const [fatal, ...more] = fatalMessages(rsp);
      expect(more).toEqual([]);
      expect(fatal).toMatch(name === CACHE ? /^input must be absent/ : new RegExp(`^input\\.${path[0]} is not a known field`));
      for (const form of CREDENTIAL_FORMS) expect(bytes.toString('latin1')).not.toContain(form);
    }
  });

  it.each(FUNCTION_NAMES)('%s: an XR whose name carries one is answered and logged without it', async (name) => {
    const req = await request(name, undefined);
    (req.observed!.composite!.resource['metadata'] as JsonObject)['name'] = `https://me:${PLANTED_PASSWORD}@x`;
    const { bytes, rsp } = await call(name, req);
    // Refused where the name composes others' names (the cache, the replica); the hydration names by cacheName.
    for (const message of fatalMessages(rsp)) expect(message).toMatch(/^metadata\.name /);
    for (const form of CREDENTIAL_FORMS) expect(bytes.toString('latin1')).not.toContain(form);
  });

  it('leaves the credential in no log line, at any level (the servers run with --debug)', async () => {
    // Wait for the pipes: every call above has answered, its lines may still be on the way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = [...servers.values()].flatMap((server) => [...server.lines, server.stderr()]);
    expect(lines.some((line) => line.includes('"level":"debug"'))).toBe(true);
    for (const form of CREDENTIAL_FORMS) expect(lines.filter((line) => line.includes(form))).toEqual([]);
  });
});

describe('a misspelled field, at every level of the input', () => {
  const levels = (name: FunctionName) => objectLevels(INPUT_SCHEMA[name]!, fullInput(name)!);

  it('reaches every object level of the CRDs (top, groups, caBundle, resources, tolerations, overrides, selectors)', () => {
    const paths = levels(HYDRATION).map((l) => fieldPath(l.path));
    expect(paths).toEqual(
      expect.arrayContaining([
        'input',
        'input.network',
        'input.network.caBundle',
        'input.jobs.resources',
        'input.jobs.tolerations[0]',
        'input.clusters[0]',
        'input.clusters[0].clusterSelector',
        'input.clusters[0].clusterSelector.matchExpressions[0]',
        'input.clusters[0].network.caBundle',
        'input.clusters[0].jobs.tolerations[0]',
      ]),
    );
    expect(paths.length).toBe(20);
    expect(levels(REPLICA).map((l) => fieldPath(l.path))).toEqual(['input']);
  });

  const cases = ([HYDRATION, REPLICA] as const).flatMap((name) =>
    levels(name).flatMap(({ path, known }) =>
      known
        .filter((field) => field !== 'apiVersion' && field !== 'kind')
        .map((field, i) => ({ name, path, field, misspelled: typo(field, known, i) })),
    ),
  );

  it.each(cases.map((c) => [c.name, fieldPath([...c.path, c.misspelled]), c.field, c] as const))(
    '%s: %s (for %s)',
    async (name, path, field, c) => {
      const input = fullInput(name)!;
      setPath(input, [...c.path, c.misspelled], 'x');
      const { rsp } = await call(name, await request(name, input));
      const [fatal, ...more] = fatalMessages(rsp);
      expect(more).toEqual([]);
      expect(fatal).toBe(`${path} is not a known field: did you mean ${field}?`);
      expect(rsp.desired?.resources ?? {}).toEqual({});
    },
  );

  it('names the known fields when nothing is close', async () => {
    const input = fullInput(HYDRATION)!;
    (input['network'] as JsonObject)['mirror'] = 'https://hf-mirror.corp.example';
    const { rsp } = await call(HYDRATION, await request(HYDRATION, input));
    expect(fatalMessages(rsp)).toEqual([
      'input.network.mirror is not a known field (network has caBundle, hfEndpoint, httpProxy, httpsProxy, noProxy)',
    ]);
  });

  it("the issue's own: network.hfEndpiont is refused, never the public hub", async () => {
    const input = {
      apiVersion: 'fn.modelplane.ai/v1alpha1',
      kind: 'HydrationSettings',
      network: { hfEndpiont: 'https://hf.corp.example' },
    };
    const { rsp } = await call(HYDRATION, await request(HYDRATION, input));
    expect(fatalMessages(rsp)).toEqual(['input.network.hfEndpiont is not a known field: did you mean hfEndpoint?']);
    expect(rsp.desired?.resources ?? {}).toEqual({});
  });

  it('settings for the other function are named by their kind, not as a list of unknown fields', async () => {
    const hydration = {
      apiVersion: 'fn.modelplane.ai/v1alpha1',
      kind: 'HydrationSettings',
      network: { hfEndpoint: 'https://hf.corp.example' },
    };
    const { rsp } = await call(REPLICA, await request(REPLICA, hydration));
    expect(fatalMessages(rsp)).toEqual(['input.kind must be ReplicaSettings (got "HydrationSettings")']);
  });

  it.each([
    ['HydrationSettings', { apiVersion: 'fn.modelplane.ai/v1alpha1', kind: 'HydrationSettings', workloadNamespace: 'PerTeam' }],
    ['anything', { apiVersion: 'example.org/v1', kind: 'Anything', foo: 1 }],
  ])('compose-model-cache refuses %s as input: it takes no settings', async (_what, input) => {
    const { rsp } = await call(CACHE, await request(CACHE, input));
    const [fatal, ...more] = fatalMessages(rsp);
    expect(more).toEqual([]);
    expect(fatal).toMatch(/^input must be absent: compose-model-cache takes no settings/);
    expect(rsp.desired?.resources ?? {}).toEqual({});
  });

  it('compose-model-cache composes as before with no input, or an empty one', async () => {
    for (const input of [undefined, {}]) {
      const { rsp } = await call(CACHE, await request(CACHE, input));
      expect(fatalMessages(rsp)).toEqual([]);
    }
  });
});
