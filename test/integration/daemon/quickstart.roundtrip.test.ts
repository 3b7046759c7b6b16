// THE quick-start: a fresh copy of config/gridsync.yaml, `gridsync run` as a child, an X12 file
// dropped into ./var/outbox → the demo partner's 997 arrives in ./var/inbox; health, readiness and
// metrics over real HTTP; SIGTERM stops it cleanly; `status` reads the journal afterwards.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { eventually, runCli, startCli, type CliChild } from '../../helpers/daemon-child.js';

describe('quick start: npm start config, file round trip to the demo partner', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-quickstart-'));
  fs.mkdirSync(path.join(dir, 'config'));
  const configFile = path.join(dir, 'config', 'gridsync.yaml');
  fs.copyFileSync(path.join(repoRoot, 'config/gridsync.yaml'), configFile);
  const v = (p: string): string => path.join(dir, 'var', p);
  // Port 0: tests run in parallel; the poll interval shortened through the env override.
  const env = { GRIDSYNC_HTTP_PORT: '0', GRIDSYNC_SCHEDULE_POLL: '300ms', GRIDSYNC_LOG_PRETTY: 'false' };
  let child: CliChild | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends the file, receives the 997, serves health and metrics, stops on SIGTERM', async () => {
    child = startCli(['run', '-c', configFile], env, dir);
    const [, url] = await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"health and metrics endpoint listening"/);
    await child.waitFor(/"msg":"gridsync started"/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const content = x12(4711);
    fs.writeFileSync(v('outbox/invoice-4711.x12.part'), content);
    fs.renameSync(v('outbox/invoice-4711.x12.part'), v('outbox/invoice-4711.x12'));

    const ack = await eventually(() => fs.readdirSync(v('inbox')).find((f) => !f.startsWith('.')), 20_000, 'the 997 in ./var/inbox');
    const ackText = fs.readFileSync(v(`inbox/${ack}`), 'utf8');
    expect(ackText).toMatch(/^ISA\*/);
    expect(ackText).toContain('ST*997');
    expect(ackText).toContain('DEMOPARTNER');
    expect(fs.readdirSync(v('sent'))).toEqual(['invoice-4711.x12']);
    expect(fs.readFileSync(v('sent/invoice-4711.x12'), 'utf8')).toBe(content);
    expect(fs.readdirSync(v('outbox')).filter((f) => !f.startsWith('.'))).toEqual([]);

    const ready = await eventually(async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined), 10_000, '/readyz 200');
    expect(ready).toBe(true);
    const metrics = await eventually(
      async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return /gridsync_transfers_total\{direction="out",mailbox="mb1001"\} 1/.test(text) &&
          /gridsync_transfers_total\{direction="in",mailbox="mb1001"\} 1/.test(text)
          ? text
          : undefined;
      },
      10_000,
      'transfer counters in /metrics',
    );
    expect(metrics).toMatch(/gridsync_last_success_timestamp_seconds\{mailbox="mb1001"\} \d+/);
    expect(metrics).toMatch(/gridsync_service_reachable 1/);

    child.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/"msg":"gridsync stopped"/);
    expect(exit.stdout).not.toContain('demo-key-1001');

    const status = runCli(['status', '-c', configFile, '--json'], env, dir);
    expect(status.status).toBe(0);
    const report = JSON.parse(status.stdout) as {
      inbound: { counts: Record<string, number> };
      outbound: { counts: Record<string, number> };
      lastCycle: unknown;
    };
    expect(Object.values(report.inbound.counts).reduce((a, b) => a + b, 0)).toBe(1);
    expect(Object.values(report.outbound.counts).reduce((a, b) => a + b, 0)).toBe(1);
    expect(report.lastCycle).not.toBeNull();
  });
});
