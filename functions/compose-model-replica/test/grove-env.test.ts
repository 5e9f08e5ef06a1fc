// What the engine on a real Grove pod reads in MODELPLANE_LEADER_ADDRESS.
// No Grove runs here, so this plays the two steps between our PodCliqueSet
// and the container's environment, as Grove's and the kubelet's source do
// them (docs/walkthrough-serving-shapes.md, "The leader address on a real
// Grove", has the file and line of each):
// - Grove adds its variables to each clique's env: the scaling group's three
//   when it makes the PodClique, then the pod's five when it makes the pod.
//   Every release up to v0.1.0-alpha.12-rc1 appends them after the template's
//   env (alpha.6 is the one the Dynamo stack pins); main since #753 prepends.
//   It names the leader's pod host `<pcs>-0-<group>-<gang>-leader-0` under
//   the headless Service `<pcs>-0`.
// - The kubelet resolves env in list order: a `$(NAME)` in a value expands
//   only to an entry above it (else it stays as written, `$$` being a literal
//   `$`); a command's `$(NAME)` expands to any entry of the final list.

import { describe, expect, it } from 'vitest';
import { isObject, type JsonObject } from '#lib';
import { at, cluster, gangEngine, manifest, replica, requestFor, run } from './support.js';

type Order = 'append' | 'prepend';
interface Env {
  name: string;
  value?: string;
  fieldPath?: string;
}

/** One pod of a clique: which gang it is in, and what the pod's labels carry. */
interface Pod {
  pcs: string;
  namespace: string;
  gang: number;
  clique: string;
}

const GROUP = 'gang';
const fieldRef = (fieldPath: string): Env => ({ name: '', fieldPath });

/** Grove's variables for `pod`, in the order it adds them: the scaling group's, then the pod's. */
function groveEnv(pod: Pod): { group: Env[]; pod: Env[] } {
  const group = `${pod.pcs}-0-${GROUP}`;
  return {
    group: [
      { ...fieldRef("metadata.labels['grove.io/podcliquescalinggroup']"), name: 'GROVE_PCSG_NAME' },
      { name: 'GROVE_PCSG_TEMPLATE_NUM_PODS', value: '2' },
      { ...fieldRef("metadata.labels['grove.io/podcliquescalinggroup-replica-index']"), name: 'GROVE_PCSG_INDEX' },
    ],
    pod: [
      { name: 'GROVE_PCS_NAME', value: pod.pcs },
      { name: 'GROVE_PCS_INDEX', value: '0' },
      { name: 'GROVE_PCLQ_NAME', value: `${group}-${pod.gang}-${pod.clique}` },
      { name: 'GROVE_HEADLESS_SERVICE', value: `${pod.pcs}-0.${pod.namespace}.svc.cluster.local` },
      { name: 'GROVE_PCLQ_POD_INDEX', value: '0' },
    ],
  };
}

function labels(pod: Pod): Record<string, string> {
  return {
    'grove.io/podcliquescalinggroup': `${pod.pcs}-0-${GROUP}`,
    'grove.io/podcliquescalinggroup-replica-index': String(pod.gang),
  };
}

/** The container's env list once Grove made the pod: appended (each step after what is there) or prepended (before). */
function podEnv(template: Env[], pod: Pod, order: Order): Env[] {
  const grove = groveEnv(pod);
  if (order === 'append') return [...template, ...grove.group, ...grove.pod];
  // Prepending drops a template entry of the same name (Grove's names are reserved there).
  const ours = new Set([...grove.group, ...grove.pod].map((e) => e.name));
  return [...grove.pod, ...grove.group, ...template.filter((e) => !ours.has(e.name))];
}

/** `$(NAME)` to what `known` holds, `$$` to `$`, anything else as written. */
function expand(text: string, known: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name: string | undefined) =>
    name === undefined ? '$' : (known.get(name) ?? whole),
  );
}

function downward(fieldPath: string, pod: Pod): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(fieldPath);
  if (label) return labels(pod)[label[1]!] ?? '';
  if (fieldPath === 'metadata.namespace') return pod.namespace;
  throw new Error(`no stand-in for fieldRef ${fieldPath}`);
}

/** The kubelet's pass over the env list: each entry sees only the ones above it. */
function resolve(env: Env[], pod: Pod): Map<string, string> {
  const known = new Map<string, string>();
  for (const e of env) known.set(e.name, e.fieldPath !== undefined ? downward(e.fieldPath, pod) : expand(e.value ?? '', known));
  return known;
}

function templateEnv(container: JsonObject): Env[] {
  return (container['env'] as JsonObject[]).map((e) => {
    const path = at(e, 'valueFrom', 'fieldRef', 'fieldPath');
    return typeof path === 'string'
      ? { name: e['name'] as string, fieldPath: path }
      : { name: e['name'] as string, value: e['value'] as string };
  });
}

const JOIN = ['/bin/sh', '-c', 'exec ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379 --block'];
const NS = 'default';

async function composedPcs(copies: number): Promise<JsonObject> {
  const engine = gangEngine('main', { copies, worker: { command: JOIN } });
  const rsp = await run(requestFor({ xr: replica({ name: 'r', engines: [engine] }), cluster: cluster('cluster-a', { stack: 'Dynamo' }) }));
  return manifest(rsp, 'model-serving-main');
}

function engineOfClique(pcs: JsonObject, clique: string): JsonObject {
  const found = (at(pcs, 'spec', 'template', 'cliques') as JsonObject[]).find((c) => c['name'] === clique)!;
  const container = (at(found, 'spec', 'podSpec', 'containers') as JsonObject[])[0];
  if (!isObject(container)) throw new Error(`clique ${clique} has no container`);
  return container;
}

/** What DNS name gang `gang`'s leader pod has: Grove's hostname and subdomain for it. */
const leaderHost = (pcs: string, gang: number): string => `${pcs}-0-${GROUP}-${gang}-leader-0.${pcs}-0.${NS}.svc.cluster.local`;

describe('the leader address on a real Grove pod (Grove and the kubelet played from their source)', () => {
  it.each<[string, Order, string, number]>([
    ['v0.1.0-alpha.6 (appends), leader of gang 0', 'append', 'leader', 0],
    ['v0.1.0-alpha.6 (appends), worker of gang 2', 'append', 'worker', 2],
    ['main after #753 (prepends), leader of gang 0', 'prepend', 'leader', 0],
    ['main after #753 (prepends), worker of gang 2', 'prepend', 'worker', 2],
  ])('%s: its own gang’s leader', async (_, order, clique, gang) => {
    const pcs = await composedPcs(3);
    const name = at(pcs, 'metadata', 'name') as string;
    const pod: Pod = { pcs: name, namespace: NS, gang, clique };
    const env = resolve(podEnv(templateEnv(engineOfClique(pcs, clique)), pod, order), pod);
    expect(env.get('MODELPLANE_LEADER_ADDRESS')).toBe(leaderHost(name, gang));
    expect(env.get('MODELPLANE_GANG_INDEX')).toBe(String(gang));
  });

  it('the worker’s join command reaches its gang’s leader under alpha.6', async () => {
    const pcs = await composedPcs(2);
    const name = at(pcs, 'metadata', 'name') as string;
    const pod: Pod = { pcs: name, namespace: NS, gang: 1, clique: 'worker' };
    const worker = engineOfClique(pcs, 'worker');
    const env = resolve(podEnv(templateEnv(worker), pod, 'append'), pod);
    expect((worker['command'] as string[]).map((part) => expand(part, env))[2]).toBe(
      `exec ray start --address=${leaderHost(name, 1)}:6379 --block`,
    );
  });

  // Why the address is built from names: the form upstream composes (and this function did) is left as written on
  // alpha.6, and resolves to the same name as ours only on a Grove that prepends.
  it.each<[Order, (pcs: string) => string]>([
    ['append', () => '$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-leader-0.$(GROVE_HEADLESS_SERVICE)'],
    ['prepend', (pcs) => leaderHost(pcs, 1)],
  ])('the $(GROVE_PCSG_*) form, Grove %s', (order, want) => {
    const pcs = 'r-main-00000';
    const pod: Pod = { pcs, namespace: NS, gang: 1, clique: 'worker' };
    const old: Env = {
      name: 'MODELPLANE_LEADER_ADDRESS',
      value: '$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-leader-0.$(GROVE_HEADLESS_SERVICE)',
    };
    expect(resolve(podEnv([old], pod, order), pod).get('MODELPLANE_LEADER_ADDRESS')).toBe(want(pcs));
  });
});
