// `make render`, `make render-check` and `make render-update`: start the three
// function servers where examples/functions.yaml points (insecure, on
// 127.0.0.1), render every examples/<xr>/<stage>/ with the real `crossplane
// render` (the pinned CLI `make tools` builds; tools/versions.env), then print
// each render, compare each with its expected.yaml, or rewrite the expected
// files. The servers are stopped however this ends.
//
//   node test/render/dist/examples.mjs [--check | --update]

import { relative } from 'node:path';
import { requireTool } from '../support/tools.js';
import { renderCommand } from './cli.js';
import { compareWithExpected, findExamples, renderExample, startExampleServers, writeExpected, type ExampleServers } from './examples.js';
import { invokedDirectly } from './entry.js';
import { formatYamlStream } from './yaml.js';

type Mode = 'print' | 'check' | 'update';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export async function main(argv: readonly string[], io: Io, root: string): Promise<number> {
  const mode: Mode = argv.includes('--check') ? 'check' : argv.includes('--update') ? 'update' : 'print';
  const unknown = argv.filter((arg) => arg !== '--check' && arg !== '--update');
  if (unknown.length > 0 || (argv.includes('--check') && argv.includes('--update'))) {
    io.stderr('usage: examples.mjs [--check | --update]\n');
    return 2;
  }

  const examples = findExamples(root);
  if (examples.length === 0) {
    io.stdout('No examples yet: add examples/<xr>/<stage>/xr.yaml (and required.yaml, observed.yaml; see examples/README.md).\n');
    return 0;
  }

  let crossplane: string;
  try {
    crossplane = requireTool('CROSSPLANE', root);
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  io.stderr(
    `Rendering ${examples.length} example${examples.length === 1 ? '' : 's'} with ${crossplane} ${renderCommand(root).slice(0, 2).join(' ')}.\n`,
  );

  let servers: ExampleServers | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    servers?.signal();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const onExit = (): void => servers?.signal();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', onExit);
  let failures = 0;
  let differences = 0;
  try {
    // Ephemeral ports and a copy of functions.yaml pointing at them: `make render`
    // runs beside `make run` (9443-9445) and `make up` (whose provider holds 9443).
    servers = await startExampleServers(root, { ephemeralPorts: true });
    for (const example of examples) {
      const label = `examples/${example.name}`;
      let docs;
      try {
        docs = await renderExample(root, example, { crossplane, functions: servers.functions });
      } catch (error) {
        failures++;
        io.stdout(`# ==== ${label}: FAILED ====\n`);
        io.stderr(`${label}: ${error instanceof Error ? error.message : String(error)}\n`);
        continue;
      }
      if (mode === 'print') {
        io.stdout(`# ==== ${label} ====\n${formatYamlStream(docs)}\n`);
      } else if (mode === 'update') {
        writeExpected(example, docs);
        io.stdout(`wrote ${relative(root, example.expected)}\n`);
      } else {
        const comparison = compareWithExpected(root, example, docs);
        if (comparison.status === 'same') {
          io.stdout(`ok       ${label}\n`);
        } else {
          failures++;
          if (comparison.status === 'different') differences++;
          io.stdout(`${comparison.status === 'missing' ? 'MISSING ' : 'DIFFERS '} ${label}\n`);
          io.stderr(`${comparison.status === 'missing' ? comparison.message : comparison.diff}\n`);
        }
      }
    }
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await servers?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  }
  if (failures > 0) {
    const hint = differences > 0 ? ' If the changes are intended, run `make render-update` and review the diff.' : '';
    io.stderr(`${failures} of ${examples.length} example${examples.length === 1 ? '' : 's'} failed.${hint}\n`);
    return 1;
  }
  return 0;
}

if (invokedDirectly(import.meta.url)) {
  process.exitCode = await main(
    process.argv.slice(2),
    { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
    process.cwd(),
  );
}
