// The examples tool (examples-cli.ts) is a module the tests import and a
// program Node runs (make render); it runs its main only in the second case.

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Whether the module at `moduleUrl` (its import.meta.url) is the script Node was started with. */
export function invokedDirectly(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}
