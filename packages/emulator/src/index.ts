/**
 * The local service: `startEmulator()` runs the REST v2 emulator in-process (tests, the daemon's
 * `baseUrl: embedded`); `gridsync emulator` runs it as a process.
 */
import { EmulatorConfigError } from './config-error.js';
import { EmulatorStore } from './store.js';
import { DEFAULT_ROOT_KEY, applyRootKey, applySeed, defaultSeed, loadSeedFile, type SeedFixture } from './seed.js';
import { EmulatorServer, isLoopback, type RateLimit, type RequestRecord } from './server.js';
import { FaultInjector, type FaultConfigInput } from './faults.js';
import type { EmulatorSettings, World } from './context.js';
import { storeBuffer } from './content.js';
import { resumeAcknowledgments } from './parcels.js';

export type { SeedFixture } from './seed.js';
export type { FaultConfigInput, FaultRule } from './faults.js';
export type { RequestRecord } from './server.js';
export { adminAccess } from './server.js';
export { EmulatorConfigError } from './config-error.js';

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** 0 = a free port. */
  readonly port?: number;
  /** SQLite file: state survives restarts. In memory when omitted. */
  readonly dataFile?: string;
  /** A fixture, or the path of a YAML fixture; the default seed when omitted. Applied to an empty store only. */
  readonly seed?: SeedFixture | string;
  /** API key of the seeded Root user. */
  readonly rootKey?: string;
  /** The /_emulator routes (from loopback only, unless remoteAdmin). Default true. */
  readonly admin?: boolean;
  /**
   * Listen on an address other than loopback. Required for such a `host`, together with a rootKey
   * that is not the default one: the demo keys and the admin routes must not be exposed by accident.
   */
  readonly expose?: boolean;
  /** Admin routes from other hosts too, with the Root key as X-API-Key (needs a non-default rootKey). */
  readonly remoteAdmin?: boolean;
  /** Unexpected errors of request handlers and background work; default: written to stderr. */
  readonly onError?: (err: unknown, context: string) => void;
  readonly faults?: FaultConfigInput;
  readonly rateLimit?: RateLimit;
  readonly settings?: Partial<EmulatorSettings>;
  readonly now?: () => number;
}

export interface InjectInput {
  readonly mailboxId: number;
  readonly fileName: string;
  readonly content: Buffer;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
}

export interface Emulator {
  readonly url: string;
  inject(p: InjectInput): Promise<number>;
  requests(): RequestRecord[];
  setFaults(cfg: FaultConfigInput): void;
  faultCounts(): Record<string, number>;
  close(): Promise<void>;
}

const DEFAULT_SETTINGS: EmulatorSettings = {
  tokenLifetimeMs: 60 * 60_000,
  maxUploadBytes: 1024 * 1024 * 1024,
  legacyDownloadMode: false,
  redeliverAfterMs: 10 * 60_000,
  acknowledgeDelayMs: 200,
  callbackRetryDelaysMs: [1000, 5000, 25_000],
};

const reportToStderr = (err: unknown, context: string): void => {
  process.stderr.write(`gridsync emulator: unexpected error in ${context}: ${err instanceof Error ? err.message : String(err)}\n`);
};

/** Exposure needs an explicit yes and a Root key nobody can read in the docs. */
export function checkExposure(options: EmulatorOptions): void {
  const host = options.host ?? '127.0.0.1';
  const strongKey = options.rootKey !== undefined && options.rootKey !== DEFAULT_ROOT_KEY && options.rootKey.length >= 16;
  if (!isLoopback(host) && host !== 'localhost') {
    if (!options.expose)
      throw new EmulatorConfigError(
        `host ${host} is not loopback: exposing the emulator (with its demo keys) needs the explicit expose option (--expose)`,
      );
    if (!strongKey)
      throw new EmulatorConfigError(`host ${host} is not loopback: set a Root key of at least 16 characters that is not the default one`);
  }
  if (options.remoteAdmin && !strongKey)
    throw new EmulatorConfigError('remote admin routes need a Root key of at least 16 characters that is not the default one');
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  checkExposure(options);
  const now = options.now ?? Date.now;
  const onError = options.onError ?? reportToStderr;
  const store = new EmulatorStore(options.dataFile);
  const timers = new Set<NodeJS.Timeout>();
  const world: World = {
    store,
    settings: { ...DEFAULT_SETTINGS, ...options.settings },
    now,
    faults: new FaultInjector(now),
    later(fn, delayMs) {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!store.db.open) return;
        // Background work (acknowledgments, callback deliveries) must never take the process down.
        try {
          const r = fn();
          if (r instanceof Promise) r.catch((err: unknown) => onError(err, 'background task'));
        } catch (err) {
          onError(err, 'background task');
        }
      }, delayMs);
      timers.add(t);
    },
  };
  try {
    if (store.isEmpty) {
      const seed = typeof options.seed === 'string' ? loadSeedFile(options.seed) : (options.seed ?? defaultSeed());
      const source = typeof options.seed === 'string' ? options.seed : options.seed ? undefined : '(default)';
      applySeed(store, seed, new Date(now()).toISOString(), options.rootKey, source);
    } else if (options.rootKey) {
      applyRootKey(store, options.rootKey, options.dataFile ?? '(in memory)');
    }
  } catch (err) {
    store.close();
    throw err;
  }
  resumeAcknowledgments(world);
  const server = new EmulatorServer(world, {
    admin: options.admin ?? true,
    remoteAdmin: options.remoteAdmin ?? false,
    onError,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  });
  if (options.faults) server.faults.set(options.faults);
  const url = await server.listen(options.host ?? '127.0.0.1', options.port ?? 0);
  let closing: Promise<void> | undefined;
  return {
    url,
    inject: async (p) => {
      const content = storeBuffer(world, p.content);
      return server.inject({ mailboxId: p.mailboxId, fileName: p.fileName, gridIdFrom: p.gridIdFrom, gridIdTo: p.gridIdTo }, content);
    },
    requests: () => server.requests(),
    setFaults: (cfg) => server.faults.set(cfg),
    faultCounts: () => ({ ...server.faults.injected }),
    close: () => {
      closing ??= (async () => {
        for (const t of timers) clearTimeout(t);
        await server.close();
        store.close();
      })();
      return closing;
    },
  };
}
