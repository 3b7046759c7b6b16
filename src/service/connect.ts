/**
 * The configured service, for the daemon and every command that talks to it: the embedded emulator
 * when `baseUrl: embedded` (loaded only then), and one client of the configured protocol with the
 * configured credentials, retries, timeouts, connections and limits. `close()` ends both.
 */
import path from 'node:path';
import { GridClient, SoapClient, type ClientLogger, type MailboxTransport, type RetryNotice } from '../api/index.js';
import type { Config } from '../config/index.js';

export interface ServiceOptions {
  /** Overrides the configured protocol (`gridsync call --soap`). */
  readonly protocol?: 'rest' | 'soap';
  /** Overrides of the configured timeouts and attempts (doctor asks once, with short timeouts). */
  readonly timeouts?: Partial<Config['api']['timeouts']>;
  readonly maxAttempts?: number;
  /** The embedded emulator's port: the configured one for the daemon; any free one (0) for a one-shot command. */
  readonly emulatorPort?: number;
  readonly logger?: ClientLogger;
  readonly onRateLimitPause?: (ms: number) => void;
  readonly onRetry?: (retry: RetryNotice) => void;
  /** Unexpected errors inside the embedded emulator (they never end the process). */
  readonly onEmulatorError?: (err: unknown, context: string) => void;
}

export interface ServiceConnection {
  /** The client the pipelines use. */
  readonly client: MailboxTransport;
  /** Exactly one of these is set, for the calls outside the pipelines' interface. */
  readonly rest?: GridClient;
  readonly soap?: SoapClient;
  /** Set with `baseUrl: embedded`: where the emulator listens and the file that keeps its state. */
  readonly emulator?: { readonly url: string; readonly dataFile: string };
  close(): Promise<void>;
}

/** The settings connectService reads. */
export type ServiceConfig = Pick<Config, 'api' | 'emulator' | 'stateDir'>;

/**
 * Where the embedded emulator keeps its state: the configured file, else the stateDir — so what was
 * sent before a restart (and the demo partner's answers to it) is still there after it.
 */
export const embeddedDataFile = (cfg: ServiceConfig): string => cfg.emulator.dataFile ?? path.join(cfg.stateDir, 'emulator.sqlite');

/** What either client is built with: the configured account, attempts, connections, timeouts and limits. */
function transportOf(cfg: ServiceConfig, options: ServiceOptions) {
  return {
    auth: cfg.api.apiKey ? { apiKey: cfg.api.apiKey } : { login: cfg.api.login as string, password: cfg.api.password as string },
    maxAttempts: options.maxAttempts ?? cfg.api.maxAttempts,
    connections: cfg.api.connections,
    timeouts: { ...cfg.api.timeouts, ...options.timeouts },
    limits: cfg.api.limits,
    allowInsecureHttp: cfg.api.allowInsecureHttp,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onRateLimitPause ? { onRateLimitPause: options.onRateLimitPause } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  };
}

/**
 * A REST client of the same account beside a SOAP one, for what the service publishes over REST
 * only (callback registration). Both protocols share one account store and an API key is valid on
 * both, so the configured credentials serve. `restUrl` is the REST root; default the SOAP address's
 * origin (where the embedded emulator serves both). The caller closes it.
 */
export function restBeside(cfg: ServiceConfig, soap: SoapClient, restUrl?: string, options: ServiceOptions = {}): GridClient {
  return new GridClient({ baseUrl: restUrl ?? soap.url.origin, ...transportOf(cfg, options) });
}

export async function connectService(cfg: ServiceConfig, options: ServiceOptions = {}): Promise<ServiceConnection> {
  let emulator: { url: string; dataFile: string; close(): Promise<void> } | undefined;
  let baseUrl = cfg.api.baseUrl;
  if (baseUrl === 'embedded') {
    const dataFile = embeddedDataFile(cfg);
    const { startEmulator } = await import('@gridsync/emulator');
    const emu = await startEmulator({
      port: options.emulatorPort ?? 0,
      dataFile,
      ...(cfg.emulator.rootKey ? { rootKey: cfg.emulator.rootKey } : {}),
      ...(options.onEmulatorError ? { onError: options.onEmulatorError } : {}),
    });
    emulator = { url: emu.url, dataFile, close: () => emu.close() };
    baseUrl = emu.url;
  }
  const transport = transportOf(cfg, options);
  let soap: SoapClient | undefined;
  let rest: GridClient | undefined;
  try {
    if ((options.protocol ?? cfg.api.protocol) === 'soap') soap = new SoapClient({ url: baseUrl, ...transport });
    else rest = new GridClient({ baseUrl, ...transport });
  } catch (err) {
    await emulator?.close();
    throw err;
  }
  const client = (soap ?? rest) as MailboxTransport;
  return {
    client,
    ...(rest ? { rest } : {}),
    ...(soap ? { soap } : {}),
    ...(emulator ? { emulator: { url: emulator.url, dataFile: emulator.dataFile } } : {}),
    close: async () => {
      await client.close();
      await emulator?.close();
    },
  };
}
