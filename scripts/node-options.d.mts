/** A function's Node flags, from functions/<name>/node-options under `root` (this repository by default; none without the file). */
export function nodeOptions(fn: string, root?: string): string[];
