// The YAML excerpts of a Markdown page that a test produces: each is a fenced
// yaml block right after a marker `<!-- excerpt: <name> -->`. The test records
// the value of each name; the page must show exactly those values (compared
// as data, so Prettier's way of writing YAML doesn't matter), one block per
// name, no block without a value. With UPDATE_DOCS=1 the blocks are rewritten
// from the values instead (`make docs`), and the page is formatted.

import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { parse, stringify } from 'yaml';

const BLOCK = /<!-- excerpt: ([a-z0-9-]+) -->(\s*)```yaml\n([\s\S]*?)```/g;

export interface ExcerptBlock {
  name: string;
  text: string;
}

export function excerptBlocks(markdown: string): ExcerptBlock[] {
  return [...markdown.matchAll(BLOCK)].map((match) => ({ name: match[1]!, text: match[3]! }));
}

/** What is wrong between a page's blocks and the recorded values, one line each (empty: the page is current). */
export function excerptProblems(markdown: string, values: ReadonlyMap<string, unknown>): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const block of excerptBlocks(markdown)) {
    if (seen.has(block.name)) problems.push(`excerpt ${block.name} appears more than once`);
    seen.add(block.name);
    if (!values.has(block.name)) {
      problems.push(`excerpt ${block.name} is on the page, but the test records no value for it`);
      continue;
    }
    let shown: unknown;
    try {
      shown = parse(block.text) as unknown;
    } catch (error) {
      problems.push(`excerpt ${block.name} is not YAML: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (JSON.stringify(shown) !== JSON.stringify(values.get(block.name))) {
      problems.push(
        `excerpt ${block.name} differs from what the test produced now:\n${stringify(values.get(block.name), { lineWidth: 0 })}`,
      );
    }
  }
  for (const name of values.keys()) {
    if (!seen.has(name))
      problems.push(
        `excerpt ${name} is recorded by the test, but the page has no block for it (add <!-- excerpt: ${name} --> and a yaml block)`,
      );
  }
  return problems;
}

/** The page with every block rewritten from the values, formatted as Prettier would. */
export async function withExcerpts(markdown: string, values: ReadonlyMap<string, unknown>, file: string): Promise<string> {
  const replaced = markdown.replace(BLOCK, (whole, name: string, space: string) =>
    values.has(name) ? `<!-- excerpt: ${name} -->${space}\`\`\`yaml\n${stringify(values.get(name), { lineWidth: 0 })}\`\`\`` : whole,
  );
  const options = (await resolveConfig(file)) ?? {};
  return format(replaced, { ...options, filepath: file });
}

export const UPDATE_DOCS = process.env['UPDATE_DOCS'] === '1';

/** Check the page against the values, or (UPDATE_DOCS=1) rewrite its blocks; returns the problems left. */
export async function checkOrUpdate(file: string, values: ReadonlyMap<string, unknown>): Promise<string[]> {
  const markdown = readFileSync(file, 'utf8');
  if (UPDATE_DOCS) {
    const updated = await withExcerpts(markdown, values, file);
    if (updated !== markdown) writeFileSync(file, updated);
    return excerptProblems(updated, values);
  }
  return excerptProblems(markdown, values);
}
