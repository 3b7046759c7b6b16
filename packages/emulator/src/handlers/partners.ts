/** Interconnect delete (terminates: routing over it stops) and partner notes. */
import { iso, type Handler } from '../context.js';
import { callerOf, newId, visibleInterconnect } from './common.js';

export const partnerHandlers: Record<string, Handler> = {
  'partners.delete': (ctx) => {
    const i = visibleInterconnect(ctx, ctx.input.interconnectId);
    ctx.world.store.db
      .prepare("UPDATE interconnects SET status = 'Terminated', modified = ? WHERE interconnect_id = ?")
      .run(iso(ctx.world.now()), i.interconnect_id);
    return { data: true };
  },
  'partners.note': (ctx) => {
    const i = visibleInterconnect(ctx, ctx.input.interconnectId);
    const id = newId(ctx, 'partner_notes', 'note_id', 'partnerNote', 1);
    ctx.world.store.db
      .prepare('INSERT INTO partner_notes VALUES (?, ?, ?, ?, ?)')
      .run(id, i.interconnect_id, ctx.input.note, callerOf(ctx).user_id, iso(ctx.world.now()));
    return { data: true };
  },
  'partners.noteList': (ctx) => {
    const i = visibleInterconnect(ctx, ctx.input.interconnectId);
    const rows = ctx.world.store.db
      .prepare('SELECT text, created, user_id FROM partner_notes WHERE interconnect_id = ? ORDER BY note_id')
      .all(i.interconnect_id) as { text: string; created: string; user_id: number }[];
    return { data: rows.map((r) => ({ text: r.text, timestamp: r.created, userId: r.user_id })) };
  },
};
