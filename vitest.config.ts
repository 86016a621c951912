import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // dist/ up to date before the tests that spawn the built CLI or server (test/setup/build.ts)
    globalSetup: ['test/setup/build.ts'],
  },
});
