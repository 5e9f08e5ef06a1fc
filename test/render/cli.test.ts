// Which command tree each CLI generation gets (test/render/cli.ts).

import { describe, expect, it } from 'vitest';
import { isSplitCli } from './cli.js';

describe('isSplitCli', () => {
  it.each([
    ['v2.2.1', false],
    ['v2.2.9', false],
    ['v2.0.0', false],
    ['v2.3.0', true],
    ['v2.5.0', true],
    ['v2.10.1', true],
    ['v3.0.0', true],
  ])('%s: %s', (version, split) => {
    expect(isSplitCli(version)).toBe(split);
  });

  it.each(['', 'v2', '2.3.0', 'latest'])('refuses "%s"', (version) => {
    expect(() => isSplitCli(version)).toThrow(/not a Crossplane CLI version/);
  });
});
