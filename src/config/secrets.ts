/** The secrets a loaded config holds: what no log, report or status may show, even when the service echoes it. */
import type { Config } from './schema.js';

/**
 * The credential values of `config` (API key, password, the emulator's root key, a password inside
 * the service's, the journal's or a callbacks URL).
 */
export function secretsOf(config: Config): string[] {
  const urlPassword = (url: string): string | undefined => {
    try {
      return decodeURIComponent(new URL(url).password) || undefined;
    } catch {
      return undefined;
    }
  };
  return [
    config.api.apiKey,
    config.api.password,
    config.emulator.rootKey,
    urlPassword(config.api.baseUrl),
    config.journal.url === undefined ? undefined : urlPassword(config.journal.url),
    config.callbacks === undefined ? undefined : urlPassword(config.callbacks.publicUrl),
    config.callbacks?.restUrl === undefined ? undefined : urlPassword(config.callbacks.restUrl),
  ].filter((v): v is string => v !== undefined);
}
