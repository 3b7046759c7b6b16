// Post-delivery hooks: an argv run after each delivered file, with the item in GRIDSYNC_HOOK_*
// variables, never a shell; a failing or hanging hook never costs the file; the daemon's own
// GRIDSYNC_* settings (the API key among them) do not reach the hook.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import { createLogger } from '../../../src/daemon/index.js';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

describe('daemon: post-delivery hooks', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-hooks-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    // The hook appends what it was given to a file: argv and the environment it saw.
    const script = path.join(dir, 'hook.mjs');
    fs.writeFileSync(
      script,
      `import fs from 'node:fs';
const out = process.argv[2];
fs.appendFileSync(out, JSON.stringify({ argv: process.argv.slice(3), env: process.env }) + '\\n');
if (process.env.GRIDSYNC_HOOK_EVENT === 'received' && process.argv[3] === 'fail') { process.stderr.write('import refused'); process.exit(3); }
if (process.argv[3] === 'hang') setTimeout(() => {}, 60_000);
`,
    );
    fs.mkdirSync(path.join(dir, 'out'), { recursive: true });
    return { dir, emu, script, calls: path.join(dir, 'calls.jsonl') };
  }

  /** The hooks' lines written so far: a line a hook is still appending is left for the next read. */
  const calls = (file: string): Array<{ argv: string[]; env: Record<string, string> }> => {
    if (!fs.existsSync(file)) return [];
    const text = fs.readFileSync(file, 'utf8');
    return text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { argv: string[]; env: Record<string, string> });
  };

  it('runs the argv after each received and each sent file, with the item in the environment and no shell', async () => {
    const w = await setup();
    const hostile = 'a; touch pwned $(id).x12';
    const loaded = parseConfig(
      {
        api: { baseUrl: w.emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        hooks: { afterReceive: [process.execPath, w.script, w.calls, 'in'], afterSend: [process.execPath, w.script, w.calls, 'out'] },
        mailboxes: [
          {
            mailboxId: 1001,
            name: 'ours',
            inbox: { dir: 'in' },
            outbox: { dir: 'out', sentDir: 'sent', errorDir: 'err', stableMs: '50ms' },
          },
        ],
      },
      'hooks-test',
      {},
      w.dir,
    );
    const content = Buffer.from('ISA*hook~');
    const parcelId = await w.emu.inject({ mailboxId: 1001, fileName: hostile, content });
    fs.writeFileSync(path.join(w.dir, 'out', 'order.x12'), x12(71));
    process.env.GRIDSYNC_API_KEY = 'secret-that-must-not-leak';
    cleanups.push(() => {
      delete process.env.GRIDSYNC_API_KEY;
    });
    const daemon = await Daemon.open({ loaded, logger: silentLogger, waitForService: false });
    cleanups.push(() => daemon.close());
    await daemon.runOnce();
    await eventually(() => calls(w.calls).length >= 2, 10_000, 'both hooks ran');
    const seen = calls(w.calls);
    const received = seen.find((c) => c.env.GRIDSYNC_HOOK_EVENT === 'received');
    const sent = seen.find((c) => c.env.GRIDSYNC_HOOK_EVENT === 'sent');
    expect(received?.argv).toEqual(['in']);
    expect(received?.env.GRIDSYNC_HOOK_PARCEL_ID).toBe(String(parcelId));
    expect(received?.env.GRIDSYNC_HOOK_FILE_NAME).toBe(hostile);
    expect(received?.env.GRIDSYNC_HOOK_MAILBOX).toBe('ours');
    expect(fs.readFileSync(received?.env.GRIDSYNC_HOOK_PATH as string)).toEqual(content);
    expect(sent?.argv).toEqual(['out']);
    expect(sent?.env.GRIDSYNC_HOOK_PATH).toBe(path.join(w.dir, 'sent', 'order.x12'));
    expect(Number(sent?.env.GRIDSYNC_HOOK_PARCEL_ID)).toBeGreaterThan(0);
    // No shell ever saw the name, and the daemon's settings did not reach the hook.
    expect(fs.readdirSync(w.dir).some((f) => f.startsWith('pwned'))).toBe(false);
    for (const c of seen) expect(JSON.stringify(c.env)).not.toContain('secret-that-must-not-leak');
    expect(JSON.stringify(seen)).not.toContain('demo-key-1001');
  });

  it('a hook that fails, hangs or does not exist is logged and never costs the file', async () => {
    const w = await setup();
    const lines: string[] = [];
    const logger = createLogger('info', false, { write: (s: string) => lines.push(s) } as never);
    // Only the hanging hook needs the short timeout; the failing one gets a long one, since a Node
    // child can take seconds to start on a loaded machine and would then be "timed out" instead.
    for (const [kind, argv, timeout] of [
      ['fail', [process.execPath, w.script, w.calls, 'fail'], '60s'],
      ['hang', [process.execPath, w.script, w.calls, 'hang'], '500ms'],
      ['missing', [path.join(w.dir, 'no-such-program')], '500ms'],
    ] as const) {
      const loaded = parseConfig(
        {
          api: { baseUrl: w.emu.url, apiKey: 'demo-key-1001' },
          stateDir: `state-${kind}`,
          hooks: { afterReceive: [...argv], timeout },
          mailboxes: [{ mailboxId: 1001, name: 'ours', inbox: { dir: `in-${kind}` } }],
        },
        'hooks-test',
        {},
        w.dir,
      );
      const content = Buffer.from(`ISA*${kind}~`);
      await w.emu.inject({ mailboxId: 1001, fileName: `${kind}.x12`, content });
      const daemon = await Daemon.open({ loaded, logger, waitForService: false });
      const { totals } = await daemon.runOnce();
      await eventually(
        () => lines.some((l) => l.includes('post-delivery hook') && l.includes(`${kind}.x12`)),
        60_000,
        `the ${kind} hook logged`,
      );
      await daemon.close();
      expect(totals.inbound.confirmed).toBeGreaterThanOrEqual(1);
      expect(fs.readFileSync(path.join(w.dir, `in-${kind}`, `${kind}.x12`))).toEqual(content);
    }
    const log = lines.join('');
    expect(log).toMatch(/post-delivery hook failed; the file is delivered.*|"exitCode":3/);
    expect(log).toContain('import refused');
    expect(log).toMatch(/timed out and was killed/);
    expect(log).toMatch(/could not start/);
  });
  it("a NUL in the service's file name never stops the daemon: the hook starts with safe variables (raw and sanitised name)", async () => {
    const w = await setup();
    const rejections: unknown[] = [];
    const onRejection = (err: unknown): void => {
      rejections.push(err);
    };
    process.on('unhandledRejection', onRejection);
    cleanups.push(() => {
      process.off('unhandledRejection', onRejection);
    });
    const lines: string[] = [];
    const logger = createLogger('info', false, { write: (s: string) => lines.push(s) } as never);
    const loaded = parseConfig(
      {
        api: { baseUrl: w.emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        hooks: { afterReceive: [process.execPath, w.script, w.calls, 'in'] },
        mailboxes: [{ mailboxId: 1001, name: 'ours', inbox: { dir: 'in' } }],
      },
      'hooks-test',
      {},
      w.dir,
    );
    const hostile = 'order\u0000;rm -rf ~.x12';
    await w.emu.inject({ mailboxId: 1001, fileName: hostile, content: Buffer.from('ISA*nul~') });
    await w.emu.inject({ mailboxId: 1001, fileName: 'plain.x12', content: Buffer.from('ISA*plain~') });
    const daemon = await Daemon.open({ loaded, logger, waitForService: false });
    cleanups.push(() => daemon.close());
    const { totals } = await daemon.runOnce();
    expect(totals.inbound.confirmed).toBe(2);
    await eventually(() => calls(w.calls).length >= 2, 10_000, 'both hooks ran');
    const nul = calls(w.calls).find((c) => c.env.GRIDSYNC_HOOK_FILE_NAME !== 'plain.x12');
    expect(nul?.env.GRIDSYNC_HOOK_FILE_NAME).not.toContain('\u0000');
    expect(nul?.env.GRIDSYNC_HOOK_FILE_NAME).toContain('rm -rf');
    expect(nul?.env.GRIDSYNC_HOOK_SAFE_FILE_NAME).toMatch(/^order[^\u0000/]*\.x12$/);
    expect(path.basename(nul?.env.GRIDSYNC_HOOK_PATH ?? '')).toBe(nul?.env.GRIDSYNC_HOOK_SAFE_FILE_NAME);
    // The daemon still runs cycles, and nothing was left unhandled.
    await daemon.runOnce();
    expect(rejections).toEqual([]);
  });
});
