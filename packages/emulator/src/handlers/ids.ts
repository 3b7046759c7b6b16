/**
 * Grid ID writes and the trading-partner (TP) operations. A VAN ID added with tp-add-van is an
 * alias under which the grid ID is found when routing by envelope; data e-mail, delimiters and
 * configuration are settings of the grid ID, shown by `ids.get` (under `config`, `vans`,
 * `dataEmail`, `x12Delimiters`). Delete terminates (status Terminated: no longer routed).
 */
import { duplicateObject, type Handler, type HandlerContext } from '../context.js';
import type { GridIdRow } from '../store.js';
import { configOf, delimiters, gridInfo, saveConfig, updateGiven, visibleGrid, visibleMailbox } from './common.js';

export function gridDetail(ctx: HandlerContext, g: GridIdRow): Record<string, unknown> {
  const { store } = ctx.world;
  return {
    ...gridInfo(g),
    config: configOf(ctx, 'grid', g.grid_id),
    vans: store.vanAliases(g.grid_id),
    dataEmail: store.setting('grid', g.grid_id, 'dataEmail') ?? null,
    x12Delimiters: store.setting('grid', g.grid_id, 'x12Delimiters') ?? null,
  };
}

const grid = (ctx: HandlerContext): GridIdRow => visibleGrid(ctx, ctx.input.gridId);

export const idHandlers: Record<string, Handler> = {
  'ids.get': (ctx) => ({ data: gridDetail(ctx, grid(ctx)) }),
  'ids.update': (ctx) => {
    const g = grid(ctx);
    updateGiven(ctx, 'grid_ids', 'grid_id', g.grid_id, [
      ['description', 'description'],
      ['status', 'status'],
      ['ediStandard', 'edi_standard'],
    ]);
    return { data: gridDetail(ctx, grid(ctx)) };
  },
  'ids.delete': (ctx) => {
    const g = grid(ctx);
    ctx.world.store.db.prepare("UPDATE grid_ids SET status = 'Terminated' WHERE grid_id = ?").run(g.grid_id);
    return { data: true };
  },
  'ids.updateConfig': (ctx) => {
    const g = grid(ctx);
    saveConfig(ctx, 'grid', g.grid_id, 'gridId');
    return { data: true };
  },
  'ids.tpAddVan': (ctx) => {
    const g = grid(ctx);
    const { store } = ctx.world;
    const q = ctx.input.vanQualifier as string;
    const id = ctx.input.vanId as string;
    if (store.gridIdByName(q, id)) throw duplicateObject(`${q}/${id} is already a grid ID or a VAN ID`);
    store.addVanAlias(q, id, g.grid_id);
    return { data: true };
  },
  'ids.tpGetMailboxDefault': (ctx) => {
    const g = grid(ctx);
    const m = visibleMailbox(ctx, g.mailbox_id);
    return { data: { mailboxId: m.mailbox_id, networkId: m.network_id, mailboxName: m.company_name, status: m.status } };
  },
  'ids.tpMove': (ctx) => {
    const g = grid(ctx);
    const m = visibleMailbox(ctx, ctx.input.newMailboxId);
    ctx.world.store.db
      .prepare('UPDATE grid_ids SET mailbox_id = ?, network_id = ? WHERE grid_id = ?')
      .run(m.mailbox_id, m.network_id, g.grid_id);
    return { data: gridDetail(ctx, grid(ctx)) };
  },
  'ids.tpUpdateDataEmail': (ctx) => {
    const g = grid(ctx);
    ctx.world.store.setSetting('grid', g.grid_id, 'dataEmail', {
      email: ctx.input.email,
      emailSystem: (ctx.input.emailSystem as string | undefined) ?? 'smtp',
      emailPayload: (ctx.input.emailPayload as string | undefined) ?? 'Attachment',
    });
    return { data: true };
  },
  'ids.tpUpdateDescription': (ctx) => {
    const g = grid(ctx);
    ctx.world.store.db.prepare('UPDATE grid_ids SET description = ? WHERE grid_id = ?').run(ctx.input.description, g.grid_id);
    return { data: true };
  },
  'ids.tpX12Delimiters': (ctx) => {
    const g = grid(ctx);
    ctx.world.store.setSetting('grid', g.grid_id, 'x12Delimiters', delimiters(ctx.input));
    return { data: true };
  },
};
