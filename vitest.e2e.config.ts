import { defineConfig } from 'vitest/config';

// `make e2e`: the lifecycle on the local control plane `make up` starts. Its
// steps run in order, one file at a time, and wait on real controllers.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    // The upgrade runs on a plane started on the previous release, phase by
    // phase (`make e2e-upgrade`, test/e2e/upgrade/run.sh), never in `make e2e`.
    exclude: process.env['UPGRADE_PHASE'] ? [] : ['test/e2e/upgrade/**'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // make e2e's second lane writes its own (test/e2e/run.sh).
    reporters: ['default', ['json', { outputFile: process.env['E2E_REPORT'] ?? '.test-results/e2e.json' }]],
  },
});
