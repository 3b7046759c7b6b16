/**
 * pino on stdout, JSON for journald and Docker, pretty on a terminal. Secrets are redacted at any
 * depth pino can address (keys, tokens, passwords, parcel content), whatever the call site logs.
 */
import pino, { type DestinationStream } from 'pino';
import type { Logger } from '../log.js';
import { scrubHeld } from '../errors/index.js';

// pino paths are case-sensitive and `*` is one level: the wire spells headers in lower case
// (undici), and secrets sit at the top of a log object or one level down (config.api, auth, …).
const SECRET_KEYS = ['apiKey', 'password', 'token', 'refreshToken', 'content', 'authorization', '"x-api-key"'];
export const REDACT_PATHS = [
  ...SECRET_KEYS.map((k) => (k.startsWith('"') ? `["${k.slice(1, -1)}"]` : k)),
  ...SECRET_KEYS.map((k) => (k.startsWith('"') ? `*["${k.slice(1, -1)}"]` : `*.${k}`)),
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'config.api.apiKey',
  'config.api.password',
];

/** JSON to stdout (synchronous, so nothing is lost at exit), or pino-pretty; `destination` for tests. */
export function createLogger(level: string, pretty: boolean, destination?: DestinationStream): Logger & { flush(): void } {
  // Redaction knows the keys; a secret the service echoed sits in a message, so each line is also scrubbed.
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { app: 'gridsync' },
    hooks: { streamWrite: scrubHeld },
  };
  destination ??= pretty
    ? pino.transport({ target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:standard', ignore: 'pid,hostname,app' } })
    : pino.destination({ dest: 1, sync: true });
  return pino(options, destination) as unknown as Logger & { flush(): void };
}

/** `log.pretty: auto` → pretty when stdout is a terminal. */
export const wantsPretty = (setting: 'auto' | boolean): boolean => (setting === 'auto' ? process.stdout.isTTY === true : setting);
