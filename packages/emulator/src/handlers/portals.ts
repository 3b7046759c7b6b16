/** Portals: one web portal per mailbox; the address is a made-up one under portal.example. */
import { duplicateObject, iso, objectNotFound, type Handler } from '../context.js';
import { newId, visibleMailbox, type PortalRow } from './common.js';

const portalInfo = (p: PortalRow): Record<string, unknown> => ({
  portalId: p.portal_id,
  mailboxId: p.mailbox_id,
  url: p.url,
  status: p.status,
  created: p.created,
});

export const portalHandlers: Record<string, Handler> = {
  'portals.create': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    const { db } = ctx.world.store;
    if (db.prepare('SELECT 1 FROM portals WHERE mailbox_id = ?').get(m.mailbox_id))
      throw duplicateObject(`mailbox ${m.mailbox_id} already has a portal`);
    const id = newId(ctx, 'portals', 'portal_id', 'portal', 8001);
    db.prepare('INSERT INTO portals VALUES (?, ?, ?, ?, ?)').run(
      id,
      m.mailbox_id,
      `https://portal.example/${m.unique_id.toLowerCase()}`,
      'Active',
      iso(ctx.world.now()),
    );
    return { data: portalInfo(db.prepare('SELECT * FROM portals WHERE portal_id = ?').get(id) as PortalRow) };
  },
  'portals.byMailbox': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    const p = ctx.world.store.db.prepare('SELECT * FROM portals WHERE mailbox_id = ?').get(m.mailbox_id) as PortalRow | undefined;
    if (!p) throw objectNotFound(`mailbox ${m.mailbox_id} has no portal`);
    return { data: portalInfo(p) };
  },
};
