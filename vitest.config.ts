import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds for a hang, not for speed: with two `npm test` runs at once on 2 cores (issue 21's check)
    // a test server's start in a beforeAll took over 30 s, and a sequential comparison of ~1,400
    // requests over 20 s. No test asserts how fast anything is (benchmarks do, under scripts/).
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // dist/ up to date before the tests that spawn the built CLI or server (test/setup/build.ts)
    globalSetup: ['test/setup/build.ts'],
  },
});
