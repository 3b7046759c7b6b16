// A callback storm (hostile round 3): verified calls for one mailbox, as a busy partner sends them
// or as anyone replays a Basic call a proxy logged, arriving faster than cycles end. Each call is
// a hint about its own mailbox: it must not make the daemon poll every other mailbox as well, or
// one mailbox's calls become a request to the service per configured mailbox, back to back. The
// scheduled poll of the others must still come on time, however long the calls go on.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { freePort, callbackWorldForFile } from '../../helpers/callbacks-world.js';

const w = callbackWorldForFile();

const agent = new https.Agent({ rejectUnauthorized: false, keepAlive: true, maxSockets: 4 });

function call(port: number, p: string, auth: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: p, method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: auth } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** Inbound cycles run for a mailbox so far (the per-mailbox cycle histogram's count). */
async function inboundCycles(metricsUrl: string, mailbox: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`gridsync_cycle_duration_seconds_count{mailbox="${mailbox}"}`));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('callbacks: a storm of verified calls for one mailbox', () => {
  it('cycles that mailbox only; the others are polled on their schedule, not at every call', async () => {
    const port = await freePort();
    const base = path.join(w.dir, 'storm');
    fs.mkdirSync(base, { recursive: true });
    const file = path.join(base, 'gridsync.yaml');
    fs.writeFileSync(
      file,
      YAML.stringify({
        api: { baseUrl: w.emuUrl, apiKey: 'demo-key-admin' },
        stateDir: './state',
        log: { level: 'info', pretty: false },
        http: { enabled: true, port: 0 },
        schedule: { poll: '8s' },
        callbacks: {
          listen: `127.0.0.1:${port}`,
          publicUrl: `https://127.0.0.1:${port}/gridsync/callbacks`,
          tls: { certFile: w.certFile, keyFile: w.keyFile },
        },
        mailboxes: [
          { mailboxId: 1001, inbox: { dir: './inbox1001' } },
          { mailboxId: 1002, inbox: { dir: './inbox1002' } },
        ],
      }),
    );
    const child: CliChild = startCli(['run', '-c', file]);
    try {
      const metricsUrl = (await child.waitFor(/"url":"(http:\/\/[^"]+)"[^\n]*health and metrics endpoint listening/))[1] as string;
      await eventually(async () => (await inboundCycles(metricsUrl, 'mb1002')) >= 1, 30_000, 'the start-up cycle');
      const state = JSON.parse(fs.readFileSync(path.join(base, 'state', 'callbacks.json'), 'utf8')) as {
        paths: Record<string, string>;
        password: string;
      };
      const auth = `Basic ${Buffer.from(`gridsync:${state.password}`).toString('base64')}`;
      const p = `/gridsync/callbacks/1001/${state.paths['1001']}`;

      const called0 = await inboundCycles(metricsUrl, 'mb1001');
      const other0 = await inboundCycles(metricsUrl, 'mb1002');
      // 10 s of calls for mailbox 1001, five a second: one cycle a second is what they may cause.
      const started = Date.now();
      const statuses: number[] = [];
      while (Date.now() - started < 10_000) {
        statuses.push(await call(port, p, auth, `{"event":"Parcel","objectId":${1 + statuses.length}}`));
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const called = (await inboundCycles(metricsUrl, 'mb1001')) - called0;
      const other = (await inboundCycles(metricsUrl, 'mb1002')) - other0;
      // The calls were acted on: the called mailbox was cycled many times (at most once a second)…
      expect(called).toBeGreaterThanOrEqual(4);
      expect(called).toBeLessThanOrEqual(14);
      // …while the other mailbox was polled only on its schedule (8 s: one or two polls in 10 s), not at every call.
      expect(other).toBeGreaterThanOrEqual(1);
      expect(other).toBeLessThanOrEqual(2);
    } finally {
      child.kill('SIGTERM');
      await child.exited;
    }
  }, 90_000);
});
