/**
 * Everything the CLI prints goes through here. Names and messages come from outside (a file name
 * chosen by the service or a partner, a service's error text): raw, a terminal control character
 * in one can retitle the window, clear the screen or draw fake lines, and a bidi override can show
 * a name reversed. Such characters are written as visible `\uXXXX` escapes (valid inside JSON
 * strings too), and the secrets in effect are masked.
 */
import { GridApiError } from '../api/index.js';
import { scrubHeld } from '../errors/index.js';

/** C0 except tab and newline, DEL, C1, and the bidi marks, embeddings, overrides and isolates. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character a terminal would act on written as a visible `\uXXXX`. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes `text` to stdout, printable and with secrets masked. */
export function print(text: string): void {
  process.stdout.write(printable(scrubHeld(text)));
}

/** Writes `text` to stderr, printable and with secrets masked. */
export function printError(text: string): void {
  process.stderr.write(printable(scrubHeld(text)));
}

/** Why the service refused a call, for one line of a command's report: its error code and message. */
export function serviceRefusal(err: unknown): string {
  return err instanceof GridApiError
    ? `${err.errorCode ?? `HTTP ${err.httpStatus}`}: ${err.serviceMessage || err.message}`
    : (err as Error).message;
}
