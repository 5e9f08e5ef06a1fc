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
