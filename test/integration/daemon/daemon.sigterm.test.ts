// SIGTERM while a large upload is in flight (the emulator holds the request with added latency):
// with time to drain, the transfer finishes before exit; with a short deadline the daemon stops
// anyway, and the next start finishes the job — one parcel on the service, nothing lost.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { countInJournal } from '../../helpers/journal-count.js';
import { x12 } from '../../helpers/edi.js';
import { cleanupsOf, type Cleanups } from '../../helpers/test-cleanups.js';

const BIG = x12(9001, `N1*ST*${'A'.repeat(8 * 1024 * 1024)}`);

// Side by side: each test has its own emulator process and folders, and mostly waits on the upload
// its emulator holds; each cleans up its own (cleanupsOf).
describe.concurrent('daemon: SIGTERM during a large upload', () => {
  async function setup(cleanups: Cleanups, shutdownTimeout: string, latencyMs: number) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-sigterm-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    // The emulator runs in its own process: the upload it holds outlives the daemon's connection.
    const dataFile = path.join(dir, 'emulator.sqlite');
    let emulator = startCli(['emulator', '--port', '0', '--data', dataFile]);
    cleanups.push(() => emulator.kill('SIGKILL'));
    const [, url] = await emulator.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    /**
     * The held request ends after the daemon is gone; the emulator (packages/emulator/src) may then crash
     * with ERR_STREAM_DESTROYED — reported to its owner. An outage is a condition the daemon must
     * survive anyway, so the service is simply started again on its port and data.
     */
    const ensureEmulator = async (): Promise<void> => {
      if (
        (await fetch(`${url}/_emulator/requests`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        return;
      emulator = startCli(['emulator', '--port', new URL(url as string).port, '--data', dataFile]);
      await emulator.waitFor(/listening on/);
    };
    const setFaults = async (rules: unknown[]): Promise<void> => {
      const res = await fetch(`${url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules }),
      });
      expect(res.status).toBe(200);
    };
    await setFaults([{ endpoint: 'parcels.upload', latencyMs }]);
    const emu = { url: url as string, setFaults, ensureEmulator };
    const configFile = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        log: { level: 'info', pretty: false },
        schedule: { poll: '200ms' },
        shutdownTimeout,
        mailboxes: [
          { mailboxId: 1001, outbox: { dir: 'outbox', sentDir: 'sent', errorDir: 'error', stableMs: '100ms', rescanMs: '300ms' } },
        ],
      }),
    );
    const outbox = path.join(dir, 'outbox');
    fs.mkdirSync(outbox);
    const uploads = async (): Promise<number> => {
      const res = await fetch(`${emu.url}/_emulator/parcels?mailboxId=1001`);
      const rows = ((await res.json()) as { data: { fileName: string; direction: string }[] }).data;
      return rows.filter((p) => p.fileName === 'big.x12').length;
    };
    return { dir, emu, configFile, outbox, sent: path.join(dir, 'sent'), uploads };
  }

  const uploadingRows = (dir: string): number =>
    countInJournal(path.join(dir, 'state'), "SELECT count(*) AS n FROM outbound_files WHERE state = 'uploading'");

  async function dropAndTerminateMidUpload(cleanups: Cleanups, w: Awaited<ReturnType<typeof setup>>) {
    const child = startCli(['run', '-c', w.configFile]);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.waitFor(/"msg":"gridsync started"/);
    fs.writeFileSync(path.join(w.outbox, 'big.x12.part'), BIG);
    fs.renameSync(path.join(w.outbox, 'big.x12.part'), path.join(w.outbox, 'big.x12'));
    // The journal says `uploading` once the attempt's start is committed, just before the request
    // goes out; the latency then holds it in flight. (Waiting for the claim alone raced on a busy
    // machine: SIGTERM arrived before the upload began, and nothing was in flight to drain.)
    await eventually(() => uploadingRows(w.dir) > 0, 15_000, 'the upload started');
    await new Promise((r) => setTimeout(r, 300));
    expect(await w.uploads()).toBe(0);
    child.kill('SIGTERM');
    return child.exited;
  }

  it('with time to drain: the upload finishes, then a clean exit', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const w = await setup(cleanups, '20s', 1500);
    const exit = await dropAndTerminateMidUpload(cleanups, w);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/"forced":false,"msg":"gridsync stopped"/);
    expect(exit.stdout.indexOf('"msg":"file sent"')).toBeGreaterThan(
      exit.stdout.indexOf('"msg":"stopping: finishing in-flight transfers"'),
    );
    expect(fs.readdirSync(w.sent)).toEqual(['big.x12']);
    expect(fs.readFileSync(path.join(w.sent, 'big.x12'), 'utf8')).toBe(BIG);
    expect(await w.uploads()).toBe(1);
  });

  it('with a short deadline: stops anyway; the next start sends it exactly once', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const w = await setup(cleanups, '300ms', 4000);
    const exit = await dropAndTerminateMidUpload(cleanups, w);
    expect(exit.signal).toBeNull();
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/did not finish within shutdownTimeout; stopping anyway/);
    expect(exit.stdout).toMatch(/"forced":true,"msg":"gridsync stopped"/);
    expect(fs.existsSync(path.join(w.sent, 'big.x12'))).toBe(false);

    // Let the held request of the first run end before anyone counts.
    await new Promise((r) => setTimeout(r, 4500));
    await w.emu.ensureEmulator();
    await w.emu.setFaults([]);
    const again = startCli(['run', '-c', w.configFile]);
    cleanups.push(() => again.kill('SIGKILL'));
    await eventually(() => fs.existsSync(path.join(w.sent, 'big.x12')), 20_000, 'big.x12 sent after the restart');
    again.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    expect(fs.readFileSync(path.join(w.sent, 'big.x12'), 'utf8')).toBe(BIG);
    expect(await w.uploads()).toBe(1);
  });

  it('a second signal exits at once (130); the next start sends the file exactly once', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const w = await setup(cleanups, '20s', 8000);
    const child = startCli(['run', '-c', w.configFile]);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.waitFor(/"msg":"gridsync started"/);
    fs.writeFileSync(path.join(w.outbox, 'big.x12'), BIG);
    await eventually(() => !fs.existsSync(path.join(w.outbox, 'big.x12')), 10_000, 'the file claimed');
    // The upload starts after the claim, so the held upload cannot end before claimed + 8 s.
    const claimed = Date.now();
    child.kill('SIGTERM');
    await child.waitFor(/"msg":"stopping: finishing in-flight transfers"/);
    child.kill('SIGINT');
    const exit = await child.exited;
    expect(exit.code).toBe(130);
    expect(Date.now() - claimed).toBeLessThan(8000); // did not wait for the held upload
    expect(fs.existsSync(path.join(w.sent, 'big.x12'))).toBe(false);

    await new Promise((r) => setTimeout(r, 8500));
    await w.emu.ensureEmulator();
    await w.emu.setFaults([]);
    const again = startCli(['run', '-c', w.configFile]);
    cleanups.push(() => again.kill('SIGKILL'));
    await eventually(() => fs.existsSync(path.join(w.sent, 'big.x12')), 20_000, 'big.x12 sent after the restart');
    again.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    expect(await w.uploads()).toBe(1);
  });

  it('once: SIGTERM lets the held upload finish and exits 1 (interrupted); past a short deadline it exits 1 and the next once sends it exactly once', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const w = await setup(cleanups, '20s', 1500);
    fs.writeFileSync(path.join(w.outbox, 'big.x12'), BIG);
    const once = startCli(['once', '-c', w.configFile]);
    cleanups.push(() => once.kill('SIGKILL'));
    await eventually(() => uploadingRows(w.dir) > 0, 15_000, 'the upload started');
    once.kill('SIGTERM');
    const exit = await once.exited;
    expect(exit.code).toBe(1);
    expect(exit.stdout).toMatch(/"msg":"once: interrupted; no new items, finishing in-flight transfers"/);
    expect(fs.readdirSync(w.sent)).toEqual(['big.x12']);
    expect(await w.uploads()).toBe(1);

    const short = await setup(cleanups, '300ms', 6000);
    fs.writeFileSync(path.join(short.outbox, 'big.x12'), BIG);
    const once2 = startCli(['once', '-c', short.configFile]);
    cleanups.push(() => once2.kill('SIGKILL'));
    await eventually(() => !fs.existsSync(path.join(short.outbox, 'big.x12')), 10_000, 'the file claimed');
    const claimed2 = Date.now();
    once2.kill('SIGTERM');
    const exit2 = await once2.exited;
    expect(exit2.code).toBe(1);
    expect(exit2.stdout).toMatch(/shutdown deadline reached/);
    expect(Date.now() - claimed2).toBeLessThan(6000); // the 300 ms deadline, not the held upload
    await new Promise((r) => setTimeout(r, 6500));
    await short.emu.ensureEmulator();
    await short.emu.setFaults([]);
    const once3 = startCli(['once', '-c', short.configFile]);
    const exit3 = await once3.exited;
    expect(exit3.code).toBe(0);
    expect(fs.readdirSync(short.sent)).toEqual(['big.x12']);
    expect(await short.uploads()).toBe(1);
  });
});
