/**
 * The directory operations: networks, mailboxes, trading partners (grid IDs), interconnects,
 * interchanges and users, each seen through the caller's authority.
 */
import { typeDef } from '@gridsync/protocol/soap';
import { atLeast, canSeeMailbox, canSeeNetwork, iso } from '../../context.js';
import type { GridIdRow, InterchangeRow, InterconnectRow, MailboxRow, NetworkRow, UserRow } from '../../store.js';
import { RET, fault } from '../fault.js';
import { gridRecord, interchangeRecord, interconnectRecord, mailboxRecord, networkRecord, userRecord } from '../records.js';
import { like, mailboxOf, mayManage, me, num, ok, requireLevel, str, user, type OpContext, type Operation } from './context.js';

function grid(ctx: OpContext, id: unknown, item = 'GridID'): GridIdRow {
  const g = ctx.world.store.gridId(num(id));
  if (!g) throw fault(RET.NotFound, `Trading partner id ${num(id)} not found`, item);
  return g;
}

function interchange(ctx: OpContext): InterchangeRow {
  const r = ctx.world.store.db.prepare('SELECT * FROM interchanges WHERE interchange_id = ?').get(Number(ctx.params.InterchangeID ?? 0)) as
    InterchangeRow | undefined;
  if (!r || !canSeeMailbox(ctx.world, me(ctx), r.mailbox_id))
    throw fault(RET.NotFound, `Interchange ${String(ctx.params.InterchangeID)} not found`, 'InterchangeID');
  return r;
}

function interchangeList(direction: 'in' | 'out'): Operation {
  return (ctx) => {
    const p = ctx.params;
    const where = ['mailbox_id = ?', 'direction = ?'];
    const args: unknown[] = [me(ctx).mailbox_id, direction];
    for (const [v, clause] of [
      [p.BeginDate, 'created_ms >= ?'],
      [p.EndDate, 'created_ms <= ?'],
    ] as const) {
      if (typeof v === 'string') {
        where.push(clause);
        args.push(Date.parse(v));
      }
    }
    if (str(p.InterchangeControlID) !== '') {
      where.push('control_number = ?');
      args.push(str(p.InterchangeControlID));
    }
    const rows = ctx.world.store.db
      .prepare(`SELECT * FROM interchanges WHERE ${where.join(' AND ')} ORDER BY interchange_id LIMIT 500`)
      .all(...args) as InterchangeRow[];
    return ok(rows.map((r) => interchangeRecord(ctx.world, r)));
  };
}

function interconnectRow(ctx: OpContext, id: number): InterconnectRow {
  const i = ctx.world.store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(id) as InterconnectRow | undefined;
  const visible =
    i &&
    [i.grid_id_from, i.grid_id_to].some((g) => {
      const row = ctx.world.store.gridId(g);
      return row !== undefined && canSeeMailbox(ctx.world, me(ctx), row.mailbox_id);
    });
  if (!i || !visible) throw fault(RET.NotFound, `Interconnect ${id} not found`, 'InterconnectID');
  return i;
}

/** Every interconnect the caller may see (one end in a mailbox it can see), in id order. */
function visibleInterconnects(ctx: OpContext): InterconnectRow[] {
  const rows = ctx.world.store.db.prepare('SELECT * FROM interconnects ORDER BY interconnect_id').all() as InterconnectRow[];
  return rows.filter((i) => {
    try {
      interconnectRow(ctx, i.interconnect_id);
      return true;
    } catch {
      return false;
    }
  });
}

export const DIRECTORY_OPERATIONS: Record<string, Operation> = {
  NetworkInfo: (ctx) => {
    const n = ctx.world.store.db
      .prepare('SELECT * FROM networks WHERE network_id = ?')
      .get(num(ctx.params.NetworkID) || me(ctx).network_id) as NetworkRow | undefined;
    if (!n || !canSeeNetwork(me(ctx), n.network_id))
      throw fault(RET.NotFound, `Network ${num(ctx.params.NetworkID)} not found`, 'NetworkID');
    return ok(networkRecord(n));
  },
  NetworkList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM networks WHERE company_name LIKE ? ORDER BY network_id')
      .all(like(ctx.params.Name)) as NetworkRow[];
    return ok(rows.filter((n) => canSeeNetwork(me(ctx), n.network_id)).map(networkRecord));
  },
  NetworkUpdate: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const id = num(ctx.params.NetworkID) || me(ctx).network_id;
    if (!canSeeNetwork(me(ctx), id)) throw fault(RET.NotFound, `Network ${id} not found`, 'NetworkID');
    if (str(ctx.params.Name).trim() === '') throw fault(RET.InvalidDataLength, 'Name is empty', 'Name');
    const now = iso(ctx.world.now());
    const changed = ctx.world.store.db
      .prepare('UPDATE networks SET company_name = ?, modified = ? WHERE network_id = ?')
      .run(str(ctx.params.Name), now, id).changes;
    if (changed === 0) throw fault(RET.NotFound, `Network ${id} not found`, 'NetworkID');
    return ok(true);
  },
  MailboxInfo: (ctx) => {
    const id = num(ctx.params.MailboxID) || me(ctx).mailbox_id;
    const m = ctx.world.store.db.prepare('SELECT * FROM mailboxes WHERE mailbox_id = ?').get(id) as MailboxRow | undefined;
    if (!m || !canSeeMailbox(ctx.world, me(ctx), id)) throw fault(RET.NotFound, `Mailbox ${id} not found`, 'MailboxID');
    return ok(mailboxRecord(m));
  },
  MailboxList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM mailboxes WHERE company_name LIKE ? ORDER BY mailbox_id')
      .all(like(ctx.params.Name)) as MailboxRow[];
    return ok(rows.filter((m) => canSeeMailbox(ctx.world, me(ctx), m.mailbox_id)).map(mailboxRecord));
  },
  MailboxAdd: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const name = str(ctx.params.Name).trim();
    if (name === '') throw fault(RET.InvalidDataLength, 'Name is empty', 'Name');
    const db = ctx.world.store.db;
    const id = ((db.prepare('SELECT max(mailbox_id) AS m FROM mailboxes').get() as { m: number | null }).m ?? 1000) + 1;
    const now = iso(ctx.world.now());
    db.prepare("INSERT INTO mailboxes VALUES (?, ?, ?, ?, 'Active', 0, ?, ?)").run(
      id,
      me(ctx).network_id,
      name.replace(/\W/g, '').slice(0, 12).toUpperCase() || `MB${id}`,
      name,
      now,
      now,
    );
    return ok(id);
  },

  TPInfo: (ctx) => {
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    return ok(gridRecord(ctx.world, g));
  },
  TPList: (ctx) => {
    const rows = ctx.world.store.db.prepare('SELECT * FROM grid_ids ORDER BY grid_id').all() as GridIdRow[];
    return ok(
      rows
        .filter((g) => canSeeMailbox(ctx.world, me(ctx), g.mailbox_id) && (ctx.params.ShowInactive === true || g.status === 'Active'))
        .map((g) => gridRecord(ctx.world, g)),
    );
  },
  TPAdd: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const q = str(ctx.params.Qualifier).trim();
    const id = str(ctx.params.ID).trim();
    if (q === '' || q.length > 4) throw fault(RET.InvalidDataLength, 'Qualifier must be 1 to 4 characters (max=4)', 'Qualifier');
    if (id === '' || id.length > 35) throw fault(RET.InvalidDataLength, 'ID must be 1 to 35 characters (max=35)', 'ID');
    if (ctx.world.store.gridIdByName(q, id)) throw fault(RET.IDExistsOnNetwork, `${q}/${id} already exists`, 'ID');
    const db = ctx.world.store.db;
    const gridId = ((db.prepare('SELECT max(grid_id) AS m FROM grid_ids').get() as { m: number | null }).m ?? 5000) + 1;
    db.prepare("INSERT INTO grid_ids VALUES (?, ?, ?, ?, ?, ?, 'Active', 'ProductionA', 'X12')").run(
      gridId,
      me(ctx).mailbox_id,
      me(ctx).network_id,
      q,
      id,
      str(ctx.params.Description) || null,
    );
    return ok(gridId);
  },
  TPSearch: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM grid_ids WHERE qualifier LIKE ? AND id LIKE ? ORDER BY grid_id')
      .all(str(ctx.params.Qualifier) || '%', like(ctx.params.ID)) as GridIdRow[];
    return ok(rows.filter((g) => ctx.params.ShowInactive === true || g.status === 'Active').map((g) => gridRecord(ctx.world, g)));
  },
  TPMove: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    ctx.world.store.db
      .prepare('UPDATE grid_ids SET mailbox_id = ?, network_id = ? WHERE grid_id = ?')
      .run(me(ctx).mailbox_id, me(ctx).network_id, g.grid_id);
    return ok(g.grid_id);
  },

  InterconnectInfo: (ctx) => ok(interconnectRecord(interconnectRow(ctx, num(ctx.params.InterconnectID)))),
  InterconnectAdd: (ctx) => {
    const a = grid(ctx, ctx.params.GridID1, 'GridID1');
    const b = grid(ctx, ctx.params.GridID2, 'GridID2');
    if (!canSeeMailbox(ctx.world, me(ctx), a.mailbox_id))
      throw fault(RET.AccessDenied, `No authority over trading partner id ${a.grid_id}`, 'GridID1');
    const db = ctx.world.store.db;
    const existing = db
      .prepare(
        "SELECT 1 FROM interconnects WHERE status != 'Cancelled' AND ((grid_id_from = ? AND grid_id_to = ?) OR (grid_id_from = ? AND grid_id_to = ?))",
      )
      .get(a.grid_id, b.grid_id, b.grid_id, a.grid_id);
    if (existing) throw fault(RET.Duplicate, `An interconnect between ${a.grid_id} and ${b.grid_id} exists`, 'GridID2');
    const id = ((db.prepare('SELECT max(interconnect_id) AS m FROM interconnects').get() as { m: number | null }).m ?? 7000) + 1;
    const now = iso(ctx.world.now());
    db.prepare('INSERT INTO interconnects VALUES (?, ?, ?, ?, ?, ?)').run(
      id,
      a.grid_id,
      b.grid_id,
      ctx.params.Preconfirm === true ? 'Active' : 'Pending',
      now,
      now,
    );
    return ok(interconnectRecord(interconnectRow(ctx, id)));
  },
  InterconnectListByGridID: (ctx) => {
    const g1 = num(ctx.params.GridID1);
    const g2 = num(ctx.params.GridID2);
    const match = (i: InterconnectRow): boolean => {
      const ends = [i.grid_id_from, i.grid_id_to];
      return (g1 === 0 || ends.includes(g1)) && (g2 === 0 || ends.includes(g2));
    };
    return ok(visibleInterconnects(ctx).filter(match).map(interconnectRecord));
  },
  InterconnectListByStatus: (ctx) => {
    const g = num(ctx.params.GridID);
    return ok(
      visibleInterconnects(ctx)
        .filter((i) => interconnectRecord(i).Status === str(ctx.params.Status) && (g === 0 || i.grid_id_from === g || i.grid_id_to === g))
        .map(interconnectRecord),
    );
  },
  InterconnectCount: (ctx) => {
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    // Status is a plain string so that an omitted one means "any" (an enum's zero would be Pending).
    const status = str(ctx.params.Status);
    const known = typeDef('StatusInterconnect');
    if (status !== '' && known.kind === 'enum' && !known.values.includes(status))
      throw fault(RET.InvalidDataType, `Status ${status} is not one of ${known.values.join(', ')}`, 'Status');
    const ofGrid = (i: InterconnectRow): boolean => i.grid_id_from === g.grid_id || i.grid_id_to === g.grid_id;
    return ok(visibleInterconnects(ctx).filter((i) => ofGrid(i) && (status === '' || interconnectRecord(i).Status === status)).length);
  },
  InterconnectCancel: (ctx) => {
    const i = interconnectRow(ctx, num(ctx.params.InterconnectID));
    ctx.world.store.db
      .prepare("UPDATE interconnects SET status = 'Cancelled', modified = ? WHERE interconnect_id = ?")
      .run(iso(ctx.world.now()), i.interconnect_id);
    return ok(true);
  },

  InterchangeInBox: interchangeList('in'),
  InterchangeOutBox: interchangeList('out'),
  InterchangeInfo: (ctx) => ok(interchangeRecord(ctx.world, interchange(ctx))),
  InterchangeResend: (ctx) => {
    const r = interchange(ctx);
    return ok({ InterchangeID: r.interchange_id, StatusCode: r.status, StatusMessage: 'Resent' });
  },
  InterchangeCancel: (ctx) => {
    const r = interchange(ctx);
    if (r.status === 'Delivered') throw fault(RET.DataError, `Interchange ${r.interchange_id} is already delivered`, 'InterchangeID');
    ctx.world.store.db.prepare("UPDATE interchanges SET status = 'Cancelled' WHERE interchange_id = ?").run(r.interchange_id);
    return ok(true);
  },

  UserInfo: (ctx) => ok(userRecord(user(ctx, ctx.params.UserID))),
  UserList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM users WHERE login LIKE ? ORDER BY user_id')
      .all(like(ctx.params.Name)) as UserRow[];
    return ok(rows.filter((u) => canSeeMailbox(ctx.world, me(ctx), u.mailbox_id)).map(userRecord));
  },
  UserAdd: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const p = ctx.params;
    const mailboxId = mailboxOf(ctx, p.MailboxID);
    const login = str(p.LoginName).trim();
    if (login === '') throw fault(RET.InvalidDataLength, 'LoginName is empty', 'LoginName');
    const db = ctx.world.store.db;
    if (db.prepare('SELECT 1 FROM users WHERE login = ?').get(login)) throw fault(RET.Duplicate, `LoginName ${login} exists`, 'LoginName');
    const level = str(p.AuthLevel) === 'NoChange' ? 'MailboxUser' : str(p.AuthLevel);
    if (!atLeast(me(ctx), level as Parameters<typeof atLeast>[1])) throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    const mb = db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number };
    const id = ((db.prepare('SELECT max(user_id) AS m FROM users').get() as { m: number | null }).m ?? 0) + 1;
    db.prepare("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'Active', ?)").run(
      id,
      login,
      str(p.EMail) || null,
      str(p.FirstName) || null,
      str(p.LastName) || null,
      str(p.Password) || null,
      level,
      mb.network_id,
      mailboxId,
      iso(ctx.world.now()),
    );
    return ok(id);
  },
  UserUpdate: (ctx) => {
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    const p = ctx.params;
    const level = str(p.AuthLevel) === 'NoChange' ? u.auth_level : str(p.AuthLevel);
    if (level !== u.auth_level && !atLeast(me(ctx), level as Parameters<typeof atLeast>[1]))
      throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    ctx.world.store.db
      .prepare('UPDATE users SET first_name = ?, last_name = ?, email = ?, auth_level = ? WHERE user_id = ?')
      .run(str(p.FirstName) || u.first_name, str(p.LastName) || u.last_name, str(p.EMail) || u.email, level, u.user_id);
    return ok(true);
  },
  UserSetAuthLevel: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    const level = str(ctx.params.AuthLevel);
    if (level === 'NoChange') return ok(true);
    if (!atLeast(me(ctx), level as Parameters<typeof atLeast>[1])) throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    ctx.world.store.db.prepare('UPDATE users SET auth_level = ? WHERE user_id = ?').run(level, u.user_id);
    return ok(true);
  },
};
