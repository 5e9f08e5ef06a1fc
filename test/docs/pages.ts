// The project's Markdown pages as the doc tests read them: which pages there
// are, their fenced blocks, the commands of their sh blocks, the make targets
// they tell a person to run, their relative links, and the anchors their
// headings make.

import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '#testing';

/** Every Markdown page a reader is sent to: the two at the root, and everything under docs/. */
export function docPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? under(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', 'BENCHMARKS.md', ...under('docs').sort()];
}

export function readPage(page: string): string {
  return readFileSync(join(REPO_ROOT, page), 'utf8');
}

/** The text with its fenced blocks blanked out (their lines kept, so line numbers hold). */
export function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The fenced blocks of a language, each as its text. */
export function fencedBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((match) => match[1]!);
}

/** Each command of the sh blocks, continuation lines joined, comments dropped. */
export function shellCommands(text: string): string[] {
  return fencedBlocks(text, 'sh').flatMap((block) =>
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}

/** Every make target a page tells a person to run: in code spans and in sh blocks. */
export function makeTargets(text: string): string[] {
  const found = new Set<string>();
  for (const match of prose(text).matchAll(/`(?:[A-Z_]+=\S+ )*make ([a-z][a-z0-9-]*)/g)) found.add(match[1]!);
  for (const command of shellCommands(text)) {
    for (const match of command.matchAll(/(?:^|&&\s*)(?:[A-Z_]+=\S+ )*make ([a-z][a-z0-9-]*)/g)) found.add(match[1]!);
  }
  return [...found].sort();
}

export interface Link {
  page: string;
  line: number;
  /** The link as written. */
  target: string;
  /** The file it reaches, from the repository's root ('' for a link within its own page). */
  file: string;
  /** The heading it names (after `#`), if any. */
  anchor?: string;
}

/** The relative links of a page's prose (not its code): inline links and images; web and mail links left out. */
export function relativeLinks(page: string, text: string): Link[] {
  const out: Link[] = [];
  prose(text)
    .split('\n')
    .forEach((line, index) => {
      // Code spans may hold brackets that are not links.
      const bare = line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
      for (const match of bare.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path = '', anchor] = target.split('#', 2);
        const file = path === '' ? '' : relative(REPO_ROOT, join(REPO_ROOT, page, '..', path));
        out.push({ page, line: index + 1, target, file, ...(anchor === undefined ? {} : { anchor }) });
      }
    });
  return out;
}

/** The anchors a page's headings make, as GitHub makes them (lower case, punctuation dropped, spaces to dashes, repeats numbered). */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const words = match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase();
    const base = words.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
