// plane.ts statusSays: the stories read a state only once both of Crossplane's
// status writes say it (the function's status, then the reconcile's
// conditions). The first case is what CI read on 2026-12-07 between the two.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#lib';
import { statusSays } from './plane.js';

const xr = (phase: string | undefined, reasons: Record<string, string>): JsonObject => ({
  status: {
    ...(phase === undefined ? {} : { phase }),
    conditions: Object.entries(reasons).map(([type, reason]) => ({ type, reason, status: 'False' })),
  },
});

const FAILED = { phase: 'Failed', reasons: { ArtifactReady: 'HydrationFailed' } };
const HYDRATING = { reasons: { ArtifactReady: 'Hydrating', Ready: 'Creating' } };

describe('statusSays', () => {
  it.each([
    ['the phase written, the conditions not yet', xr('Failed', { ArtifactReady: 'Hydrating' }), FAILED, false],
    ['both writes', xr('Failed', { ArtifactReady: 'HydrationFailed' }), FAILED, true],
    ['the conditions without the phase', xr('Hydrating', { ArtifactReady: 'HydrationFailed' }), FAILED, false],
    ['a condition missing', xr(undefined, { ArtifactReady: 'Hydrating' }), HYDRATING, false],
    ['every named reason, no phase asked', xr('Hydrating', { ArtifactReady: 'Hydrating', Ready: 'Creating' }), HYDRATING, true],
    ['no object', undefined, FAILED, false],
  ] as const)('%s', (_, object, state, says) => {
    expect(statusSays(object, state)).toBe(says);
  });
});
