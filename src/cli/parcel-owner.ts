/**
 * Whose parcel `gridsync redeliver` was given: an account may see the inboxes of several
 * mailboxes, and a reset delivers the parcel again to whichever system takes that mailbox's parcels.
 * Each parcel is looked up before anything is noted or reset, and one that another mailbox's
 * inbox holds stops the command: a typo must not deliver someone else's parcel again.
 */
import type { MailboxTransport } from '../api/index.js';
import type { Config } from '../config/index.js';
import { GridsyncError } from '../errors/index.js';
import { UsageError } from './args.js';
import { serviceRefusal } from './print.js';

export class ParcelOfAnotherMailboxError extends GridsyncError {
  readonly code = 'REDELIVER_OTHER_MAILBOX';
}

/** The ids of the mailboxes this configuration receives for; the key's own as the service names it. */
export async function receivingMailboxes(cfg: Pick<Config, 'mailboxes'>, client: MailboxTransport): Promise<Set<number>> {
  const inbound = cfg.mailboxes.filter((m) => m.inbox);
  if (inbound.length === 0) throw new UsageError('no mailbox of this configuration has an inbox: it has no parcel to deliver again');
  const ids = new Set(inbound.flatMap((m) => (m.mailboxId !== undefined ? [m.mailboxId] : [])));
  if (inbound.some((m) => m.mailboxId === undefined)) {
    const own = (await client.sessionContext()).mailboxId;
    if (own === undefined) throw new UsageError("the service did not name the key's own mailbox: set mailboxes[].mailboxId");
    ids.add(own);
  }
  return ids;
}

/**
 * Looks every parcel up; throws ParcelOfAnotherMailboxError, naming each parcel and its mailbox,
 * when one is in an inbox of a mailbox not in `mine`. Returns why each parcel whose mailbox is not
 * known was not reset: one that could not be looked up, and one whose record names no mailbox.
 * A list's records without one are the listed mailbox's, as it was asked for; a lookup by id is
 * asked for no mailbox, so its record without one says nothing about whose the parcel is.
 */
export async function lookUpOwners(
  ids: readonly number[],
  client: MailboxTransport,
  mine: ReadonlySet<number>,
): Promise<Map<number, string>> {
  const unknown = new Map<number, string>();
  const foreign: string[] = [];
  for (const id of ids) {
    try {
      const owner = (await client.parcel(id)).inboxMailboxId;
      if (owner === undefined) unknown.set(id, "the service's record of it names no mailbox");
      else if (!mine.has(owner)) foreign.push(`parcel ${id} is in the inbox of mailbox ${owner}`);
    } catch (err) {
      unknown.set(id, serviceRefusal(err));
    }
  }
  if (foreign.length > 0)
    throw new ParcelOfAnotherMailboxError(
      `${foreign.join('; ')}, not of a mailbox this configuration receives for (${[...mine].join(', ')}): nothing was reset`,
    );
  return unknown;
}
