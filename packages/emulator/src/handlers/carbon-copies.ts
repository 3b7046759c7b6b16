/**
 * Carbon-copy rules: while a rule is Active, every parcel routed into (InBox), out of (OutBox) or
 * through (NoDir: both) its source mailbox is copied, as a new InBoxReady parcel, into its target
 * mailbox (see copyToCarbonCopies in parcels.ts). Both mailboxes must be visible to the caller.
 */
import { invalidParameter, iso, objectNotFound, type Handler, type HandlerContext } from '../context.js';
import { callerOf, newId, paging, visibleMailbox, type CarbonCopyRow } from './common.js';
import { canSeeMailbox } from '../context.js';

const ccInfo = (c: CarbonCopyRow): Record<string, unknown> => ({
  ccId: c.cc_id,
  fromMailboxId: c.from_mailbox_id,
  toMailboxId: c.to_mailbox_id,
  status: c.status,
  direction: c.direction,
  created: c.created,
});

function visibleCc(ctx: HandlerContext, ccId: unknown): CarbonCopyRow {
  const c = ctx.world.store.db.prepare('SELECT * FROM carbon_copies WHERE cc_id = ?').get(ccId) as CarbonCopyRow | undefined;
  if (!c || !canSeeMailbox(ctx.world, callerOf(ctx), c.from_mailbox_id)) throw objectNotFound(`carbon copy ${String(ccId)} not found`);
  return c;
}

export const carbonCopyHandlers: Record<string, Handler> = {
  'carbonCopies.get': (ctx) => ({ data: ccInfo(visibleCc(ctx, ctx.input.ccId)) }),
  'carbonCopies.create': (ctx) => {
    const from = visibleMailbox(ctx, ctx.input.fromMailboxId);
    const to = visibleMailbox(ctx, ctx.input.toMailboxId);
    if (from.mailbox_id === to.mailbox_id) throw invalidParameter('toMailboxId: must differ from fromMailboxId');
    const id = newId(ctx, 'carbon_copies', 'cc_id', 'carbonCopy', 4001);
    ctx.world.store.db
      .prepare('INSERT INTO carbon_copies VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, from.mailbox_id, to.mailbox_id, 'Active', ctx.input.direction, iso(ctx.world.now()));
    return { data: ccInfo(visibleCc(ctx, id)) };
  },
  'carbonCopies.update': (ctx) => {
    const c = visibleCc(ctx, ctx.input.ccId);
    const { db } = ctx.world.store;
    if (ctx.input.status !== undefined) db.prepare('UPDATE carbon_copies SET status = ? WHERE cc_id = ?').run(ctx.input.status, c.cc_id);
    if (ctx.input.direction !== undefined)
      db.prepare('UPDATE carbon_copies SET direction = ? WHERE cc_id = ?').run(ctx.input.direction, c.cc_id);
    return { data: ccInfo(visibleCc(ctx, c.cc_id)) };
  },
  'carbonCopies.delete': (ctx) => {
    const c = visibleCc(ctx, ctx.input.ccId);
    ctx.world.store.db.prepare('DELETE FROM carbon_copies WHERE cc_id = ?').run(c.cc_id);
    return { data: true };
  },
  'carbonCopies.list': (ctx) => {
    const { limit, offset } = paging(ctx, 100);
    const rows = (ctx.world.store.db.prepare('SELECT * FROM carbon_copies ORDER BY cc_id').all() as CarbonCopyRow[])
      .filter((c) => canSeeMailbox(ctx.world, callerOf(ctx), c.from_mailbox_id))
      .filter(
        (c) => ctx.input.mailboxId === undefined || c.from_mailbox_id === ctx.input.mailboxId || c.to_mailbox_id === ctx.input.mailboxId,
      )
      .filter((c) => ctx.input.status === undefined || c.status === ctx.input.status);
    return { data: rows.slice(offset, offset + limit).map(ccInfo) };
  },
};
