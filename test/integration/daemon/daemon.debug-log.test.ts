// `log.level: debug` shows each mailbox cycle, each request with its timing and each decision with
// its reason code — and nothing of it at info. The built CLI runs as a real process, against the
// embedded emulator (REST and SOAP: the request line is the client core's, shared by both) and
// against the scripted service (not our emulator), which fails a request once with a message
// quoting the API key. The whole output is searched for the key.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { eventually, runCli, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

const KEY = 'sk-live-Debug7Hq2vX9pLm4';

type Line = Record<string, unknown> & { msg: string; level: number };

function lines(output: string): Line[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

const DEBUG_MESSAGES = ['request', 'mailbox cycle started', 'mailbox cycle ended', 'decision'];

describe('log.level debug', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function world(level: string, api: Record<string, unknown>, mailbox: Record<string, unknown> = {}): DaemonWorld {
    const w = makeDaemonWorld({ api, log: { level, pretty: false } }, mailbox);
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    return w;
  }

  it.each(['rest', 'soap'])('once against the embedded emulator over %s: cycles, requests, decisions; quiet at info', (protocol) => {
    const run = (level: string): Line[] => {
      const w = world(level, { baseUrl: 'embedded', protocol, apiKey: 'demo-key-1001' });
      fs.writeFileSync(path.join(w.outbox, 'order.x12'), x12(42));
      fs.writeFileSync(path.join(w.outbox, 'notes.txt'), 'not an interchange');
      const r = runCli(['once', '-c', w.configFile], {}, w.dir);
      // With an API key the SOAP session id is the key itself: neither appears anywhere.
      expect(r.stdout + r.stderr).not.toContain('demo-key-1001');
      return lines(r.stdout);
    };

    const debug = run('debug');
    const requests = debug.filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const r of requests) {
      expect(r).toMatchObject({ level: 20, method: 'POST', attempt: 1, outcome: 'ok', status: 200 });
      expect(typeof r.endpoint).toBe('string');
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      // The endpoint's name, never a path (which may carry ids or tokens).
      expect(String(r.endpoint)).not.toContain('/');
    }
    const upload = protocol === 'rest' ? /^parcels\.upload$/ : /^ParcelUpload/;
    expect(requests.some((r) => upload.test(String(r.endpoint)))).toBe(true);
    for (const direction of ['in', 'out']) {
      expect(debug.some((l) => l.msg === 'mailbox cycle started' && l.direction === direction && l.mailbox === 'mb1001')).toBe(true);
      const end = debug.find((l) => l.msg === 'mailbox cycle ended' && l.direction === direction);
      expect(end?.durationMs).toBeGreaterThanOrEqual(0);
      if (direction === 'out') expect(end).toMatchObject({ claimed: 2, archived: 1, rejected: 1 });
      else expect(end).toMatchObject({ listed: expect.any(Number), deferred: 0 });
    }
    expect(debug.find((l) => l.msg === 'decision')).toMatchObject({
      decision: 'refused',
      direction: 'out',
      file: 'notes.txt',
      code: expect.stringMatching(/^[A-Z_]+$/),
      reason: expect.stringContaining('invalid interchange'),
    });

    const info = run('info');
    expect(info.some((l) => l.msg === 'once: done')).toBe(true);
    expect(info.filter((l) => DEBUG_MESSAGES.includes(l.msg) || l.level < 30)).toEqual([]);
  });

  it('run against the scripted service: a retried request, a deferred parcel with its code, no secret', async () => {
    const svc = await startScriptedService({ apiKey: KEY });
    cleanups.push(() => svc.close());
    svc.addInbound('po.x12', x12(7));
    let failedOnce = false;
    svc.variants.fault = (req, res) => {
      if (failedOnce || req.path !== '/v2/parcels/pending-inbox-list') return false;
      failedOnce = true;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, data: null, errorCode: 'Unavailable', message: `busy; retry with key ${KEY}` }));
      return true;
    };
    // No room for any parcel: the download is deferred every cycle (a local condition, with its code).
    const w = world('debug', { baseUrl: svc.url, protocol: 'rest', apiKey: KEY }, { inbox: { dir: './inbox', minFreeBytes: 2 ** 50 } });
    const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    c.schedule = { poll: '300ms' };
    fs.writeFileSync(w.configFile, YAML.stringify(c));
    const child = startCli(['run', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await eventually(
      () => lines(child.output()).filter((l) => l.msg === 'decision' && l.decision === 'deferred').length >= 2,
      60_000,
      'the parcel deferred in two cycles',
    );
    child.kill('SIGTERM');
    const { stdout, stderr } = await child.exited;
    expect(stdout + stderr).not.toContain(KEY);
    const all = lines(stdout);

    const list = all.filter((l) => l.msg === 'request' && l.endpoint === 'parcels.pendingInboxList');
    expect(list[0]).toMatchObject({ method: 'POST', status: 503, attempt: 1, outcome: 'retry', code: expect.any(String) });
    expect(list[1]).toMatchObject({ method: 'POST', status: 200, attempt: 2, outcome: 'ok' });
    const deferred = all.find((l) => l.msg === 'decision' && l.decision === 'deferred');
    expect(deferred).toMatchObject({ direction: 'in', code: 'INBOUND_DEFERRED', parcelId: expect.any(Number), count: 1 });
    expect(String(deferred?.reason)).toMatch(/not enough free space/);
    expect(all.some((l) => l.msg === 'mailbox cycle ended' && l.direction === 'in' && l.deferred === 1)).toBe(true);
  }, 90_000);
});
