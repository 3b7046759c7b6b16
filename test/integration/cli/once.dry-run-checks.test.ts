// `once --dry-run` runs the checks the real send runs, read-only: for each outbox file it says
// "would send" or "would refuse" with the reason and the code the real run gives — against a
// scripted service (not our emulator) that must receive no upload, with a journal that must not
// change and files that must not move. Then the real `once` refuses exactly those files, with
// those codes.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { cliPath } from '../../helpers/daemon-child.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { x12 } from '../../helpers/edi.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The built CLI to its end, without blocking this process (the scripted service answers from here). */
function runCli(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [cliPath, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => proc.on('close', (status) => resolve({ status, stdout, stderr })));
}

/**
 * Every file below `dir` (relative name → SHA-256 of its bytes, or the link's target). A reader of
 * the SQLite journal leaves its `-shm` index and an empty `-wal` behind: an empty WAL holds no
 * transaction, so the journal is then exactly its main file.
 */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.name === 'journal.sqlite-shm') continue;
      if (e.name === 'journal.sqlite-wal' && fs.statSync(p).size === 0) continue;
      if (e.isDirectory()) walk(p);
      else if (e.isSymbolicLink()) out[rel] = `link → ${fs.readlinkSync(p)}`;
      else if (e.isFIFO()) out[rel] = 'fifo';
      else out[rel] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

interface Report {
  mailboxes: {
    send: { file: string; bytes: number }[];
    refuse: { file: string; reason: string; code: string }[];
    wait: { file: string }[];
  }[];
}

describe('once --dry-run runs the checks before sending', () => {
  it('says which outbox files would be refused and why, changes nothing, and the real run agrees', async () => {
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-dryrun-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: svc.url, apiKey: svc.apiKey },
        stateDir: './state',
        log: { level: 'warn', pretty: false },
        once: { drainTimeout: '5s' },
        mailboxes: [
          { mailboxId: 1001, outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: '500ms' } },
        ],
      }),
      { mode: 0o600 },
    );
    const outbox = path.join(dir, 'outbox');
    fs.mkdirSync(outbox);

    // A first real run sends an invoice: its content is in the journal from then on.
    const sentBefore = x12(1);
    fs.writeFileSync(path.join(outbox, 'invoice-1.x12'), sentBefore);
    const first = await runCli(['once', '-c', configFile], dir);
    expect(first.status, first.stderr).toBe(0);
    expect(fs.readdirSync(path.join(dir, 'sent'))).toEqual(['invoice-1.x12']);

    // Now the outbox holds one file of each kind.
    const outside = path.join(dir, 'elsewhere.x12');
    fs.writeFileSync(outside, x12(7));
    fs.writeFileSync(path.join(outbox, 'good.x12'), x12(2));
    fs.writeFileSync(path.join(outbox, 'empty.x12'), '');
    fs.writeFileSync(path.join(outbox, 'truncated.x12'), x12(3).replace(/IEA\*[^~]*~$/, ''));
    fs.writeFileSync(path.join(outbox, 'again.x12'), sentBefore);
    // Two of the same content dropped together: the run sends the one it claims first.
    fs.writeFileSync(path.join(outbox, 'order.x12'), x12(5));
    fs.writeFileSync(path.join(outbox, 'order-copy.x12'), x12(5));
    fs.symlinkSync(outside, path.join(outbox, 'link.x12'));
    const fifo = spawnSync('mkfifo', [path.join(outbox, 'pipe.x12')]).status === 0;

    const requestsBefore = svc.requests.length;
    const before = snapshot(dir);
    const dry = await runCli(['once', '-c', configFile, '--dry-run', '--json'], dir);
    const report = JSON.parse(dry.stdout) as Report;
    const mb = report.mailboxes[0];
    const send = mb?.send.map((f) => f.file) ?? [];
    const [orderSent, orderRefused] = send.includes('order.x12') ? ['order.x12', 'order-copy.x12'] : ['order-copy.x12', 'order.x12'];
    expect(send.sort()).toEqual(['good.x12', orderSent].sort());
    expect(mb?.send.find((f) => f.file === 'good.x12')?.bytes).toBe(Buffer.byteLength(x12(2)));
    const refused = Object.fromEntries((mb?.refuse ?? []).map((f) => [f.file, f.code]));
    expect(refused).toEqual({
      'again.x12': 'OUTBOUND_DUPLICATE',
      [orderRefused]: 'OUTBOUND_DUPLICATE',
      'empty.x12': 'OUTBOUND_EMPTY_FILE',
      'link.x12': 'FILES_UNSAFE_ENTRY',
      'truncated.x12': 'OUTBOUND_INVALID_INTERCHANGE',
      ...(fifo ? { 'pipe.x12': 'FILES_UNSAFE_ENTRY' } : {}),
    });
    // A duplicate names the file of the same content sent before, or sent first in this run.
    expect(mb?.refuse.find((f) => f.file === 'again.x12')?.reason).toContain('invoice-1.x12');
    expect(mb?.refuse.find((f) => f.file === orderRefused)?.reason).toContain(orderSent);
    // A file would be refused: exit 1, as `once` itself would.
    expect(dry.status, dry.stderr).toBe(1);

    // The text form says the same, with the codes.
    const text = await runCli(['once', '-c', configFile, '--dry-run'], dir);
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(/mb1001: would send 2 file\(s\)[^\n]*\n {2}out {2}good\.x12 /);
    expect(text.stdout).toMatch(new RegExp(`mb1001: would refuse ${fifo ? 6 : 5} file\\(s\\)`));
    for (const [file, code] of Object.entries(refused)) expect(text.stdout).toMatch(new RegExp(`^ {2}out {2}${file}.*\\[${code}\\]$`, 'm'));

    // Nothing changed: no file moved or written (outbox, sent, error, processing, the journal's
    // files byte for byte), and the service was only asked, never sent anything.
    expect(snapshot(dir)).toEqual(before);
    const asked = svc.requests.slice(requestsBefore).map((r) => `${r.method} ${r.path}`);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((r) => r !== 'GET /v2/users/me' && !/session|pending-inbox-list/.test(r))).toEqual([]);

    // The real run refuses exactly those files, with those codes, and sends the rest.
    const real = await runCli(['once', '-c', configFile], dir);
    expect(real.status).toBe(1);
    expect(fs.readdirSync(path.join(dir, 'sent')).sort()).toEqual(['good.x12', 'invoice-1.x12', orderSent].sort());
    const reports = fs.readdirSync(path.join(dir, 'error')).filter((n) => n.endsWith('.error.json'));
    const realCodes = Object.fromEntries(
      reports.map((n) => {
        const r = JSON.parse(fs.readFileSync(path.join(dir, 'error', n), 'utf8')) as { errorCode: string | null };
        return [n.replace(/\.error\.json$/, ''), r.errorCode];
      }),
    );
    expect(realCodes).toEqual(refused);
  }, 90_000);
});
