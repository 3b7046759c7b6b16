// Retention under `gridsync once`, from the outside: the built CLI as a child process against a
// scripted service (not our emulator), real folders, the SQLite journal and a real PostgreSQL one.
// `once` never pruned: run from cron every few minutes, its sentDir (with sentRetentionDays),
// errorDir and journal grew for ever. Now it runs the pass of `run` after its transfers, at most
// once a day across processes (the last pass is recorded in the journal), never in a dry run, and
// a pass that fails is one warning that leaves the exit code alone. Beside it, two gaps of the pass
// itself: sent rows pruned inside a duplicate window longer than journalDays let a duplicate out,
// and an error report whose file an operator deleted stayed for good.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, openJournal, OutboundJournal } from '../../../src/journal/index.js';
import { RETENTION_RECORD_KEY } from '../../../src/daemon/retention-pass.js';
import { startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';

const server = postgresForFile('the retention record of `once` on a PostgreSQL journal is not tested');
const MB = 1001;
const DAY = 86_400_000;

interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** The config's `journal` section: none for SQLite, a fresh database for PostgreSQL. */
  journal(): Promise<Record<string, unknown> | undefined>;
  /** Makes every write of the retention record fail, as a database can refuse a write. */
  refuseRecord(w: World): Promise<void>;
}

let databases = 0;
const backends: Backend[] = [
  {
    name: 'sqlite',
    journal: async () => undefined,
    refuseRecord: async (w) => {
      const db = new Database(path.join(w.where.stateDir, 'journal.sqlite'));
      try {
        db.exec(
          `CREATE TRIGGER refuse_record BEFORE INSERT ON meta WHEN NEW.key = '${RETENTION_RECORD_KEY}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
        );
      } finally {
        db.close();
      }
    },
  },
  ...(server.available
    ? [
        {
          name: 'postgres' as const,
          journal: async () => ({ url: await server.createDatabase(`once_retention_${++databases}`), lease: '3s', renew: '750ms' }),
          refuseRecord: async (w: World) => {
            const c = new pg.Client({ connectionString: w.where.url });
            await c.connect();
            try {
              await c.query(
                `CREATE FUNCTION refuse_record() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`,
              );
              await c.query(
                `CREATE TRIGGER refuse_record BEFORE INSERT OR UPDATE ON meta FOR EACH ROW WHEN (NEW.key = '${RETENTION_RECORD_KEY}') EXECUTE FUNCTION refuse_record()`,
              );
            } finally {
              await c.end();
            }
          },
        },
      ]
    : []),
];

interface World {
  readonly dir: string;
  readonly config: string;
  readonly where: { url: string | undefined; stateDir: string };
  readonly folder: (name: 'inbox' | 'outbox' | 'sent' | 'error') => string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(): Promise<ScriptedService> {
  const svc = await startScriptedService({ mailboxId: MB, apiKey: 'once-retention-key-4Rw8' });
  cleanups.push(() => svc.close());
  return svc;
}

async function makeWorld(
  svc: ScriptedService,
  backend: Pick<Backend, 'journal'> = backends[0] as Backend,
  outbox: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
): Promise<World> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-once-retention-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const folder = (name: string): string => path.join(dir, name);
  for (const f of ['inbox', 'outbox', 'sent', 'error']) fs.mkdirSync(folder(f));
  const journal = await backend.journal();
  const config = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(
    config,
    YAML.stringify({
      api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey },
      stateDir: folder('state'),
      ...(journal ? { journal } : {}),
      log: { level: 'info', pretty: false },
      mailboxes: [
        {
          mailboxId: MB,
          inbox: { dir: folder('inbox') },
          outbox: {
            dir: folder('outbox'),
            sentDir: folder('sent'),
            errorDir: folder('error'),
            stableMs: '50ms',
            sentRetentionDays: 30,
            errorRetentionDays: 30,
            ...outbox,
          },
        },
      ],
      ...top,
    }),
    { mode: 0o600 },
  );
  return { dir, config, where: { url: journal?.url as string | undefined, stateDir: folder('state') }, folder };
}

/** A file last written `days` ago. */
function aged(file: string, days: number, content = 'x'): void {
  fs.writeFileSync(file, content);
  const t = new Date(Date.now() - days * DAY);
  fs.utimesSync(file, t, t);
}

const once = (w: World, ...args: string[]) => startCli(['once', ...args, '-c', w.config], {}, w.dir).exited;

const logLines = (stdout: string): { msg?: string; level?: number; [k: string]: unknown }[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string });

async function withJournal<T>(w: World, fn: (j: Awaited<ReturnType<typeof openJournal>>) => Promise<T>): Promise<T> {
  const j = await openJournal(w.where);
  try {
    return await fn(j);
  } finally {
    await j.close();
  }
}

const lastPass = (w: World): Promise<string | undefined> => withJournal(w, (j) => j.getMeta(RETENTION_RECORD_KEY));

describe.each(backends)('once runs the retention pass, on the $name journal', (backend) => {
  it('prunes old files of sentDir and errorDir, then not again until a day has passed', async () => {
    const svc = await service();
    const w = await makeWorld(svc, backend);
    aged(path.join(w.folder('sent'), 'old.x12'), 40);
    aged(path.join(w.folder('sent'), 'young.x12'), 5);
    aged(path.join(w.folder('error'), 'bad.x12'), 40);
    aged(path.join(w.folder('error'), 'bad.x12.error.json'), 40);

    const first = await once(w);
    expect(first.code, first.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('sent'))).toEqual(['young.x12']);
    expect(fs.readdirSync(w.folder('error'))).toEqual([]);
    const recorded = Date.parse((await lastPass(w)) ?? '');
    expect(Math.abs(Date.now() - recorded)).toBeLessThan(60_000);

    // Five minutes later by cron: the pass is not due, an old file waits for it.
    aged(path.join(w.folder('sent'), 'later.x12'), 40);
    const second = await once(w);
    expect(second.code, second.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('sent')).sort()).toEqual(['later.x12', 'young.x12']);
    expect(logLines(second.stdout).map((l) => l.msg)).not.toContain('retention: old files deleted');

    // A day after the last pass it runs again.
    await withJournal(w, (j) => j.setMeta(RETENTION_RECORD_KEY, new Date(Date.now() - DAY - 3_600_000).toISOString()));
    const third = await once(w);
    expect(third.code, third.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('sent'))).toEqual(['young.x12']);
  });

  it('a pass that fails is one warning: the transfers and the exit code are those of the run', async () => {
    const svc = await service();
    const w = await makeWorld(svc, backend);
    expect((await once(w)).code).toBe(0); // the journal exists, with a record
    await withJournal(w, (j) => j.maintain('DELETE FROM meta WHERE key = ?', RETENTION_RECORD_KEY));
    await backend.refuseRecord(w);
    svc.addInbound('order.x12', x12(41));
    aged(path.join(w.folder('sent'), 'old.x12'), 40);

    const r = await once(w);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('inbox'))).toEqual(['order.x12']);
    expect(svc.confirmed().map((p) => p.fileName)).toEqual(['order.x12']);
    const failed = logLines(r.stdout).filter((l) => l.msg === 'retention pass failed; it runs again at the next check');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 40, err: expect.stringMatching(/refused by the test/) });
    // The files went; only the record did not: the next run tries the pass again.
    expect(fs.readdirSync(w.folder('sent'))).toEqual([]);
    expect(await lastPass(w)).toBeUndefined();
  });

  it('a dry run never prunes', async () => {
    const svc = await service();
    const w = await makeWorld(svc, backend);
    expect((await once(w)).code).toBe(0); // the journal exists (a dry run never creates one)…
    await withJournal(w, (j) => j.maintain('DELETE FROM meta WHERE key = ?', RETENTION_RECORD_KEY)); // …and a pass is due
    aged(path.join(w.folder('sent'), 'old.x12'), 40);
    const dry = await once(w, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('sent'))).toEqual(['old.x12']);
    expect(await lastPass(w)).toBeUndefined();
    // The same config without --dry-run does prune.
    expect((await once(w)).code).toBe(0);
    expect(fs.readdirSync(w.folder('sent'))).toEqual([]);
  });
});

/** A sent file's row, written as a run `daysAgo` days ago left it. */
async function sentRow(w: World, daysAgo: number, name: string, content: string): Promise<void> {
  const clock = Date.now() - daysAgo * DAY;
  const j = Journal.open(path.join(w.where.stateDir, 'journal.sqlite'), { now: () => clock });
  try {
    const outbound = new OutboundJournal(j);
    const row = await outbound.markClaiming(
      MB,
      w.folder('outbox'),
      name,
      path.join(w.folder('outbox'), name),
      path.join(w.dir, 'processing'),
    );
    await outbound.markClaimed(row.id, content.length, crypto.createHash('sha256').update(content).digest('hex'));
    await outbound.markUploading(row.id, clock, clock);
    await outbound.markUploaded(row.id, 9_000_000 + row.id, 'uploaded');
    await outbound.markArchived(row.id, path.join(w.folder('sent'), name));
  } finally {
    await j.close();
  }
}

describe('what the pass keeps', () => {
  it('keeps sent rows as long as a duplicate window longer than journalDays looks back', async () => {
    const svc = await service();
    const w = await makeWorld(svc, undefined, { duplicateWindowMs: '120d' }, { retention: { journalDays: 90 } });
    fs.mkdirSync(w.where.stateDir);
    const inWindow = x12(51);
    await sentRow(w, 100, 'march.x12', inWindow); // past journalDays, inside the window
    await sentRow(w, 130, 'january.x12', x12(52)); // past both

    expect((await once(w)).code).toBe(0);
    const names = await withJournal(w, (j) => j.all<{ file_name: string }>('SELECT file_name FROM outbound_files ORDER BY id'));
    expect(names.map((r) => r.file_name)).toEqual(['march.x12']);

    // The same content exported again: the duplicate check still finds it.
    fs.writeFileSync(path.join(w.folder('outbox'), 'march-again.x12'), inWindow);
    const r = await once(w);
    expect(r.code).toBe(1);
    expect(fs.readFileSync(path.join(w.folder('error'), 'march-again.x12.error.json'), 'utf8')).toMatch(/OUTBOUND_DUPLICATE/);
    expect(svc.requests.filter((q) => q.path === '/v2/parcels/upload')).toEqual([]);
  });

  it('deletes an error report whose file is gone once it is older than errorRetentionDays; never a link, nor anything but a regular file', async () => {
    const svc = await service();
    const w = await makeWorld(svc);
    const error = (name: string): string => path.join(w.folder('error'), name);
    const precious = path.join(w.dir, 'precious.json');
    aged(precious, 400);
    aged(error('deleted-by-hand.x12.error.json'), 40); // its file deleted by an operator: goes
    aged(error('recent.x12.error.json'), 5); // alone, but young: stays
    aged(error('kept.x12'), 5);
    aged(error('kept.x12.error.json'), 40); // its file is young and there: stays with it
    fs.symlinkSync(precious, error('link.x12.error.json'));
    fs.symlinkSync(precious, error('linked.x12')); // a link moved here: its report stays beside it
    aged(error('linked.x12.error.json'), 40);
    execFileSync('mkfifo', [error('fifo.x12.error.json')]);
    fs.mkdirSync(error('folder.x12.error.json'));
    for (const p of [error('fifo.x12.error.json'), error('folder.x12.error.json')]) {
      const t = new Date(Date.now() - 40 * DAY);
      fs.utimesSync(p, t, t);
    }
    aged(error('old.x12'), 40); // a file and its report, both old: they go together
    aged(error('old.x12.error.json'), 40);

    const r = await once(w);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(w.folder('error')).sort()).toEqual([
      'fifo.x12.error.json',
      'folder.x12.error.json',
      'kept.x12',
      'kept.x12.error.json',
      'link.x12.error.json',
      'linked.x12',
      'linked.x12.error.json',
      'recent.x12.error.json',
    ]);
    expect(fs.readFileSync(precious, 'utf8')).toBe('x');
    expect(logLines(r.stdout).filter((l) => l.msg === 'retention: cannot delete')).toEqual([]);
  });
});
