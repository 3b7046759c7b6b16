/**
 * Warnings about deferred parcels that say each thing once. A deferral repeats every cycle for as
 * long as its cause lasts (a full disk holds back every waiting parcel), and a line per parcel per
 * cycle buries the first one. A reason code warns when it appears (with the first parcel's
 * details); from then on each cycle says in one line how many parcels were held back and why; when
 * a code is gone, one info line says so.
 */
import type { Logger } from '../log.js';

export class DeferralNotices {
  /** Parcels deferred per code in the last cycle that ran to its end. */
  private before = new Map<string, number>();
  /** …and in the cycle under way. */
  private current = new Map<string, number>();
  /** Codes warned about in the cycle under way. */
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** One parcel deferred: warns only when its code is new (not deferred in the last cycle nor earlier in this one). */
  defer(code: string, fields: object, msg: string): void {
    this.current.set(code, (this.current.get(code) ?? 0) + 1);
    if (this.before.has(code) || this.warned.has(code)) return;
    this.warned.add(code);
    this.logger.warn({ ...fields, code }, msg);
  }

  /** A cycle ran to its end: one summary of what its warnings did not say, and the codes that are gone. */
  endCycle(): void {
    const total = [...this.current.values()].reduce((a, b) => a + b, 0);
    if (total > this.warned.size) {
      this.logger.warn({ deferred: total, byCode: Object.fromEntries(this.current) }, `${total} parcel(s) deferred to the next cycle`);
    }
    for (const code of this.before.keys()) {
      if (!this.current.has(code)) this.logger.info({ code }, 'parcels no longer deferred for this reason');
    }
    this.before = this.current;
    this.current = new Map();
    this.warned.clear();
  }

  /** A cycle that ended early (the listing failed) proves nothing gone: what it saw adds to the last cycle's. */
  abandonCycle(): void {
    for (const [code, n] of this.current) this.before.set(code, Math.max(n, this.before.get(code) ?? 0));
    this.current = new Map();
    this.warned.clear();
  }
}
