// Every render example under examples/<xr>/<stage>/, rendered through the
// built function servers with the project's render driver and compared with
// its checked-in expected.yaml (what `make render-check` does, inside `make
// test`). An example without expected.yaml fails, saying how to write one.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getString } from '#lib';
import { REPO_ROOT } from '#testing';
import {
  ANNOTATION,
  compositionFor,
  findCompositions,
  findExamples,
  formatYamlStream,
  loadCompositeResource,
  missingExpectedMessage,
  parseYamlStream,
  readYamlStream,
  renderExample,
  startExampleServers,
  type ExampleServers,
} from './index.js';

const examples = findExamples(REPO_ROOT);

describe('render examples', () => {
  if (examples.length === 0) {
    it('has none yet: this starts comparing renders as soon as an examples/<xr>/<stage>/ folder exists', () => {
      expect(findExamples(REPO_ROOT)).toEqual([]);
    });
    return;
  }

  let servers: ExampleServers;
  beforeAll(async () => {
    servers = await startExampleServers(REPO_ROOT, { ephemeralPorts: true });
  });
  afterAll(async () => {
    await servers.stop();
  });

  describe.each(examples.map((example) => [example.name, example] as const))('%s', (_name, example) => {
    it('has an XR with a Composition in package/, and inputs in the formats render reads', () => {
      const xr = loadCompositeResource(example.xr);
      expect(() => compositionFor(xr, findCompositions(REPO_ROOT), REPO_ROOT)).not.toThrow();
      if (example.required) expect(readYamlStream(example.required).length).toBeGreaterThan(0);
      if (example.observed) {
        const keys = readYamlStream(example.observed).map((doc) =>
          getString(doc, 'metadata', 'annotations', ANNOTATION.compositionResourceName),
        );
        expect(keys, 'every observed resource is annotated crossplane.io/composition-resource-name').not.toContain(undefined);
        expect(new Set(keys).size, 'observed resources have distinct keys').toBe(keys.length);
      }
    });

    it('renders as its expected.yaml says', async () => {
      const rendered = await renderExample(REPO_ROOT, example, { renderer: 'driver', targets: servers.targets });
      let expectedText: string;
      try {
        expectedText = readFileSync(example.expected, 'utf8');
      } catch {
        expect.fail(missingExpectedMessage(REPO_ROOT, example));
      }
      // Compared as data, printed one way: key order and quoting in the file don't matter.
      expect(formatYamlStream(rendered)).toBe(formatYamlStream(parseYamlStream(expectedText, example.expected)));
    });
  });
});
