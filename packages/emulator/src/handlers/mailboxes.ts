/**
 * Mailbox writes. Configuration values and X12 delimiters are settings of the mailbox, shown by
 * `mailboxes.get` (under `config`, `x12Delimiters`). Delete terminates: the record stays (status
 * Terminated) and nothing is routed to or from it any more.
 */
import { duplicateObject, invalidParameter, iso, type Handler, type HandlerContext } from '../context.js';
import { configOf, delimiters, mailboxInfo, newId, saveConfig, visibleMailbox, visibleNetwork } from './common.js';
import type { MailboxRow } from '../store.js';

export function mailboxDetail(ctx: HandlerContext, m: MailboxRow): Record<string, unknown> {
  return {
    ...mailboxInfo(m),
    config: configOf(ctx, 'mailbox', m.mailbox_id),
    x12Delimiters: ctx.world.store.setting('mailbox', m.mailbox_id, 'x12Delimiters') ?? null,
  };
}

export const mailboxHandlers: Record<string, Handler> = {
  'mailboxes.get': (ctx) => ({ data: mailboxDetail(ctx, visibleMailbox(ctx, ctx.input.mailboxId)) }),
  'mailboxes.create': (ctx) => {
    const n = visibleNetwork(ctx, ctx.input.networkId);
    const uniqueId = ctx.input.uniqueId as string;
    if (!/^[A-Za-z0-9]{1,12}$/.test(uniqueId)) throw invalidParameter('uniqueId: 1 to 12 letters or digits');
    if ((ctx.input.companyName as string).trim() === '') throw invalidParameter('companyName: must not be empty');
    const { db } = ctx.world.store;
    if (db.prepare('SELECT 1 FROM mailboxes WHERE network_id = ? AND unique_id = ?').get(n.network_id, uniqueId)) {
      throw duplicateObject(`mailbox ${uniqueId} already exists in network ${n.network_id}`);
    }
    const id = newId(ctx, 'mailboxes', 'mailbox_id', 'mailbox', 2001);
    const now = iso(ctx.world.now());
    db.prepare('INSERT INTO mailboxes VALUES (?, ?, ?, ?, ?, 0, ?, ?)').run(
      id,
      n.network_id,
      uniqueId,
      ctx.input.companyName,
      'Active',
      now,
      now,
    );
    return { data: mailboxDetail(ctx, visibleMailbox(ctx, id)) };
  },
  'mailboxes.update': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    if (ctx.input.companyName !== undefined) {
      if ((ctx.input.companyName as string).trim() === '') throw invalidParameter('companyName: must not be empty');
      ctx.world.store.db
        .prepare('UPDATE mailboxes SET company_name = ?, modified = ? WHERE mailbox_id = ?')
        .run(ctx.input.companyName, iso(ctx.world.now()), m.mailbox_id);
    }
    return { data: mailboxDetail(ctx, visibleMailbox(ctx, m.mailbox_id)) };
  },
  'mailboxes.updateConfig': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    saveConfig(ctx, 'mailbox', m.mailbox_id, 'mailboxId');
    return { data: null, message: `configuration of mailbox ${m.mailbox_id} saved` };
  },
  'mailboxes.x12Delimiters': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    ctx.world.store.setSetting('mailbox', m.mailbox_id, 'x12Delimiters', delimiters(ctx.input));
    return { data: null, message: `X12 delimiters of mailbox ${m.mailbox_id} saved` };
  },
  'mailboxes.delete': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    ctx.world.store.db
      .prepare("UPDATE mailboxes SET status = 'Terminated', modified = ? WHERE mailbox_id = ?")
      .run(iso(ctx.world.now()), m.mailbox_id);
    return { data: null, message: `mailbox ${m.mailbox_id} terminated` };
  },
};
