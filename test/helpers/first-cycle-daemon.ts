// A daemon whose scheduler never polls again, so that only the start's cycle runs, and whose
// monotonic clock the test moves (/readyz's freshness window is measured on it): how a readiness
// test lets a minute pass in the middle of one long cycle without waiting for it.
import { parseConfig } from '../../src/config/index.js';
import { Daemon } from '../../src/daemon/index.js';
import type { Timers } from '../../src/daemon/scheduler.js';
import { recorder } from './log-recorder.js';

/** The scheduler's next poll never comes. */
export const stillTimers: Timers = { set: () => undefined, clear: () => undefined };

export interface FirstCycleDaemon {
  readonly daemon: Daemon;
  /** Moves the daemon's monotonic clock forward. */
  advance(ms: number): void;
}

/** Opens (not starts) the daemon of `config`, relative to `dir`, with `poll: 1s` (a one-minute window) and a 1 s stop. */
export async function firstCycleDaemon(dir: string, config: Record<string, unknown>): Promise<FirstCycleDaemon> {
  const loaded = parseConfig(
    { stateDir: 'state', schedule: { poll: '1s' }, shutdownTimeout: '1s', ...config },
    'first-cycle-test',
    {},
    dir,
  );
  let offset = 0;
  const daemon = await Daemon.open({
    loaded,
    logger: recorder(),
    waitForService: true,
    timers: stillTimers,
    monotonic: () => performance.now() + offset,
  });
  return { daemon, advance: (ms) => void (offset += ms) };
}
