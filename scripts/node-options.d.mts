/** A function's Node flags, from functions/<name>/node-options (none without one). */
export function nodeOptions(fn: string, root?: string): string[];
