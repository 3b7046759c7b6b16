import path from 'node:path';
import { defineConfig } from 'vitest/config';

const pkg = (p: string): string => path.resolve(import.meta.dirname, 'packages', p);

// Explicit config (bullmq style): no globals, fresh resources per test, generous timeouts for
// tests that spawn real child processes and real HTTP servers on 127.0.0.1.
export default defineConfig({
  // The two workspace packages from their sources, as the typecheck sees them (tsconfig.json
  // paths): a test never runs a stale build of them. Child processes run the built dist/.
  resolve: {
    alias: [
      { find: /^@gridsync\/protocol\/(.+)$/, replacement: `${pkg('protocol/src')}/$1/index.ts` },
      { find: /^@gridsync\/emulator$/, replacement: pkg('emulator/src/index.ts') },
    ],
  },
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
