/**
 * Instances on one PostgreSQL journal whose configs list different mailboxes: hosts given parts of
 * the mailboxes, or a rolling config change (one host restarted with a mailbox removed while the
 * other still serves it). The fair share split every instance's own mailboxes among every live
 * instance, so an instance counted the other as below its share of mailboxes it does not serve:
 * it handed them back (or never took them), and nobody took them again — the mailbox was never
 * served while both ran. Two `gridsync run` children of the built CLI, an emulator with mailboxes
 * 1001 and 1002 (the network admin's key sees both), one real PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it, type TestContext } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { postgresForFile, queryIn } from '../../helpers/postgres.js';

const server = postgresForFile('instances serving different mailboxes on one journal are not tested');

const LEASE_MS = 3_000;
const RENEW_MS = 750;

async function world(ctx: TestContext, db: string) {
  const url = await server.createDatabase(db);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mailbox-sets-'));
  const emu = await startEmulator({ port: 0 });
  const children: CliChild[] = [];
  ctx.onTestFinished(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await emu.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const inbox = (id: number): string => path.join(dir, 'share', `in-${id}`);
  const start = (name: string, mailboxIds: number[]): CliChild => {
    const configFile = path.join(dir, `${name}.yaml`);
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    for (const id of mailboxIds) fs.mkdirSync(inbox(id), { recursive: true });
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: emu.url, apiKey: 'demo-key-admin' },
        stateDir: path.join(dir, name),
        log: { level: 'info', pretty: false },
        schedule: { poll: '300ms' },
        journal: { lease: `${LEASE_MS}ms`, renew: `${RENEW_MS}ms` },
        instance: { name },
        mailboxes: mailboxIds.map((id) => ({ mailboxId: id, name: `mb${id}`, inbox: { dir: inbox(id) } })),
      }),
    );
    const child = startCli(['run', '-c', configFile], { GRIDSYNC_JOURNAL_URL: url });
    children.push(child);
    return child;
  };
  let control = 1;
  const send = async (id: number, fileName: string): Promise<void> =>
    void (await emu.inject({ mailboxId: id, fileName, content: Buffer.from(x12(control++)) }));
  const delivered = (id: number, fileName: string): boolean => fs.existsSync(path.join(inbox(id), fileName));
  /** The live leases: mailbox → owner (none before the first instance made the journal's tables). */
  const holders = async (): Promise<Map<number, string>> => {
    const rows = await queryIn<{ mailbox_id: string; owner: string }>(
      url,
      'SELECT mailbox_id, owner FROM lease WHERE expires_at > clock_timestamp()',
    ).catch(() => []);
    return new Map(rows.map((r) => [Number(r.mailbox_id), r.owner]));
  };
  const takes = (c: CliChild): number => (c.output().match(/"msg":"mailbox lease taken"/g) ?? []).length;
  return { start, send, delivered, holders, takes };
}

describe.skipIf(!server.available).concurrent('instances serving different mailboxes on one journal', () => {
  it('hosts given parts of the mailboxes: each serves its own', async (ctx) => {
    const w = await world(ctx, 'mailbox_sets_parts');
    const a = w.start('host-a', [1001]);
    const b = w.start('host-b', [1002]);
    await a.waitFor(/"msg":"gridsync started"/, 30_000);
    await b.waitFor(/"msg":"gridsync started"/, 30_000);
    // Both announced; a few lease rounds, so that what either would hand back is handed back.
    await new Promise((r) => setTimeout(r, 4 * RENEW_MS));
    await w.send(1001, 'to-a.x12');
    await w.send(1002, 'to-b.x12');
    await eventually(() => w.delivered(1001, 'to-a.x12') && w.delivered(1002, 'to-b.x12'), 20_000, 'both parcels placed').catch(
      async (err: unknown) => {
        throw new Error(`${String(err)}; live leases: ${JSON.stringify([...(await w.holders())])}`);
      },
    );
    expect(await w.holders()).toEqual(
      new Map([
        [1001, 'host-a'],
        [1002, 'host-b'],
      ]),
    );
  }, 60_000);

  it('a rolling config change: the instance serving fewer joins the one serving more; every mailbox served, no flapping', async (ctx) => {
    const w = await world(ctx, 'mailbox_sets_rolling');
    const b = w.start('host-b', [1001, 1002]);
    await eventually(async () => (await w.holders()).size === 2, 30_000, 'host-b holds both mailboxes');
    // host-a restarted with 1002 removed from its config; host-b still lists it.
    const a = w.start('host-a', [1001]);
    await a.waitFor(/"msg":"gridsync started"/, 30_000);
    await new Promise((r) => setTimeout(r, 4 * RENEW_MS));
    await w.send(1001, 'first.x12');
    await w.send(1002, 'second.x12');
    await eventually(() => w.delivered(1001, 'first.x12') && w.delivered(1002, 'second.x12'), 20_000, 'both parcels placed').catch(
      async (err: unknown) => {
        throw new Error(`${String(err)}; live leases: ${JSON.stringify([...(await w.holders())])}`);
      },
    );
    const live = await w.holders();
    expect([...live.keys()].sort()).toEqual([1001, 1002]);
    // Settled: no lease changes hands over several lease rounds.
    const before = w.takes(a) + w.takes(b);
    await new Promise((r) => setTimeout(r, LEASE_MS + 2 * RENEW_MS));
    expect(w.takes(a) + w.takes(b)).toBe(before);
    expect(await w.holders()).toEqual(live);
  }, 60_000);
});
