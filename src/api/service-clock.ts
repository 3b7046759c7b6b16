/**
 * The service's clock as its answers show it (the HTTP `Date` header), against ours. The service
 * stamps parcels with its own time: a search by creation time (the reconciliation of an upload
 * whose outcome is unknown) must be put in the service's time, or a service clock behind ours
 * hides the very parcel searched for. Retention, which deletes by age, holds back while ours is far
 * from it (src/daemon/retention-pass.ts). Shared by the REST and the SOAP client.
 */
import { GridResponseError } from './errors.js';

/**
 * How far the service's `Date` may read from our clock for a search by creation time to be put in
 * its time. Further off, one of the two clocks is broken, and which cannot be told: a proxy with a
 * wrong clock answering five years ahead put the window after the very parcel sought, and the file
 * whose answer was lost was sent again; years behind, it would reach back to an older parcel of the
 * same name and size. An NTP-kept service differs by seconds, and a host's own clock rarely by more
 * than minutes.
 */
export const SEARCH_CLOCK_TOLERANCE_MS = 24 * 3_600_000;

/** Throws (GridResponseError on `Date`) when the service's clock is too far from ours to search by creation time. */
export function checkSearchClock(endpoint: string, offsetMs: number | undefined): void {
  if (offsetMs === undefined || Math.abs(offsetMs) <= SEARCH_CLOCK_TOLERANCE_MS) return;
  const hours = Math.round(Math.abs(offsetMs) / 3_600_000);
  throw new GridResponseError(
    endpoint,
    200,
    'Date',
    `the service's clock reads ${hours} hours ${offsetMs > 0 ? 'ahead of' : 'behind'} ours: a search by creation time cannot be trusted`,
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
