// One mailbox whose own part of every cycle fails must not hold the others. The network's admin
// loses the right to one of the two mailboxes the daemon serves (an administrator demotes the
// key's user through the service's own API): that mailbox's pending list is refused from then on.
// Before, its failure failed the daemon's whole cycle; the mailbox after it in the spread cycle
// never started, and the backoff that followed kept it waiting for good. Now the refused mailbox
// is left out with a pause of its own, the other keeps receiving, /readyz says which mailbox fails
// and why, and the refused one recovers by itself once the right is back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import { eventually } from '../../helpers/daemon-child.js';
import { recorder } from '../../helpers/log-recorder.js';

describe('daemon: a mailbox whose cycle fails', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** Two mailboxes under the network admin's key, the refused-to-be one (partner) first. */
  async function world(schedule: Record<string, unknown>) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-failing-mailbox-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const loaded = parseConfig(
      {
        api: { baseUrl: emu.url, apiKey: 'demo-key-admin' },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule,
        mailboxes: [
          { mailboxId: 1002, name: 'partner', inbox: { dir: 'partner/in' } },
          { mailboxId: 1001, name: 'ours', inbox: { dir: 'ours/in' } },
        ],
      },
      'failing-mailbox-test',
      {},
      dir,
    );
    const files = (p: string): string[] => (fs.existsSync(path.join(dir, p)) ? fs.readdirSync(path.join(dir, p)).sort() : []);
    // The admin (user 13, of mailbox 1001) keeps or loses its network-wide role.
    const role = async (authLevel: 'NetworkAdmin' | 'MailboxAdmin'): Promise<void> => {
      const res = await fetch(`${emu.url}/v2/users/role`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key-root' },
        body: JSON.stringify({ userId: 13, authLevel, networkId: 1, mailboxId: 1001 }),
      });
      expect(res.status).toBe(200);
    };
    const logger = recorder();
    const daemon = await Daemon.open({ loaded, logger, waitForService: true, serveHttp: true });
    cleanups.push(() => daemon.close());
    return { emu, files, role, logger, daemon };
  }

  it('is left out with a backoff of its own; the other mailbox goes on; /readyz names it; it recovers', async () => {
    // 1 s: the spread cycle starts the second mailbox's poll a quarter second after the first's.
    const { emu, files, role, logger, daemon } = await world({ poll: '1s' });
    await daemon.start();
    const url = daemon.httpUrl as string;
    const readyz = async () =>
      (await (await fetch(`${url}/readyz`)).json()) as {
        ready: boolean;
        lastError: string | null;
        failing: { mailbox: string; failures: number; error: string }[];
      };
    await eventually(async () => (await readyz()).ready, 10_000, 'ready');

    // The emulator's request log: the pending lists answered (ours) and refused (partner's).
    const lists = async (): Promise<{ answered: number; refused: number }> => {
      const log = (await (await fetch(`${emu.url}/_emulator/requests`)).json()) as { data: { path: string; status: number }[] };
      const mine = log.data.filter((r) => r.path === '/v2/parcels/pending-inbox-list');
      return { answered: mine.filter((r) => r.status === 200).length, refused: mine.filter((r) => r.status >= 400).length };
    };
    await role('MailboxAdmin');
    const before = await lists();
    await eventually(async () => (await lists()).refused >= 4, 30_000, 'partner refused four times');
    const after = await lists();
    // Ours kept its poll while the partner sat out pauses of 1, 2 and 4 s (before: ours was polled
    // only in the backoff's retry cycles, as rarely as the refused one).
    expect(after.answered - before.answered).toBeGreaterThanOrEqual(after.refused + 2);
    await emu.inject({ mailboxId: 1001, fileName: 'to-ours.x12', content: Buffer.from('ISA*ours~') });
    await emu.inject({ mailboxId: 1002, fileName: 'to-partner.x12', content: Buffer.from('ISA*partner~') });
    await eventually(() => files('ours/in').includes('to-ours.x12'), 10_000, 'ours keeps receiving while partner fails');
    expect(files('partner/in')).not.toContain('to-partner.x12');

    const r = await readyz();
    expect(r.ready).toBe(false);
    expect(r.failing.map((f) => f.mailbox)).toEqual(['partner']);
    expect(r.failing[0]?.failures).toBeGreaterThanOrEqual(2);
    expect(r.lastError).toMatch(/^partner: .*parcels\.pendingInboxList: HTTP 40[34]/);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/gridsync_last_cycle_success\{mailbox="partner"\} 0/);
    expect(metrics).toMatch(/gridsync_last_cycle_success\{mailbox="ours"\} 1/);
    // Its own pause: the refusals come further apart (1 s, 2 s, …), not at every 1 s poll. Told at
    // error once, then at debug: a mailbox refused for a night was an error line every 5 minutes.
    const refusals = logger.lines.filter((l) => l.obj.mailbox === 'partner' && l.msg.startsWith('mailbox cycle failed'));
    expect(refusals.map((l) => l.obj.retryInMs)).toEqual(refusals.map((_, i) => 1000 * 2 ** i));
    expect(refusals.map((l) => l.level)).toEqual(refusals.map((_, i) => (i === 0 ? 'error' : 'debug')));
    expect(refusals[0]?.obj.code).toBe('GRID_API_ERROR');
    expect(logger.lines.some((l) => /cycle failed/.test(l.msg) && l.obj.mailbox === undefined)).toBe(false);

    await role('NetworkAdmin');
    await eventually(() => files('partner/in').includes('to-partner.x12'), 20_000, 'partner receives again');
    await eventually(async () => (await readyz()).ready, 10_000, 'ready again');
    expect((await readyz()).failing).toEqual([]);
    const answers = logger.lines.filter((l) => l.msg === 'the mailbox answers again' && l.obj.mailbox === 'partner');
    expect(answers).toHaveLength(1);
    expect(answers[0]?.obj).toMatchObject({ code: 'GRID_API_ERROR', suppressed: expect.any(Number) as number });
    expect(answers[0]?.obj.after).toBe((answers[0]?.obj.suppressed as number) + 1);
  });

  it('with cron windows: a mailbox left out is tried again within the window, not at the next one', async () => {
    // A window that opens once a year: every cycle here is the one the test starts, or the scheduler's retry.
    const { emu, files, role, logger, daemon } = await world({ poll: '1s', cron: ['0 0 0 1 1 *'], timezone: 'UTC' });
    await daemon.start();
    await role('MailboxAdmin');
    await emu.inject({ mailboxId: 1002, fileName: 'to-partner.x12', content: Buffer.from('ISA*partner~') });
    await emu.inject({ mailboxId: 1001, fileName: 'to-ours.x12', content: Buffer.from('ISA*ours~') });
    daemon.triggerCycle('window');
    await eventually(() => files('ours/in').includes('to-ours.x12'), 10_000, 'ours delivered in the window');
    await eventually(() => logger.lines.some((l) => l.level === 'error' && l.obj.mailbox === 'partner'), 10_000, 'partner refused');
    await role('NetworkAdmin');
    await eventually(() => files('partner/in').includes('to-partner.x12'), 20_000, 'partner delivered by a retry within the window');
  });
});
