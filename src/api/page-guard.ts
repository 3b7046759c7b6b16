/**
 * A paged list must move on. The outbox lists are read page by page until a short page (REST) or
 * the total the service states (SOAP): a service that ignores the page asked for, answering the
 * same full page every time, or states an endless total, kept the search for an unknown upload
 * asking for ever — `once` never ended. Both clients' pagers go through here: a page that holds
 * only parcels already seen in this listing is refused, and so is a listing past MAX_PAGES.
 */
import { GridResponseError } from './errors.js';

/** 100 pages of 500: more uploads than a mailbox makes in the reconciliation window, by far. */
const MAX_PAGES = 100;

export class PageGuard {
  private readonly seen = new Set<number>();
  private pages = 0;

  constructor(private readonly endpoint: string) {}

  /** One more page of the listing, with the parcel ids it holds. */
  page(ids: readonly number[]): void {
    if (++this.pages > MAX_PAGES) throw new GridResponseError(this.endpoint, 200, 'data', `a listing of more than ${MAX_PAGES} pages`);
    const fresh = ids.filter((id) => !this.seen.has(id));
    if (ids.length > 0 && fresh.length === 0)
      throw new GridResponseError(
        this.endpoint,
        200,
        'data',
        `the list repeats parcels it already gave (page ${this.pages} asked, an earlier page answered)`,
      );
    for (const id of fresh) this.seen.add(id);
  }
}
