// YAML as `crossplane render` reads and writes it.
//
// Reading: render splits a file into documents the way Kubernetes'
// YAMLReader does (a line starting with `---`), and decodes each with a YAML
// 1.1 parser (go-yaml v2 under sigs.k8s.io/yaml), so `yes`/`on` are booleans,
// but a timestamp stays a string (it lands in an untyped map). A document that
// holds only comments or blank lines is still a document to render, and it
// refuses it; so do we, saying why.
//
// Writing: render encodes each object as JSON first (Go sorts map keys) and
// converts that to YAML, so keys come out sorted at every level, and each
// document is preceded by `---`.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments, stringify, type DocumentOptions, type ParseOptions, type SchemaOptions, type ToStringOptions } from 'yaml';
import { isObject, type JsonObject } from '#lib';

export class LoadError extends Error {
  override name = 'LoadError';
}

const TIMESTAMP_TAG = 'tag:yaml.org,2002:timestamp';

const READ_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  // Go decodes a timestamp into an untyped map as its string.
  customTags: (tags) => tags.filter((tag) => (typeof tag === 'string' ? tag !== 'timestamp' : tag.tag !== TIMESTAMP_TAG)),
};

const WRITE_OPTIONS: DocumentOptions & SchemaOptions & ToStringOptions = {
  // 1.1 rules quote every string a YAML 1.1 reader would take for something else ("yes", "on", a timestamp).
  version: '1.1',
  sortMapEntries: true,
  lineWidth: 0,
  // Lists flush with their key, as Go's YAML (and kubectl) print them.
  indentSeq: false,
};

/** Split a stream into documents exactly where Kubernetes' YAMLReader does. */
export function splitYamlStream(text: string, file: string): string[] {
  const documents: string[] = [];
  let buffer = '';
  for (const line of text.split(/(?<=\n)/)) {
    if (line.startsWith('---')) {
      const rest = line.slice(3).trim();
      if (rest.length > 0 && !rest.startsWith('#')) throw new LoadError(`${file}: invalid YAML document separator: ${rest}`);
      if (buffer.length > 0) documents.push(buffer);
      buffer = '';
      continue;
    }
    buffer += line;
  }
  if (buffer.length > 0) documents.push(buffer);
  return documents;
}

function parseOne(text: string, where: string): unknown {
  const docs = parseAllDocuments(text, READ_OPTIONS);
  if (!Array.isArray(docs)) return null;
  const [doc] = docs;
  if (!doc) return null;
  if (doc.errors.length > 0) throw new LoadError(`${where}: ${doc.errors.map((e) => e.message).join('; ')}`);
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

/** The objects of a YAML stream, one per document; an empty document is refused, as render refuses it. */
export function parseYamlStream(text: string, file: string): JsonObject[] {
  return splitYamlStream(text, file).map((doc, index) => {
    const value = parseOne(doc, `${file} (document ${index + 1})`);
    if (value === null || value === undefined) {
      throw new LoadError(
        `${file}: document ${index + 1} is empty (only comments or blank lines); crossplane render refuses it ` +
          `("Object 'Kind' is missing in 'null'"): remove the extra "---"`,
      );
    }
    if (!isObject(value)) throw new LoadError(`${file}: document ${index + 1} is not a mapping`);
    return value;
  });
}

/** The first document of a file, as Go's yaml.Unmarshal reads a single object (the XR, the Composition). */
export function readYamlObject(file: string): JsonObject {
  const value = parseOne(readText(file), file);
  if (!isObject(value)) throw new LoadError(`${file}: expected one YAML object`);
  return value;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new LoadError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/**
 * The documents of a file, or of every .yaml/.yml file directly in a
 * directory (sorted by name, subdirectories ignored), as render's -o and -e read them.
 */
export function readYamlStream(fileOrDir: string): JsonObject[] {
  let isDir: boolean;
  try {
    isDir = statSync(fileOrDir).isDirectory();
  } catch (error) {
    throw new LoadError(`cannot open ${fileOrDir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!isDir) return parseYamlStream(readText(fileOrDir), fileOrDir);
  const files = readdirSync(fileOrDir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && ['.yaml', '.yml'].includes(extname(entry.name)))
    .map((entry) => entry.name)
    .sort();
  if (files.length === 0) throw new LoadError(`no YAML files found in ${fileOrDir} (.yaml or .yml)`);
  return files.flatMap((name) => parseYamlStream(readText(join(fileOrDir, name)), join(fileOrDir, name)));
}

/** A YAML stream as render prints it: `---` before each document, keys sorted. */
export function formatYamlStream(documents: readonly JsonObject[]): string {
  return documents.map((doc) => `---\n${stringify(doc, WRITE_OPTIONS)}`).join('');
}
