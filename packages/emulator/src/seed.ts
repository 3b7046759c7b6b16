/**
 * Seeding the emulator: the default world (docs/contracts.md) or a YAML fixture with the same
 * shape. Applied only to an empty store, so a `--data` file keeps its state across restarts.
 */
import fs from 'node:fs';
import YAML, { YAMLError } from 'yaml';
import { z } from 'zod';
import { AuthLevel, EDIStandard, NetworkContactType, RoutingGroup, Status } from '@gridsync/protocol/wire';
import type { EmulatorStore } from './store.js';
import { EmulatorConfigError } from './config-error.js';
import { GridsyncError } from '@gridsync/protocol/errors';
import { describeIssue, formatKeyPath, keyTree } from '@gridsync/protocol/issues';

/** An issue at each entry whose `key` repeats an earlier entry's (the value is not shown: it may be a key). */
function takenOnce<T>(ctx: z.RefinementCtx, list: string, entries: readonly T[], key: string, of: (e: T) => unknown): void {
  const first = new Map<unknown, number>();
  entries.forEach((e, i) => {
    const v = of(e);
    if (v === undefined) return;
    const seen = first.get(v);
    if (seen === undefined) first.set(v, i);
    else ctx.addIssue({ code: 'custom', path: [list, i, key], message: `the same as ${list}[${seen}]'s: it must be unique` });
  });
}

// Strict at every level: a misspelt key inside an entry (`autoAcknowlege`) was dropped silently,
// and the emulator ran with the default in its place.
export const SeedFixture = z
  .object({
    networks: z.array(
      z.strictObject({
        networkId: z.number().int(),
        uniqueId: z.string(),
        companyName: z.string(),
        status: Status.default('Active'),
        contacts: z
          .array(
            z.strictObject({
              contactType: NetworkContactType,
              name: z.string().optional(),
              email: z.string().optional(),
              phone: z.string().optional(),
            }),
          )
          .default([]),
      }),
    ),
    mailboxes: z.array(
      z.strictObject({
        mailboxId: z.number().int(),
        networkId: z.number().int(),
        uniqueId: z.string().max(12),
        companyName: z.string(),
        status: Status.default('Active'),
        /** A demo trading partner: answers every interchange it receives with a 997 / CONTRL. */
        autoAcknowledge: z.boolean().default(false),
      }),
    ),
    gridIds: z.array(
      z.strictObject({
        gridId: z.number().int(),
        mailboxId: z.number().int(),
        qualifier: z.string(),
        id: z.string(),
        description: z.string().optional(),
        status: Status.default('Active'),
        ediStandard: EDIStandard.default('X12'),
        routingGroup: RoutingGroup.default('ProductionA'),
      }),
    ),
    interconnects: z
      .array(
        z.strictObject({
          interconnectId: z.number().int(),
          gridIdFrom: z.number().int(),
          gridIdTo: z.number().int(),
          status: Status.default('Active'),
        }),
      )
      .default([]),
    users: z.array(
      z.strictObject({
        userId: z.number().int(),
        login: z.string(),
        email: z.string().optional(),
        password: z.string().optional(),
        authLevel: AuthLevel,
        networkId: z.number().int(),
        mailboxId: z.number().int(),
        apiKey: z.string().optional(),
      }),
    ),
  })
  .strict()
  .superRefine((seed, ctx) => {
    // What the store keeps once: a second one failed inside SQLite, in its words, as a bug (exit 3).
    takenOnce(ctx, 'networks', seed.networks, 'networkId', (n) => n.networkId);
    takenOnce(ctx, 'mailboxes', seed.mailboxes, 'mailboxId', (m) => m.mailboxId);
    takenOnce(ctx, 'gridIds', seed.gridIds, 'gridId', (g) => g.gridId);
    takenOnce(ctx, 'gridIds', seed.gridIds, 'id', (g) => `${g.qualifier}/${g.id}`);
    takenOnce(ctx, 'interconnects', seed.interconnects, 'interconnectId', (i) => i.interconnectId);
    takenOnce(ctx, 'users', seed.users, 'userId', (u) => u.userId);
    takenOnce(ctx, 'users', seed.users, 'apiKey', (u) => u.apiKey);
    const mailboxes = new Set(seed.mailboxes.map((m) => m.mailboxId));
    seed.gridIds.forEach((g, i) => {
      if (!mailboxes.has(g.mailboxId))
        ctx.addIssue({
          code: 'custom',
          path: ['gridIds', i, 'mailboxId'],
          message: `no mailbox ${g.mailboxId} among the seed's mailboxes`,
        });
    });
  });
export type SeedFixture = z.input<typeof SeedFixture>;

/** The default world: our mailbox 1001, a demo partner 1002 that acknowledges, users with known keys. */
/** The Root user's key of the default seed: fine on loopback, refused for an exposed emulator. */
export const DEFAULT_ROOT_KEY = 'demo-key-root';

export function defaultSeed(rootKey = DEFAULT_ROOT_KEY): SeedFixture {
  return {
    networks: [
      {
        networkId: 1,
        uniqueId: 'DEMONET',
        companyName: 'Demo Network',
        contacts: [
          { contactType: 'Owner', name: 'Dana Owner', email: 'owner@net.example', phone: '+1 555 0100' },
          { contactType: 'Errors', name: 'EDI Support', email: 'errors@net.example', phone: '+1 555 0101' },
        ],
      },
    ],
    mailboxes: [
      { mailboxId: 1001, networkId: 1, uniqueId: 'OURCO', companyName: 'Our Company' },
      { mailboxId: 1002, networkId: 1, uniqueId: 'DEMOPARTNER', companyName: 'Demo Partner', autoAcknowledge: true },
    ],
    gridIds: [
      { gridId: 5001, mailboxId: 1001, qualifier: 'ZZ', id: 'GRIDSYNC', description: 'Our Company' },
      { gridId: 5002, mailboxId: 1002, qualifier: 'ZZ', id: 'DEMOPARTNER', description: 'Demo Partner' },
    ],
    interconnects: [{ interconnectId: 7001, gridIdFrom: 5001, gridIdTo: 5002 }],
    users: [
      {
        userId: 11,
        login: 'erp',
        email: 'erp@ourco.example',
        password: 'Demo-pass1',
        authLevel: 'MailboxAdmin',
        networkId: 1,
        mailboxId: 1001,
        apiKey: 'demo-key-1001',
      },
      {
        userId: 12,
        login: 'partner',
        email: 'edi@partner.example',
        password: 'Demo-pass1',
        authLevel: 'MailboxAdmin',
        networkId: 1,
        mailboxId: 1002,
        apiKey: 'demo-key-1002',
      },
      {
        userId: 13,
        login: 'admin',
        email: 'admin@net.example',
        password: 'Demo-pass1',
        authLevel: 'NetworkAdmin',
        networkId: 1,
        mailboxId: 1001,
        apiKey: 'demo-key-admin',
      },
      {
        userId: 14,
        login: 'root',
        email: 'root@net.example',
        password: 'Demo-pass1',
        authLevel: 'Root',
        networkId: 1,
        mailboxId: 1001,
        apiKey: rootKey,
      },
    ],
  };
}

/** The seed file is invalid; the message names the entry. */
export class EmulatorSeedError extends GridsyncError {
  readonly code = 'EMULATOR_SEED';
}

const SEED_KEYS = keyTree(SeedFixture);

/**
 * Reads a YAML fixture. Its errors are worded as the daemon's config errors are: each key as it is
 * written (`mailboxes[0].networkId`) with what it takes, not zod's "Invalid input"; and YAML that
 * does not parse is the file's fault (EMULATOR_SEED, exit 2), not a bug.
 */
export function loadSeedFile(file: string): SeedFixture {
  let raw: unknown;
  try {
    raw = YAML.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if (!(err instanceof YAMLError)) throw err;
    throw new EmulatorSeedError(`seed ${file}: not valid YAML: ${err.message.split('\n')[0]?.replace(/:$/, '') ?? ''}`);
  }
  return parseSeed(raw, file);
}

/** A fixture checked, or an EmulatorSeedError naming each refused key of `source` (the file). */
function parseSeed(raw: unknown, source: string): z.output<typeof SeedFixture> {
  const parsed = SeedFixture.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.slice(0, 5).map((i) => `  ${formatKeyPath(i.path)}: ${describeIssue(i, raw, SEED_KEYS)}`);
    throw new EmulatorSeedError(`seed ${source} is invalid:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * Why the root key cannot be given: it becomes the API key of every Root user, and API keys are
 * unique — a clash failed inside SQLite, in its words, as a bug (exit 3); with no Root user it is
 * nobody's key, and the emulator ran as if it had not been given. One line per clash, `label(i)`
 * naming user i, `advice` what to do about several Root users or none; the key is never shown.
 */
function rootKeyRefusal(
  what: string,
  users: readonly { readonly authLevel: string; readonly apiKey?: string | null | undefined }[],
  rootKey: string,
  label: (i: number) => string,
  advice: { readonly several: string; readonly none: string },
): string | undefined {
  const roots = users.flatMap((u, i) => (u.authLevel === 'Root' ? [i] : []));
  if (roots.length === 0)
    return `${what} has no Root user to take the root key (--root-key-file, --root-key): it would be nobody's API key; ${advice.none}`;
  const clashes = roots.length > 1 ? [`${roots.map(label).join(', ')}: ${roots.length} Root users: ${advice.several}`] : [];
  users.forEach((u, i) => {
    if (u.authLevel !== 'Root' && u.apiKey === rootKey) clashes.push(`${label(i)}.apiKey: the same as the root key: it must be unique`);
  });
  if (clashes.length === 0) return undefined;
  return `${what} cannot take the root key (--root-key-file, --root-key), which becomes the API key of every Root user, and keys are unique:\n${clashes.map((c) => `  ${c}`).join('\n')}`;
}

/** An existing store started with a root key: every Root user's key becomes it. */
export function applyRootKey(store: EmulatorStore, rootKey: string, dataFile: string): void {
  const users = store.db.prepare('SELECT user_id AS userId, auth_level AS authLevel, api_key AS apiKey FROM users').all() as {
    userId: number;
    authLevel: string;
    apiKey: string | null;
  }[];
  const refusal = rootKeyRefusal(`data file ${dataFile}`, users, rootKey, (i) => `user ${users[i]?.userId}`, {
    several: 'start without a root key (they keep their keys)',
    none: 'start without a root key',
  });
  if (refusal) throw new EmulatorConfigError(refusal);
  store.db.prepare("UPDATE users SET api_key = ? WHERE auth_level = 'Root'").run(rootKey);
}

/** Seeds an empty store; `source` names the fixture in errors (its file). */
export function applySeed(store: EmulatorStore, fixture: SeedFixture, nowIso: string, rootKey?: string, source = '(given in code)'): void {
  const seed = parseSeed(fixture, source);
  const refusal =
    rootKey &&
    rootKeyRefusal(`seed ${source}`, seed.users, rootKey, (i) => `users[${i}]`, {
      several: 'keep one in the seed',
      none: 'add a user with authLevel: Root, or start without a root key',
    });
  if (refusal) throw new EmulatorSeedError(refusal);
  const networkOf = new Map(seed.mailboxes.map((m) => [m.mailboxId, m.networkId]));
  const db = store.db;
  db.transaction(() => {
    for (const n of seed.networks) {
      db.prepare('INSERT INTO networks VALUES (?, ?, ?, ?, ?, ?)').run(n.networkId, n.uniqueId, n.companyName, n.status, nowIso, nowIso);
      for (const c of n.contacts) {
        store.setSetting('network', n.networkId, `contact.${c.contactType}`, {
          name: c.name ?? null,
          email: c.email ?? null,
          phone: c.phone ?? null,
        });
      }
    }
    for (const m of seed.mailboxes) {
      db.prepare('INSERT INTO mailboxes VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        m.mailboxId,
        m.networkId,
        m.uniqueId,
        m.companyName,
        m.status,
        m.autoAcknowledge ? 1 : 0,
        nowIso,
        nowIso,
      );
    }
    for (const g of seed.gridIds) {
      db.prepare('INSERT INTO grid_ids VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
        g.gridId,
        g.mailboxId,
        networkOf.get(g.mailboxId),
        g.qualifier,
        g.id,
        g.description ?? null,
        g.status,
        g.routingGroup,
        g.ediStandard,
      );
    }
    for (const i of seed.interconnects) {
      db.prepare('INSERT INTO interconnects VALUES (?, ?, ?, ?, ?, ?)').run(
        i.interconnectId,
        i.gridIdFrom,
        i.gridIdTo,
        i.status,
        nowIso,
        nowIso,
      );
    }
    for (const u of seed.users) {
      const key = rootKey && u.authLevel === 'Root' ? rootKey : u.apiKey;
      db.prepare('INSERT INTO users VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?, ?)').run(
        u.userId,
        u.login,
        u.email ?? null,
        u.password ?? null,
        u.authLevel,
        u.networkId,
        u.mailboxId,
        key ?? null,
        'Active',
        nowIso,
      );
    }
  })();
}
