// `gridsync status`: per mailbox what is in flight and what waits, files in errorDir, and whether
// a daemon is running (the journal lock's holder) — it only showed counts per state.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const worlds: DaemonWorld[] = [];
const children: CliChild[] = [];
afterEach(() => {
  children.splice(0).forEach((c) => c.kill('SIGKILL'));
  worlds.splice(0).forEach((w) => w.cleanup());
});

describe('status', () => {
  it('per mailbox: waiting in the outbox, errorDir; daemon not running, then running with its pid', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'bad.x12'), 'not an interchange');
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);
    // Files the daemon will not claim yet (a long stability window).
    const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    c.mailboxes[0].outbox.stableMs = '1h';
    fs.writeFileSync(w.configFile, YAML.stringify(c));
    fs.writeFileSync(path.join(w.outbox, 'a.x12'), x12(1));
    fs.writeFileSync(path.join(w.outbox, 'b.x12'), x12(2));
    fs.writeFileSync(path.join(w.outbox, 'c.x12.part'), 'still being written');

    const idle = runCli(['status', '-c', w.configFile]);
    expect(idle.status).toBe(0);
    expect(idle.stdout).toMatch(/^daemon +not running$/m);
    expect(idle.stdout).toMatch(/^ {2}mb1001 +0 +0 +0 +2 +1$/m);
    const json = JSON.parse(runCli(['status', '-c', w.configFile, '--json']).stdout) as {
      daemon: { running: boolean };
      mailboxes: {
        name: string;
        inbound: { inFlight: number; waiting: number };
        outbound: { inFlight: number; waitingInOutbox: number; inErrorDir: number };
      }[];
    };
    expect(json.daemon.running).toBe(false);
    expect(json.mailboxes[0]).toEqual({
      name: 'mb1001',
      mailboxId: 1001,
      inbound: { inFlight: 0, waiting: 0 },
      outbound: { inFlight: 0, waitingInOutbox: 2, inErrorDir: 1 },
      // SQLite journal, no daemon: nobody holds the mailbox.
      lease: { owner: null, token: null, expiresAt: null, live: false },
    });

    const daemon = startCli(['run', '-c', w.configFile, '--log-level', 'info']);
    children.push(daemon);
    await daemon.waitFor(/gridsync started/, 30_000);
    const running = runCli(['status', '-c', w.configFile]);
    expect(running.stdout).toMatch(new RegExp(`^daemon +running \\(pid ${daemon.pid}\\)$`, 'm'));
  });
});
