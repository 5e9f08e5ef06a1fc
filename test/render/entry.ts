// Both command lines of the driver (cli.ts, examples-cli.ts) are modules the
// tests import and programs Node runs; each runs its main only in the second
// case.

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
