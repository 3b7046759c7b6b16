/**
 * The configured service for a one-shot command (`once --dry-run`, `redeliver`): the embedded
 * emulator when `baseUrl: embedded`, and a client of the configured protocol with the configured
 * credentials, retries and timeouts. `close()` ends both.
 */
import { GridClient, SoapClient, type MailboxTransport } from '../api/index.js';
import type { Config } from '../config/index.js';
import { startEmulator, type Emulator } from '../emulator/index.js';

export interface ServiceConnection {
  /** The client the pipelines would use. */
  readonly client: MailboxTransport;
  /** Exactly one of these is set, for the calls outside the pipelines' interface. */
  readonly rest?: GridClient;
  readonly soap?: SoapClient;
  close(): Promise<void>;
}

export async function connectService(cfg: Config): Promise<ServiceConnection> {
  let emulator: Emulator | undefined;
  let baseUrl = cfg.api.baseUrl;
  if (baseUrl === 'embedded') {
    emulator = await startEmulator({
      ...(cfg.emulator.dataFile ? { dataFile: cfg.emulator.dataFile } : {}),
      ...(cfg.emulator.rootKey ? { rootKey: cfg.emulator.rootKey } : {}),
    });
    baseUrl = emulator.url;
  }
  const transport = {
    auth: cfg.api.apiKey ? { apiKey: cfg.api.apiKey } : { login: cfg.api.login as string, password: cfg.api.password as string },
    maxAttempts: cfg.api.maxAttempts,
    timeouts: cfg.api.timeouts,
    allowInsecureHttp: cfg.api.allowInsecureHttp,
  };
  const soap = cfg.api.protocol === 'soap' ? new SoapClient({ url: baseUrl, ...transport }) : undefined;
  const rest = soap ? undefined : new GridClient({ baseUrl, ...transport });
  const client = (soap ?? rest) as MailboxTransport & { close(): Promise<void> };
  return {
    client,
    ...(rest ? { rest } : {}),
    ...(soap ? { soap } : {}),
    close: async () => {
      await client.close();
      await emulator?.close();
    },
  };
}
