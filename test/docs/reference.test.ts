// docs/reference/<kind>.md: generated from the XRDs by scripts/reference-docs.mjs
// (`make docs`). Regenerated here and compared byte for byte, so a page can't
// drift from its schema; and read independently of the generator, so a page
// that leaves out a field, a default, an enum value or a rule's message fails
// even if it is "current".

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, celRules, loadXrd, xrdSchema, type SchemaNode } from '#testing';

const REFERENCE = join(REPO_ROOT, 'docs', 'reference');
const PAGES = {
  'modelcache.md': 'package/modelcaches/definition.yaml',
  'modelcachehydration.md': 'package/modelcachehydrations/definition.yaml',
  'modelcacheshard.md': 'package/modelcacheshards/definition.yaml',
  'modelreplica.md': 'package/modelreplicas/definition.yaml',
} as const;

/** Pages written by hand, each checked against its schema by its own test (settings.test.ts: the function input). */
const HAND_WRITTEN: readonly string[] = ['hydrationsettings.md'];

function generator(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['scripts/reference-docs.mjs', ...args], { cwd: REPO_ROOT, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every field path below spec and status, the way the pages write them. */
function fieldPaths(schema: SchemaNode, path: string): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const at = path === '' ? name : `${path}.${name}`;
    if (path !== '') out.push(at);
    out.push(...fieldPaths(child, at));
  }
  if (schema.items?.properties) {
    for (const [name, child] of Object.entries(schema.items.properties))
      out.push(`${path}[].${name}`, ...fieldPaths(child, `${path}[].${name}`));
  }
  return out.filter((p) => p.startsWith('spec.') || p.startsWith('status.'));
}

function walk(schema: SchemaNode, visit: (node: SchemaNode) => void): void {
  visit(schema);
  for (const child of Object.values(schema.properties ?? {})) walk(child, visit);
  if (schema.items) walk(schema.items, visit);
  if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, visit);
}

describe('docs/reference', () => {
  it('holds exactly the pages the generator writes, each as it writes it now', () => {
    const out = mkdtempSync(join(tmpdir(), 'reference-'));
    const run = generator('--out', out);
    expect(run.code, run.stderr).toBe(0);
    expect(
      readdirSync(REFERENCE)
        .filter((page) => !HAND_WRITTEN.includes(page))
        .sort(),
    ).toEqual(readdirSync(out).sort());
    for (const page of readdirSync(out)) {
      expect(readFileSync(join(REFERENCE, page), 'utf8'), `docs/reference/${page} is stale: run \`make docs\``).toBe(
        readFileSync(join(out, page), 'utf8'),
      );
    }
    expect(Object.keys(PAGES).sort()).toEqual(readdirSync(out).sort());
  });

  it('--check passes on the pages as they are, and names a page that is not', () => {
    expect(generator('--check').code).toBe(0);
    const out = mkdtempSync(join(tmpdir(), 'reference-'));
    cpSync(REFERENCE, out, { recursive: true });
    writeFileSync(join(out, 'modelcache.md'), `${readFileSync(join(out, 'modelcache.md'), 'utf8')}\nAn edit by hand.\n`);
    const run = generator('--check', '--out', out);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/modelcache\.md is stale or missing: run `make docs`/);
    expect(run.stderr).not.toMatch(/modelreplica\.md/);
  });

  describe.each(Object.entries(PAGES))('%s', (page, definition) => {
    const text = readFileSync(join(REFERENCE, page), 'utf8');
    const schema = xrdSchema(loadXrd(definition));

    it('names its XRD and its kind', () => {
      expect(text).toContain(definition);
      expect(text).toContain(`# ${loadXrd(definition).spec.names.kind}\n`);
    });

    it('has a row for every field of spec and status', () => {
      const paths = fieldPaths(schema, '');
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) expect(text, path).toMatch(new RegExp(`^\\| \`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` +\\|`, 'm'));
    });

    it("shows every description, default and enum value, and every rule's message", () => {
      const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().replaceAll('|', '\\|');
      walk(schema, (node) => {
        if (node.default !== undefined)
          expect(text).toContain(`\`${typeof node.default === 'string' ? node.default : JSON.stringify(node.default)}\``);
        for (const value of node.enum ?? []) expect(text).toContain(`\`${String(value)}\``);
        const description = (node as SchemaNode & { description?: string }).description;
        if (description) expect(text).toContain(oneLine(description));
      });
      const rules = celRules(schema);
      for (const rule of rules) expect(text, rule.rule).toContain(oneLine(rule.message ?? ''));
      expect(text.match(/^\| `[^`]*` +\| (always|on update) +\|/gm) ?? []).toHaveLength(rules.length);
    });
  });
});
