import { defineConfig } from 'vitest/config';

// Explicit config (bullmq style): no globals, fresh resources per test, generous timeouts for
// tests that spawn real child processes and real HTTP servers on 127.0.0.1.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globals: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
    // A TMPDIR of its own for the run, removed at the end (test/helpers/tmpdir-setup.ts).
    globalSetup: ['test/helpers/tmpdir-setup.ts'],
  },
});
