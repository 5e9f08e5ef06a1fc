// Reading render's inputs as render reads them: documents split where
// Kubernetes' YAMLReader splits them, YAML 1.1 scalars, files or directories.

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LoadError, loadFunctions, parseYamlStream, readYamlObject, readYamlStream, splitYamlStream } from './index.js';

describe('splitYamlStream', () => {
  it.each<[string, string, string[]]>([
    ['one document', 'a: 1\n', ['a: 1\n']],
    ['a leading separator', '---\na: 1\n', ['a: 1\n']],
    ['two documents', 'a: 1\n---\nb: 2\n', ['a: 1\n', 'b: 2\n']],
    ['a comment after the separator', 'a: 1\n--- # next\nb: 2\n', ['a: 1\n', 'b: 2\n']],
    ['a trailing separator', 'a: 1\n---\n', ['a: 1\n']],
    ['a comment block before the first separator', '# about\n---\na: 1\n', ['# about\n', 'a: 1\n']],
  ])('%s', (_case, text, want) => {
    expect(splitYamlStream(text, 'f.yaml')).toEqual(want);
  });

  it('refuses content on the separator line, as the YAMLReader does', () => {
    expect(() => splitYamlStream('a: 1\n--- b: 2\n', 'f.yaml')).toThrow('f.yaml: invalid YAML document separator: b: 2');
  });
});

describe('parseYamlStream', () => {
  it('refuses a document of only comments, naming it, where render fails obscurely', () => {
    expect(() => parseYamlStream('# about these objects\n---\na: 1\n', 'required.yaml')).toThrow(
      'required.yaml: document 1 is empty (only comments or blank lines)',
    );
  });

  it('reads YAML 1.1 as Go does: yes/on are booleans, a timestamp stays a string', () => {
    expect(parseYamlStream('a: yes\nb: on\nc: 2024-01-01T00:00:00Z\nd: "yes"\n', 'f.yaml')).toEqual([
      { a: true, b: true, c: '2024-01-01T00:00:00Z', d: 'yes' },
    ]);
  });

  it('refuses a document that is not a mapping', () => {
    expect(() => parseYamlStream('- a\n', 'f.yaml')).toThrow('f.yaml: document 1 is not a mapping');
  });

  it('reports a YAML syntax error with the file and document', () => {
    expect(() => parseYamlStream('a: 1\n---\nb: [\n', 'f.yaml')).toThrow(/^f\.yaml \(document 2\): /);
  });
});

describe('reading files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'render-load-'));
  writeFileSync(join(dir, 'b.yaml'), 'kind: B\n---\nkind: C\n');
  writeFileSync(join(dir, 'a.yml'), 'kind: A\n');
  writeFileSync(join(dir, 'notes.txt'), 'kind: Ignored\n');
  mkdirSync(join(dir, 'nested'));
  writeFileSync(join(dir, 'nested', 'z.yaml'), 'kind: Nested\n');
  const empty = mkdtempSync(join(tmpdir(), 'render-empty-'));

  it('reads a directory as render does: its .yaml and .yml files in name order, not subdirectories', () => {
    expect(readYamlStream(dir).map((doc) => doc['kind'])).toEqual(['A', 'B', 'C']);
  });

  it('reads a file', () => {
    expect(readYamlStream(join(dir, 'b.yaml'))).toEqual([{ kind: 'B' }, { kind: 'C' }]);
  });

  it('says so when a directory has no YAML', () => {
    expect(() => readYamlStream(empty)).toThrow(`no YAML files found in ${empty} (.yaml or .yml)`);
  });

  it('says so when a path does not exist', () => {
    expect(() => readYamlStream(join(dir, 'missing.yaml'))).toThrow(LoadError);
  });

  it("reads a single object from a file's first document, as Go's yaml.Unmarshal does", () => {
    expect(readYamlObject(join(dir, 'b.yaml'))).toEqual({ kind: 'B' });
  });

  it('reads Functions with their runtime and Development target, defaulting as render does', () => {
    writeFileSync(
      join(dir, 'functions.yaml'),
      [
        'apiVersion: pkg.crossplane.io/v1',
        'kind: Function',
        'metadata:',
        '  name: with-target',
        '  annotations:',
        '    render.crossplane.io/runtime: Development',
        '    render.crossplane.io/runtime-development-target: localhost:9444',
        'spec: {package: xpkg.example.org/with-target:v1}',
        '---',
        'apiVersion: pkg.crossplane.io/v1beta1',
        'kind: Function',
        'metadata:',
        '  name: defaults',
        '  annotations: {render.crossplane.io/runtime: Development}',
        '---',
        'apiVersion: pkg.crossplane.io/v1',
        'kind: Function',
        'metadata: {name: docker}',
        '',
      ].join('\n'),
    );
    expect(loadFunctions(join(dir, 'functions.yaml'))).toEqual([
      { name: 'with-target', runtime: 'Development', target: 'localhost:9444', package: 'xpkg.example.org/with-target:v1' },
      { name: 'defaults', runtime: 'Development', target: 'localhost:9443' },
      { name: 'docker', runtime: 'Docker', target: 'localhost:9443' },
    ]);
  });
});
