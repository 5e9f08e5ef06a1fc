// The two generations of the `crossplane` CLI the project is tested with:
//
// - up to v2.2 (core's own module, cmd/crank): `crossplane render ...` runs
//   the function pipeline itself; `crossplane beta validate ...` validates
//   against the CRDs of its own version.
// - v2.3 on (github.com/crossplane/cli/v2): `crossplane composition render`
//   hands the pipeline to core (`crossplane internal render`), in a container
//   unless given `--crossplane-binary`; we always give it the core binary
//   tools/build.sh built, never Docker. `crossplane resource validate` takes
//   core's CRDs from the image `--crossplane-image` names (default `:stable`),
//   which the pre-filled cache answers offline when it names our core's tag.
//
// `tools/build.sh env` says which CLI is selected (MODELPLANE_CROSSPLANE,
// make's CROSSPLANE=oldest|newest); every caller of the CLI asks here.

import type { JsonObject } from '#lib';
import { requireTool, toolPaths } from '../support/tools.js';

/** Whether a CLI version is of the v2.3+ generation (its own module). */
export function isSplitCli(version: string): boolean {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  if (!match) throw new Error(`not a Crossplane CLI version: "${version}"`);
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 2 || (major === 2 && minor >= 3);
}

/** The selected CLI's version (CROSSPLANE_CLI_VERSION of tools/build.sh env). */
export function cliVersion(root?: string): string {
  const paths = toolPaths(root);
  return paths.CROSSPLANE_CLI_VERSION || paths.CROSSPLANE_VERSION;
}

/** The words before render's arguments: `render`, or `composition render --crossplane-binary <core>`. */
export function renderCommand(root?: string): string[] {
  if (!isSplitCli(cliVersion(root))) return ['render'];
  return ['composition', 'render', '--crossplane-binary', requireTool('CROSSPLANE_CORE', root)];
}

/** The words before validate's arguments: `beta validate`, or `resource validate` pointed at our core's tag. */
export function validateCommand(root?: string): string[] {
  if (!isSplitCli(cliVersion(root))) return ['beta', 'validate'];
  return ['resource', 'validate', '--crossplane-image', `xpkg.crossplane.io/crossplane/crossplane:${toolPaths(root).CROSSPLANE_VERSION}`];
}

/** Conditions Crossplane's own reconciler writes on the XR in a v2.3+ render, which the v2.2 render leaves out. */
const RECONCILER_CONDITIONS = new Set(['Responsive', 'Synced']);
const GENERATED = '<generated>';

/**
 * What a render of either generation holds in common: the composed resources
 * and the XR as our functions set them. The v2.3+ render runs core's real
 * reconciler, so it adds what that writes (spec.crossplane.resourceRefs, the
 * Responsive and Synced conditions, owner uids, Results for the reconciler's
 * own events, and reports results in another shape) and names each resource
 * the function leaves unnamed from its generateName with a random suffix
 * where the v2.2 render uses a hash. Those are left out here, the generated
 * names replaced everywhere by one placeholder, and conditions sorted by type.
 */
export function comparableAcrossClis(docs: readonly JsonObject[]): JsonObject[] {
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const out = structuredClone<JsonObject[]>(docs.filter((doc) => !text(doc['apiVersion']).startsWith('render.crossplane.io/')));
  const generated = new Map<string, string>();
  for (const doc of out) {
    const metadata = doc['metadata'] as JsonObject | undefined;
    const prefix = metadata?.['generateName'];
    const name = metadata?.['name'];
    if (typeof prefix === 'string' && typeof name === 'string' && name.startsWith(prefix)) generated.set(name, `${prefix}${GENERATED}`);
    for (const ref of (metadata?.['ownerReferences'] as JsonObject[] | undefined) ?? []) delete ref['uid'];
  }
  const [xr] = out;
  const spec = xr?.['spec'] as JsonObject | undefined;
  if (spec) {
    delete spec['crossplane'];
    if (Object.keys(spec).length === 0) delete xr!['spec'];
  }
  for (const doc of out) {
    const status = doc['status'] as JsonObject | undefined;
    const conditions = status?.['conditions'] as JsonObject[] | undefined;
    if (status && conditions)
      status['conditions'] = conditions
        .filter((c) => !RECONCILER_CONDITIONS.has(text(c['type'])))
        .sort((a, b) => text(a['type']).localeCompare(text(b['type'])));
  }
  const rename = (value: unknown): unknown => {
    if (typeof value === 'string') return generated.get(value) ?? value;
    if (Array.isArray(value)) return value.map(rename);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value as JsonObject).map(([key, item]) => [key, rename(item)]));
    return value;
  };
  return out.map((doc) => rename(doc) as JsonObject);
}
