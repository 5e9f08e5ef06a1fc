// `crossplane render`'s command line over our driver, for machines without the
// crossplane CLI:
//
//   node test/render/dist/render.mjs xr.yaml composition.yaml functions.yaml \
//     [-o observed.yaml|dir] [-e required.yaml|dir] [-x] [-r] [-c] ...
//
// Same arguments, flags, output and exit codes as render (error messages
// start "render: error:" where render's start "crossplane: error:").

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { JsonValue } from '#lib';
import { RenderError, renderDocuments, renderPipeline, type RenderOptions } from './render.js';
import { invokedDirectly } from './entry.js';
import { formatYamlStream } from './yaml.js';

export const USAGE = `Usage: render <composite-resource> <composition> <functions> [flags]

Render what Crossplane would compose for an XR by running its Composition's
function pipeline against Functions in the Development runtime (already
running, without TLS), as \`crossplane render\` does.

Flags:
  -o, --observed-resources=PATH     Observed composed resources (file or directory).
  -e, --required-resources=PATH     Required resources the functions may ask for (file or directory).
      --extra-resources=PATH        Same as --required-resources (render's deprecated name).
      --function-credentials=PATH   Secrets for pipeline steps' credentials.
      --context-values=KEY=VALUE    Initial context value (JSON or YAML). Repeatable.
      --context-files=KEY=PATH      Initial context value from a file. Repeatable.
  -a, --function-annotations=K=V    Set an annotation on every Function (e.g. a runtime target). Repeatable.
  -x, --include-full-xr             Print the XR with the input's metadata and spec.
  -r, --include-function-results    Print functions' results as kind: Result.
  -c, --include-context             Print the final context as kind: Context.
      --timeout=DURATION            How long the whole render may take (default 1m).
  -h, --help                        Show this help.`;

export class UsageError extends Error {
  override name = 'UsageError';
}

const UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration ("90s", "1m30s", "500ms"), in milliseconds. */
export function parseDuration(text: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new UsageError(`--timeout: invalid duration ${JSON.stringify(text)}`);
  return parts.reduce((total, p) => total + Number(p[1]) * UNITS_MS[p[2]!]!, 0);
}

function keyValue(flag: string, entry: string): [string, string] {
  const at = entry.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag}: expected KEY=VALUE (got ${JSON.stringify(entry)})`);
  return [entry.slice(0, at), entry.slice(at + 1)];
}

export interface ParsedCommand {
  options: RenderOptions;
  includeFunctionResults: boolean;
  includeContext: boolean;
  help: boolean;
}

export function parseCommand(argv: readonly string[]): ParsedCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        'observed-resources': { type: 'string', short: 'o' },
        'required-resources': { type: 'string', short: 'e' },
        'extra-resources': { type: 'string' },
        'function-credentials': { type: 'string' },
        'context-values': { type: 'string', multiple: true },
        'context-files': { type: 'string', multiple: true },
        'function-annotations': { type: 'string', short: 'a', multiple: true },
        'include-full-xr': { type: 'boolean', short: 'x' },
        'include-function-results': { type: 'boolean', short: 'r' },
        'include-context': { type: 'boolean', short: 'c' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    return {
      options: { compositeResource: '', composition: '', functions: '' },
      includeFunctionResults: false,
      includeContext: false,
      help: true,
    };
  }
  if (positionals.length !== 3) {
    throw new UsageError(
      `expected <composite-resource> <composition> <functions> (got ${positionals.length} argument${positionals.length === 1 ? '' : 's'})`,
    );
  }
  const [compositeResource, composition, functions] = positionals as [string, string, string];
  const options: RenderOptions = { compositeResource, composition, functions };
  if (values['observed-resources'] !== undefined) options.observedResources = values['observed-resources'];
  if (values['required-resources'] !== undefined) options.requiredResources = values['required-resources'];
  if (values['extra-resources'] !== undefined) options.extraResources = values['extra-resources'];
  if (values['function-credentials'] !== undefined) options.functionCredentials = values['function-credentials'];
  if (values['include-full-xr']) options.includeFullXr = true;
  if (values.timeout !== undefined) options.timeoutMs = parseDuration(values.timeout);

  // Files first: render lets --context-values win over --context-files for the same key.
  const context: Record<string, JsonValue> = {};
  for (const entry of values['context-files'] ?? []) {
    const [key, file] = keyValue('--context-files', entry);
    context[key] = parseYaml(readFileSync(file, 'utf8')) as JsonValue;
  }
  for (const entry of values['context-values'] ?? []) {
    const [key, value] = keyValue('--context-values', entry);
    context[key] = parseYaml(value) as JsonValue;
  }
  if (Object.keys(context).length > 0) options.context = context;

  const annotations: Record<string, string> = {};
  for (const entry of values['function-annotations'] ?? []) {
    const [key, value] = keyValue('--function-annotations', entry);
    annotations[key] = value;
  }
  if (Object.keys(annotations).length > 0) options.functionAnnotations = annotations;

  return {
    options,
    includeFunctionResults: values['include-function-results'] ?? false,
    includeContext: values['include-context'] ?? false,
    help: false,
  };
}

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Run the command; resolves with the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let command: ParsedCommand;
  try {
    command = parseCommand(argv);
  } catch (error) {
    io.stderr(`render: error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (command.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  try {
    const output = await renderPipeline(command.options);
    io.stdout(
      formatYamlStream(
        renderDocuments(output, { includeFunctionResults: command.includeFunctionResults, includeContext: command.includeContext }),
      ),
    );
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Render's own wording for a failure inside the pipeline.
    io.stderr(`render: error: ${error instanceof RenderError ? `cannot render composite resource: ${message}` : message}\n`);
    return 1;
  }
}

if (invokedDirectly(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
