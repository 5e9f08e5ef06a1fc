/** A function's Node flags, from functions/<name>/node-options in the repository at `root` (none without the file). */
export function nodeOptions(fn: string, root: string): string[];
