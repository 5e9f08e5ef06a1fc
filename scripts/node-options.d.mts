/** A function's Node flags, from functions/<name>/node-options in the repository at `root` (none without the file). */
export function nodeOptions(fn: string, root: string): string[];
/** A function's GLIBC_TUNABLES value, from functions/<name>/glibc-tunables (its lines joined with ':'; '' without the file). */
export function glibcTunables(fn: string, root: string): string;
