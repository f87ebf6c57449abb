import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    setupFiles: ['test/helpers/leakCheck.ts'],
    globalSetup: ['test/helpers/globalSetup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // 2 cores: more workers only contend with the processes the suites start.
    maxWorkers: 2,
  },
});
