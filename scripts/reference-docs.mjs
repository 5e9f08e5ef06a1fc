// `make docs` (part): one reference page per XR, docs/reference/<kind>.md,
// generated from the XRD in package/<plural>/definition.yaml (and the
// Composition beside it), so a page can't say anything its schema doesn't:
// every field with its type, whether it is required, its default, its
// constraints and its description; every CEL validation rule with its
// message; the printer columns. The pages are formatted with the
// repository's Prettier settings, so `prettier --check` and a regeneration
// agree byte for byte (test/docs/reference.test.ts regenerates and compares).
//
//   node scripts/reference-docs.mjs                 write docs/reference/*.md
//   node scripts/reference-docs.mjs --check         exit 1 naming every page that is stale or missing
//   node scripts/reference-docs.mjs --out <dir>     write (or --check) there instead

import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..');
const PACKAGE_DIR = join(ROOT, 'package');
const DEFAULT_OUT = join(ROOT, 'docs', 'reference');

/** Every document of a YAML file, as plain data. */
function readDocuments(file) {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS())
    .filter((doc) => doc !== null && doc !== undefined);
}

/** One line: folded and multi-line YAML strings read as prose. */
function oneLine(text) {
  return String(text).replace(/\s+/g, ' ').trim();
}

/** A table cell: pipes escaped (in code spans too, as GitHub's tables need). */
function cell(text) {
  return oneLine(text).replaceAll('|', '\\|');
}

function code(value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `\`${text}\``;
}

/** The type as a person reads it: string, integer, list of object, map of string… */
function typeOf(schema) {
  if (schema.type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'any'}`;
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object') return `map of ${typeOf(schema.additionalProperties)}`;
  if (schema.type === 'object' && schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return 'object (any fields)';
  return schema.type ?? 'any';
}

function range(min, max, unit) {
  if (min !== undefined && max !== undefined) return `${min} to ${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  return `at most ${max}${unit}`;
}

/** The schema's own constraints, in words. */
function constraintsOf(schema) {
  const out = [];
  if (schema.enum) out.push(`one of ${schema.enum.map(code).join(', ')}`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) out.push(range(schema.minimum, schema.maximum, ''));
  if (schema.minLength !== undefined || schema.maxLength !== undefined) out.push(range(schema.minLength, schema.maxLength, ' characters'));
  if (schema.pattern !== undefined) out.push(`matches ${code(schema.pattern)}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined) out.push(range(schema.minItems, schema.maxItems, ' items'));
  if (schema.minProperties !== undefined || schema.maxProperties !== undefined)
    out.push(range(schema.minProperties, schema.maxProperties, ' entries'));
  if (schema['x-kubernetes-list-type'] === 'map')
    out.push(`one item per ${(schema['x-kubernetes-list-map-keys'] ?? []).map(code).join(', ')}`);
  if (schema['x-kubernetes-list-type'] === 'set') out.push('items unique');
  if (schema['x-kubernetes-list-type'] === 'atomic') out.push('replaced as a whole');
  // The constraints of a scalar list item or map value belong to the field that holds them.
  const element =
    schema.type === 'array' ? schema.items : typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  if (element && element.type !== 'object' && element.type !== 'array') {
    const inner = constraintsOf(element);
    if (inner.length > 0) out.push(`${schema.type === 'array' ? 'each item' : 'each value'}: ${inner.join(', ')}`);
  }
  if ((schema['x-kubernetes-validations'] ?? []).length > 0) out.push('see the validation rules');
  return out;
}

/**
 * Every field below `schema`, depth first in schema order: path, type,
 * required, default, constraints, description. List items and map values
 * that are objects are walked as `path[]` and `path.*`.
 */
function fields(schema, path, required = false) {
  const rows = [];
  if (path !== '') {
    rows.push({
      path,
      type: typeOf(schema),
      required,
      default: schema.default,
      constraints: constraintsOf(schema),
      description: schema.description ?? '',
    });
  }
  const requiredHere = new Set(schema.required ?? []);
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    rows.push(...fields(child, path === '' ? name : `${path}.${name}`, requiredHere.has(name)));
  }
  if (schema.type === 'array' && schema.items?.properties) {
    const items = schema.items;
    const requiredInItem = new Set(items.required ?? []);
    for (const [name, child] of Object.entries(items.properties))
      rows.push(...fields(child, `${path}[].${name}`, requiredInItem.has(name)));
  }
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.properties) {
    rows.push(...fields({ ...schema.additionalProperties, type: undefined, description: undefined }, `${path}.*`).slice(1));
  }
  return rows;
}

/** Every CEL rule, where it sits (the path of the field it validates). */
function rules(schema, path) {
  const out = (schema['x-kubernetes-validations'] ?? []).map((rule) => ({ path, ...rule }));
  for (const [name, child] of Object.entries(schema.properties ?? {})) out.push(...rules(child, path === '' ? name : `${path}.${name}`));
  if (schema.items) out.push(...rules(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') out.push(...rules(schema.additionalProperties, `${path}.*`));
  return out;
}

function fieldTable(rows) {
  const lines = ['| Field | Type | Required | Default | Constraints | Description |', '| --- | --- | --- | --- | --- | --- |'];
  for (const row of rows) {
    lines.push(
      `| ${code(row.path)} | ${cell(row.type)} | ${row.required ? 'yes' : ''} | ${row.default === undefined ? '' : cell(code(row.default))} | ${cell(row.constraints.join('; '))} | ${cell(row.description)} |`,
    );
  }
  return lines.join('\n');
}

/** The Markdown page of one XRD (before formatting). */
export function referencePage(xrd, composition, source) {
  const { group, names, scope } = xrd.spec;
  const lines = [];
  lines.push(`<!-- Generated by \`make docs\` from ${source}: edit the XRD, not this page. -->`, '');
  lines.push(`# ${names.kind}`, '');
  for (const version of xrd.spec.versions) {
    const schema = version.schema.openAPIV3Schema;
    const facts = [`\`${group}/${version.name}\``, scope === 'Namespaced' ? 'namespaced' : 'cluster-scoped'];
    if (names.shortNames?.length)
      facts.push(`short name${names.shortNames.length > 1 ? 's' : ''} ${names.shortNames.map(code).join(', ')}`);
    if (names.categories?.length) facts.push(`categories ${names.categories.map(code).join(', ')}`);
    lines.push(facts.join(' · '), '');
    if (schema.description) lines.push(oneLine(schema.description), '');
    if (composition) {
      const steps = (composition.spec?.pipeline ?? []).map(
        (step) => `step ${code(step.step)} runs the Function ${code(step.functionRef?.name)}`,
      );
      lines.push(`Composed by the Composition ${code(composition.metadata?.name)}: ${steps.join('; ')}.`, '');
    }

    lines.push('## Columns', '', '`kubectl get` shows these, then the columns Crossplane adds (SYNCED, READY, COMPOSITION, AGE).', '');
    lines.push('| Column | Type | Value | Description |', '| --- | --- | --- | --- |');
    for (const column of version.additionalPrinterColumns ?? []) {
      lines.push(`| ${cell(column.name)} | ${cell(column.type)} | ${cell(code(column.jsonPath))} | ${cell(column.description ?? '')} |`);
    }
    lines.push('');

    for (const part of ['spec', 'status']) {
      const partSchema = schema.properties?.[part];
      lines.push(`## ${part === 'spec' ? 'Spec' : 'Status'}`, '');
      if (!partSchema) {
        lines.push(`This XRD declares no \`${part}\`.`, '');
        continue;
      }
      const rows = fields(partSchema, part, (schema.required ?? []).includes(part)).slice(1);
      if (partSchema.description) lines.push(oneLine(partSchema.description), '');
      if (rows.length === 0) {
        lines.push(
          part === 'status'
            ? 'No fields of its own: Crossplane writes the conditions (`status.conditions`) and its own bookkeeping.'
            : 'No fields.',
          '',
        );
        continue;
      }
      lines.push(fieldTable(rows), '');
      if (part === 'spec' && !JSON.stringify(partSchema).includes('x-kubernetes-preserve-unknown-fields')) {
        lines.push(
          'A field this table does not list is an unknown field: `crossplane beta validate` reports it (`unknown field`), `kubectl` refuses it (`strict decoding error`, with its default `--validate=strict`), and a client that skips field validation has it pruned by the API server: a misspelled field never reaches a function.',
          '',
        );
      }
    }

    const all = rules(schema, '');
    lines.push('## Validation rules', '');
    if (all.length === 0) {
      lines.push('None beyond the schema above.', '');
      continue;
    }
    lines.push(
      'The API server evaluates these CEL rules when the object is created and on every update; a rule that compares with `oldSelf` applies to updates only. The message is what `kubectl` shows when a rule refuses an object.',
      '',
    );
    lines.push('| Field | When | Message | Rule |', '| --- | --- | --- | --- |');
    for (const rule of all) {
      const when = /\boldSelf\b/.test(rule.rule) ? 'on update' : 'always';
      lines.push(`| ${code(rule.path || '(root)')} | ${when} | ${cell(rule.message ?? '')} | ${cell(code(oneLine(rule.rule)))} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Every XRD under package/, with its Composition and the page it gets: [{ file, text }], text formatted. */
export async function referencePages(outDir = DEFAULT_OUT) {
  const pages = [];
  for (const plural of readdirSync(PACKAGE_DIR).sort()) {
    const definition = join(PACKAGE_DIR, plural, 'definition.yaml');
    if (!existsSync(definition)) continue;
    const [xrd] = readDocuments(definition);
    const compositionFile = join(PACKAGE_DIR, plural, 'composition.yaml');
    const composition = existsSync(compositionFile) ? readDocuments(compositionFile).find((doc) => doc.kind === 'Composition') : undefined;
    const file = join(outDir, `${xrd.spec.names.kind.toLowerCase()}.md`);
    const options = (await resolveConfig(file)) ?? {};
    const text = await format(referencePage(xrd, composition, relative(ROOT, definition)), { ...options, filepath: file });
    pages.push({ file, text });
  }
  return pages;
}

async function main(argv) {
  const { values } = parseArgs({ args: argv, options: { check: { type: 'boolean' }, out: { type: 'string' } } });
  const outDir = resolve(values.out ?? DEFAULT_OUT);
  const pages = await referencePages(outDir);
  if (values.check) {
    const stale = pages.filter(({ file, text }) => !existsSync(file) || readFileSync(file, 'utf8') !== text);
    for (const { file } of stale) console.error(`${relative(ROOT, file)} is stale or missing: run \`make docs\``);
    return stale.length === 0 ? 0 : 1;
  }
  mkdirSync(outDir, { recursive: true });
  for (const { file, text } of pages) {
    writeFileSync(file, text);
    console.log(`wrote ${relative(process.cwd(), file)}`);
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  process.exitCode = await main(process.argv.slice(2));
}
