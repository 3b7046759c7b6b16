/**
 * The service's clock as its answers show it (the HTTP `Date` header), against ours. The service
 * stamps parcels with its own time: a search by creation time (the reconciliation of an upload
 * whose outcome is unknown) must cover the service's time, or a service clock behind ours hides
 * the very parcel searched for. Retention, which deletes by age, holds back while ours is far
 * from it (src/daemon/retention-pass.ts). Shared by the REST and the SOAP client.
 */
import { GridResponseError } from './errors.js';

/**
 * How far apart the readings of one moment (ours, and the service's as its `Date` headers show it)
 * may be for a search by creation time. Which clock stamped the parcel sought cannot be told: a
 * proxy's `Date` hours ahead while the stamps are true put the window after the parcel, and the file
 * whose answer was lost was sent again. So the search starts at the earliest reading; but each hour
 * between the readings is an hour before the parcel in which an older, unadopted parcel of the same
 * name and size (another sender's, one uploaded by hand) would be taken for ours, and the file
 * archived as sent while it never was, which is worse than a duplicate. Two hours admit what honest
 * parties show (an NTP-kept service, seconds; a service a quarter of an hour off; a host clock
 * stepped an hour when NTP corrects it after boot) and keep that stretch short. Further apart the
 * search is refused: the outcome stays unknown, and the file goes to errorDir after `maxAttempts`.
 */
export const SEARCH_CLOCK_TOLERANCE_MS = 2 * 3_600_000;

/**
 * Where a search by creation time for something done at one moment starts: the earliest of that
 * moment's readings. Throws (GridResponseError on `Date`, naming them) when they are too far apart.
 */
export function searchStart(endpoint: string, readings: readonly number[]): number {
  const from = Math.min(...readings);
  const to = Math.max(...readings);
  if (to - from <= SEARCH_CLOCK_TOLERANCE_MS) return from;
  const hours = ((to - from) / 3_600_000).toFixed(1);
  throw new GridResponseError(
    endpoint,
    200,
    'Date',
    `our clock and the service's clock (its Date header) read the upload attempt's start ${hours} hours apart ` +
      `(${readings.map((r) => new Date(r).toISOString()).join(', ')}): a search by creation time cannot be trusted`,
  );
}

export class ServiceClock {
  private offset: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes the `Date` header of an answer received just now; a missing or unreadable one changes nothing. */
  note(header: string | string[] | undefined): void {
    const text = Array.isArray(header) ? header[0] : header;
    if (!text) return;
    const at = Date.parse(text);
    if (Number.isFinite(at)) this.offset = at - this.now();
  }

  /** The service's clock minus ours as of the last dated answer (to within a second and the network's delay); undefined before one. */
  offsetMs(): number | undefined {
    return this.offset;
  }
}
