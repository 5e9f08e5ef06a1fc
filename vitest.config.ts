import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['functions/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
  },
});
