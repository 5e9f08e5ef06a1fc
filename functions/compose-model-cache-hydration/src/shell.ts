// Quoting for the one place a user string reaches a shell: the hydration Job's
// command line.

/**
 * One shell word holding exactly `value`: single quotes make every character
 * literal (`$`, backquotes, `;`, newlines, globs), and a single quote itself
 * is closed, escaped and reopened. Always quoted, so no value is special.
 */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
