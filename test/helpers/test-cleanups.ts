// Cleanups that belong to one test, for files whose tests run side by side (`describe.concurrent`):
// a file-wide list emptied in afterEach would let one test's end close another's servers and
// children while that one still runs.
import type { TestContext } from 'vitest';

export type Cleanups = (() => Promise<void> | void)[];

/** A list the test pushes its cleanups onto; they run in reverse when the test ends. */
export function cleanupsOf(ctx: TestContext): Cleanups {
  const cleanups: Cleanups = [];
  ctx.onTestFinished(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}
