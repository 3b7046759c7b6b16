/**
 * Which parcels the callbacks announced, so that a parcel placed without one counts as missed:
 * polls that keep finding unannounced parcels mean the calls do not arrive (a firewall or a proxy
 * that swallows them). A parcel is given `graceMs` for its call to come late (a cycle started by
 * another parcel's call often places it first). A call whose body names no parcel announces "one
 * parcel" of its mailbox.
 */
export interface CallbackHealth {
  /** Parcels placed that no callback announced within the grace, since start. */
  readonly missed: number;
  /** Of those, in a row: reset by the next announced parcel. */
  readonly missedInARow: number;
  /** Verified calls since start. */
  readonly calls: number;
  readonly lastCallAt: string | null;
}

/** Parcel ids remembered per mailbox: enough for any backlog, bounded against a flood. */
const REMEMBERED = 10_000;

/** The parcel a callback body names, if it names one (`parcelId`, or `objectId` of a Parcel event). */
export function announcedParcel(body: unknown): number | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const id = b.parcelId ?? (b.event === 'Parcel' ? b.objectId : undefined);
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/**
 * A call about a parcel that is no longer waiting: the service also calls when a parcel is
 * confirmed (our own confirm coming back) or an upload reaches its end. Only a call that says
 * nothing of the status, or says InBoxReady, announces a parcel; taking the echo of our confirm
 * as the announcement would hide the ready call that never came.
 */
const isAfterTheFact = (body: unknown): boolean => {
  const status = body && typeof body === 'object' ? (body as { status?: unknown }).status : undefined;
  return typeof status === 'string' && status !== 'InBoxReady';
};

/** A call the service makes on request (`callbacks/test`), not for an event. */
export const isTestCall = (body: unknown): boolean =>
  Boolean(body && typeof body === 'object' && (body as { isTest?: unknown }).isTest === true);

export class Announcements {
  /** mailboxId → parcel ids announced and not yet placed. */
  private readonly ids = new Map<number, Set<number>>();
  private readonly anonymous = new Map<number, number>();
  /** `mailboxId:parcelId` → when it was placed unannounced. */
  private readonly unannounced = new Map<string, { mailboxId: number; at: number }>();
  private missed = 0;
  private missedInARow = 0;
  private calls = 0;
  private lastCallAt: number | undefined;

  constructor(
    private readonly now: () => number,
    private readonly graceMs: number,
  ) {}

  /** A verified call for `mailboxId` with its body. */
  heard(mailboxId: number, body: unknown): void {
    this.calls++;
    this.lastCallAt = this.now();
    if (isTestCall(body) || isAfterTheFact(body)) return;
    const parcel = announcedParcel(body);
    if (parcel === undefined) {
      const waiting = [...this.unannounced].find(([, u]) => u.mailboxId === mailboxId);
      if (waiting) this.late(waiting[0]);
      else this.anonymous.set(mailboxId, Math.min(REMEMBERED, (this.anonymous.get(mailboxId) ?? 0) + 1));
      return;
    }
    if (this.unannounced.has(`${mailboxId}:${parcel}`)) return this.late(`${mailboxId}:${parcel}`);
    let set = this.ids.get(mailboxId);
    if (!set) this.ids.set(mailboxId, (set = new Set()));
    set.add(parcel);
    if (set.size > REMEMBERED) set.delete(set.values().next().value as number);
  }

  private late(key: string): void {
    this.unannounced.delete(key);
    this.missedInARow = 0;
  }

  /** A parcel of `mailboxId` was placed. */
  placed(mailboxId: number, parcelId: number): void {
    let announced = this.ids.get(mailboxId)?.delete(parcelId) === true;
    const anon = this.anonymous.get(mailboxId) ?? 0;
    if (!announced && anon > 0) {
      this.anonymous.set(mailboxId, anon - 1);
      announced = true;
    }
    if (announced) this.missedInARow = 0;
    else if (this.unannounced.size < REMEMBERED) this.unannounced.set(`${mailboxId}:${parcelId}`, { mailboxId, at: this.now() });
  }

  /** Parcels whose grace ran out unannounced: counted as missed; their mailboxes, one entry each. */
  sweep(): number[] {
    const out: number[] = [];
    const limit = this.now() - this.graceMs;
    for (const [key, u] of this.unannounced) {
      if (u.at > limit) continue;
      this.unannounced.delete(key);
      this.missed++;
      this.missedInARow++;
      out.push(u.mailboxId);
    }
    return out;
  }

  health(): CallbackHealth {
    return {
      missed: this.missed,
      missedInARow: this.missedInARow,
      calls: this.calls,
      lastCallAt: this.lastCallAt === undefined ? null : new Date(this.lastCallAt).toISOString(),
    };
  }
}
