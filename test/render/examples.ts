// The render examples under examples/<xr>/<stage>/: finding them, finding the
// Composition each one's XR needs, starting the function servers that
// examples/functions.yaml points at (or on ephemeral ports, with a copy of
// functions.yaml that points there), rendering each with the real `crossplane
// render` (the pinned CLI tools/build.sh builds), and comparing with the
// checked-in expected output.

import { mkdtempSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative } from 'node:path';
import { compareNames, getString, isObject, type JsonObject } from '#lib';
import { FUNCTION_NAMES, startServer, type FunctionName, type RunningServer } from '../support/server.js';
import { requireTool, runTool } from '../support/tools.js';
import { cliVersion, comparableAcrossClis, isSplitCli, renderCommand } from './cli.js';
import { ANNOTATION, checkCompositionFor, loadCompositeResource, loadFunctions, parseComposition, type Composition } from './load.js';
import { formatYamlStream, parseYamlStream, readYamlStream } from './yaml.js';

export const EXAMPLES_DIR = 'examples';
export const FUNCTIONS_FILE = join(EXAMPLES_DIR, 'functions.yaml');
export const PACKAGE_DIR = 'package';
export const FILES = {
  xr: 'xr.yaml',
  required: 'required.yaml',
  observed: 'observed.yaml',
  expected: 'expected.yaml',
  /** A settings example's own Composition: the packaged one with a function step `input` (docs/reference/hydrationsettings.md). */
  composition: 'composition.yaml',
} as const;

const EXPECTED_HEADER = [
  '# Written by `make render-update` from the inputs in this folder. Review the',
  '# change like code; never edit by hand (`make render-check` compares with it).',
].join('\n');

export interface Example {
  /** `<xr>/<stage>`, e.g. model-cache/first-compose. */
  name: string;
  dir: string;
  xr: string;
  required?: string;
  observed?: string;
  expected: string;
}

function subdirectories(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort(compareNames);
}

/** Every examples/<xr>/<stage>/ folder, in name order. */
export function findExamples(root: string): Example[] {
  const examples: Example[] = [];
  for (const xr of subdirectories(join(root, EXAMPLES_DIR))) {
    for (const stage of subdirectories(join(root, EXAMPLES_DIR, xr))) {
      const dir = join(root, EXAMPLES_DIR, xr, stage);
      const example: Example = { name: `${xr}/${stage}`, dir, xr: join(dir, FILES.xr), expected: join(dir, FILES.expected) };
      if (existsSync(join(dir, FILES.required))) example.required = join(dir, FILES.required);
      if (existsSync(join(dir, FILES.observed))) example.observed = join(dir, FILES.observed);
      examples.push(example);
    }
  }
  return examples;
}

export interface PackagedComposition {
  file: string;
  composition: Composition;
}

/** Every Composition in the YAML files of package/<plural>/. */
export function findCompositions(root: string): PackagedComposition[] {
  const found: PackagedComposition[] = [];
  for (const plural of subdirectories(join(root, PACKAGE_DIR))) {
    const dir = join(root, PACKAGE_DIR, plural);
    const files = readdirSync(dir)
      .filter((name) => ['.yaml', '.yml'].includes(extname(name)))
      .sort(compareNames);
    for (const name of files) {
      for (const doc of readYamlStream(join(dir, name))) {
        if (getString(doc, 'kind') === 'Composition') found.push({ file: join(dir, name), composition: parseComposition(doc) });
      }
    }
  }
  return found;
}

/** The one Composition in package/ for this XR's type (render would refuse any other). */
export function compositionFor(xr: JsonObject, compositions: readonly PackagedComposition[], root: string): PackagedComposition {
  const apiVersion = getString(xr, 'apiVersion') ?? '';
  const kind = getString(xr, 'kind') ?? '';
  const matching = compositions.filter(
    (c) => c.composition.compositeTypeRef.apiVersion === apiVersion && c.composition.compositeTypeRef.kind === kind,
  );
  if (matching.length === 0) throw new Error(`no Composition in ${PACKAGE_DIR}/ has compositeTypeRef ${apiVersion} ${kind}`);
  if (matching.length > 1) {
    throw new Error(
      `more than one Composition in ${PACKAGE_DIR}/ is for ${apiVersion} ${kind}: ${matching.map((c) => relative(root, c.file)).join(', ')}`,
    );
  }
  checkCompositionFor(xr, matching[0]!.composition);
  return matching[0]!;
}

/**
 * The Composition an example renders with: its own composition.yaml when it
 * has one (a settings example), else the one in package/ for its XR's type.
 */
export function compositionForExample(root: string, example: Example): PackagedComposition {
  const xr = loadCompositeResource(example.xr);
  const own = join(example.dir, FILES.composition);
  if (!existsSync(own)) return compositionFor(xr, findCompositions(root), root);
  const docs = readYamlStream(own).filter((doc) => getString(doc, 'kind') === 'Composition');
  if (docs.length !== 1) throw new Error(`${relative(root, own)} must hold exactly one Composition (it holds ${docs.length})`);
  const composition = parseComposition(docs[0]!);
  checkCompositionFor(xr, composition);
  return { file: own, composition };
}

export interface ExampleFunction {
  /** The Function's name in functions.yaml (what Compositions reference). */
  name: string;
  /** The function in functions/<dir>/ that serves it. */
  server: FunctionName;
  /** Its Development target in functions.yaml. */
  target: string;
}

/** The Functions of examples/functions.yaml and the server each one is: its package's last path segment. */
export function exampleFunctions(root: string): ExampleFunction[] {
  return loadFunctions(join(root, FUNCTIONS_FILE)).map((fn) => {
    const repository = (fn.package ?? '').replace(/[:@].*$/, '');
    const server = repository.slice(repository.lastIndexOf('/') + 1);
    if (!(FUNCTION_NAMES as readonly string[]).includes(server)) {
      throw new Error(
        `${FUNCTIONS_FILE}: Function ${fn.name} has package ${JSON.stringify(fn.package)}, which is none of ${FUNCTION_NAMES.join(', ')}`,
      );
    }
    if (fn.runtime !== 'Development') throw new Error(`${FUNCTIONS_FILE}: Function ${fn.name} must use the Development runtime`);
    return { name: fn.name, server: server as FunctionName, target: fn.target };
  });
}

export interface ExampleServers {
  /** Function name -> host:port it listens on. */
  targets: Record<string, string>;
  /** Function name -> its running server (its stdout log lines: one `RunFunction` line per call). */
  servers: Record<string, RunningServer>;
  /**
   * The functions.yaml to render with: examples/functions.yaml when the
   * servers listen where it points, else a temporary copy whose Development
   * targets point at the servers (removed by stop()).
   */
  functions: string;
  stop(): Promise<void>;
  /** Signal every server to stop, synchronously (for process exit handlers, which can't wait). */
  signal(): void;
}

/** The loopback address a Development target names, for a server to listen on. */
function listenAddress(target: string): string {
  const match = /^(?:dns:\/\/\/)?(localhost|127\.0\.0\.1):(\d+)$/.exec(target);
  if (!match)
    throw new Error(`${FUNCTIONS_FILE}: target ${target} is not localhost:<port>; make render starts servers on this machine only`);
  return `127.0.0.1:${match[2]!}`;
}

/** examples/functions.yaml with each Function's Development target set to where it listens. */
export function functionsFileText(root: string, targets: Readonly<Record<string, string>>): string {
  const docs = readYamlStream(join(root, FUNCTIONS_FILE)).map((doc) => {
    const name = getString(doc, 'metadata', 'name') ?? '';
    const target = targets[name];
    if (target === undefined) throw new Error(`${FUNCTIONS_FILE}: no server for Function ${name}`);
    const metadata = isObject(doc['metadata']) ? doc['metadata'] : {};
    const annotations = isObject(metadata['annotations']) ? metadata['annotations'] : {};
    return { ...doc, metadata: { ...metadata, annotations: { ...annotations, [ANNOTATION.developmentTarget]: target } } };
  });
  return formatYamlStream(docs);
}

/**
 * Start each function's server, insecure, where functions.yaml points (or on
 * ephemeral ports, so tests never collide with `make run`), and a way to stop
 * them all. If one fails to start, the ones already started are stopped
 * before the error is thrown.
 */
export async function startExampleServers(root: string, options: { ephemeralPorts?: boolean } = {}): Promise<ExampleServers> {
  const running: RunningServer[] = [];
  const targets: Record<string, string> = {};
  const servers: Record<string, RunningServer> = {};
  let scratch: string | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all(running.map((server) => server.stop()));
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  };
  let functions = join(root, FUNCTIONS_FILE);
  try {
    for (const fn of exampleFunctions(root)) {
      const address = options.ephemeralPorts ? undefined : listenAddress(fn.target);
      let server: RunningServer;
      try {
        server = await startServer(fn.server, { root, ...(address === undefined ? {} : { address }) });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (/address already in use/.test(message)) {
          throw new Error(
            `cannot start ${fn.server} on ${address ?? 'an ephemeral port'}: the port is taken. Is \`make run\` still running? Stop it first.`,
          );
        }
        throw error;
      }
      running.push(server);
      targets[fn.name] = server.address;
      servers[fn.name] = server;
    }
    if (options.ephemeralPorts) {
      scratch = mkdtempSync(join(tmpdir(), 'example-functions-'));
      functions = join(scratch, 'functions.yaml');
      writeFileSync(functions, functionsFileText(root, targets));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const signal = (): void => {
    for (const server of running)
      if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill('SIGTERM');
  };
  return { targets, servers, functions, stop, signal };
}

export interface CrossplaneRenderOptions {
  /** The functions.yaml render reads: where each Function's Development target points (examples/functions.yaml by default). */
  functions?: string;
  /** The crossplane CLI (the pinned one tools/build.sh builds, by default). */
  crossplane?: string;
  /** -o: the example's observed resources, if it has any (default true). */
  observed?: boolean;
  /** -x: the XR with the input's metadata and spec, as `crossplane beta validate` needs it. */
  fullXr?: boolean;
  /** -r: the functions' results, as kind: Result. */
  results?: boolean;
}

export interface CrossplaneRender {
  /** Every document render printed, in its order. */
  documents: JsonObject[];
  /** The XR (render prints it first). */
  compositeResource: JsonObject;
  composedResources: JsonObject[];
  /** The documents of kind Result (render.crossplane.io), with -r. */
  results: JsonObject[];
}

/** Whether a document is one of render's own (a Result or a Context), not a resource. */
export function isRenderOutput(doc: JsonObject): boolean {
  return (getString(doc, 'apiVersion') ?? '').startsWith('render.crossplane.io/');
}

/** Split render's output into the XR, the composed resources and the results. */
export function parseRenderOutput(text: string): CrossplaneRender {
  const documents = parseYamlStream(text, 'crossplane render output');
  const [compositeResource, ...rest] = documents;
  if (compositeResource === undefined) throw new Error('crossplane render printed nothing');
  return {
    documents,
    compositeResource,
    composedResources: rest.filter((doc) => !isRenderOutput(doc)),
    results: rest.filter((doc) => isRenderOutput(doc) && getString(doc, 'kind') === 'Result'),
  };
}

/** The arguments of `crossplane render` for an example, against the Composition in package/ for its XR. */
export function renderArguments(root: string, example: Example, options: CrossplaneRenderOptions = {}): string[] {
  if (!existsSync(example.xr)) throw new Error(`${relative(root, example.xr)} is missing: every example folder needs the XR`);
  const { file: composition } = compositionForExample(root, example);
  const args = [...renderCommand(root), example.xr, composition, options.functions ?? join(root, FUNCTIONS_FILE)];
  if (example.required) args.push('--required-resources', example.required);
  if (example.observed && options.observed !== false) args.push('--observed-resources', example.observed);
  if (options.fullXr) args.push('--include-full-xr');
  if (options.results) args.push('--include-function-results');
  return args;
}

/** Render one example with the real `crossplane render` (its Functions in the Development runtime, already running). */
export async function renderWithCrossplane(
  root: string,
  example: Example,
  options: CrossplaneRenderOptions = {},
): Promise<CrossplaneRender> {
  const args = renderArguments(root, example, options);
  const result = await runTool(options.crossplane ?? requireTool('CROSSPLANE', root), args);
  if (result.code !== 0) {
    throw new Error(`crossplane render failed (exit ${String(result.code)}) for examples/${example.name}:\n${result.stderr.trim()}`);
  }
  return parseRenderOutput(result.stdout);
}

/** What an example's expected.yaml holds: render's output with -r (the results are the events a person would see on the XR). */
export async function renderExample(
  root: string,
  example: Example,
  options: Omit<CrossplaneRenderOptions, 'results' | 'fullXr'> = {},
): Promise<JsonObject[]> {
  return (await renderWithCrossplane(root, example, { ...options, results: true })).documents;
}

/** The expected output file's text for these documents (the note sits inside the first document: a comment-only document is not one). */
export function expectedText(docs: readonly JsonObject[]): string {
  return formatYamlStream(docs).replace(/^---\n/, `---\n${EXPECTED_HEADER}\n`);
}

export function writeExpected(example: Example, docs: readonly JsonObject[]): void {
  writeFileSync(example.expected, expectedText(docs));
}

export type Comparison = { status: 'same' } | { status: 'missing'; message: string } | { status: 'different'; diff: string };

export function missingExpectedMessage(root: string, example: Example): string {
  return (
    `${relative(root, example.expected)} is missing. Run \`make render-update\` to write it from the current render, ` +
    `read it to check it shows what this stage should, and commit it.`
  );
}

/** Compare a render with the example's expected.yaml, as data (key order and quoting don't matter). */
export function compareWithExpected(root: string, example: Example, docs: readonly JsonObject[]): Comparison {
  if (!existsSync(example.expected)) return { status: 'missing', message: missingExpectedMessage(root, example) };
  const expected = parseYamlStream(readFileSync(example.expected, 'utf8'), example.expected);
  // The v2.3+ CLI renders through core's reconciler: compared on what both generations hold (cli.ts).
  const split = isSplitCli(cliVersion(root));
  const want = formatYamlStream(split ? comparableAcrossClis(expected) : expected);
  const got = formatYamlStream(split ? comparableAcrossClis(docs) : docs);
  if (want === got) return { status: 'same' };
  return { status: 'different', diff: lineDiff(want, got, relative(root, example.expected), 'rendered') };
}

/** A unified-style diff of two texts, whole-file context (rendered examples are short). */
export function lineDiff(before: string, after: string, beforeName: string, afterName: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  // Longest common subsequence, by dynamic programming from the end.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const lines = [`--- ${beforeName}`, `+++ ${afterName}`];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push(`  ${a[i]!}`);
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      lines.push(`- ${a[i]!}`);
      i++;
    } else {
      lines.push(`+ ${b[j]!}`);
      j++;
    }
  }
  return lines.join('\n');
}
