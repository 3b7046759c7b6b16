/**
 * The secret values a client holds or was issued: the API key or password it was given, and the
 * tokens and session ids the service handed out. A service may echo an old session id as well as
 * the current one, so the issued ones are remembered (the most recent few).
 */
import { holdIssued } from '../errors/index.js';
import type { GridAuth } from './session.js';

const MAX_ISSUED = 16;

export class SecretsSeen {
  private readonly given: string[];
  private readonly issued: string[] = [];

  constructor(auth: GridAuth) {
    this.given = 'apiKey' in auth ? [auth.apiKey] : [auth.password];
  }

  /** Remembers issued secrets here and hands them to every sink (logs, error files, status) as well. */
  add(...values: (string | undefined)[]): void {
    holdIssued(values);
    for (const v of values) {
      if (!v || this.issued.includes(v)) continue;
      this.issued.push(v);
      if (this.issued.length > MAX_ISSUED) this.issued.shift();
    }
  }

  values(): readonly string[] {
    return [...this.given, ...this.issued];
  }
}
