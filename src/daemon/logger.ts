/**
 * pino on stdout, JSON for journald and Docker, pretty on a terminal. Secrets are redacted at any
 * depth pino can address (keys, tokens, passwords, parcel content), whatever the call site logs.
 */
import pino from 'pino';
import type { Logger } from '../log.js';

export const REDACT_PATHS = [
  'apiKey', '*.apiKey', 'password', '*.password', 'token', '*.token', 'refreshToken', '*.refreshToken',
  'content', '*.content', 'authorization', '*.authorization', 'headers.authorization', 'headers["x-api-key"]',
  'config.api.apiKey', 'config.api.password',
];

export function createLogger(level: string, pretty: boolean): Logger & { flush(): void } {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { app: 'gridsync' } };
  const destination = pretty
    ? pino.transport({ target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:standard', ignore: 'pid,hostname,app' } })
    : pino.destination({ dest: 1, sync: true });
  return pino(options, destination) as unknown as Logger & { flush(): void };
}

/** `log.pretty: auto` → pretty when stdout is a terminal. */
export const wantsPretty = (setting: 'auto' | boolean): boolean => (setting === 'auto' ? process.stdout.isTTY === true : setting);
