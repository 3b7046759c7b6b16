// Conformance against a service that is NOT our emulator: test/helpers/scripted-service.ts answers
// as the published wire facts allow, bent into each documented variant. For every variant the
// real `gridsync once` (built CLI, child process) either syncs correctly or stops the item with a
// typed error code in its log and exit 1 — never a crash, never a silent skip, never a confirm of
// something it did not store.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/daemon-child.js';
import { startScriptedService, wireJson, type ScriptedService } from '../helpers/scripted-service.js';
import { cleanupsOf, type Cleanups } from '../helpers/test-cleanups.js';

interface Run {
  code: number | null;
  out: string;
  inbox: Record<string, string>;
  sent: string[];
  errorDir: string[];
}

const TWO53 = 2n ** 53n;

describe('conformance: documented variants of the service', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function service(options: Parameters<typeof startScriptedService>[0] = {}): Promise<ScriptedService> {
    const svc = await startScriptedService(options);
    cleanups.push(() => svc.close());
    return svc;
  }

  function world(svc: ScriptedService, mailbox: { mailboxId?: number | null; outbox?: boolean; drainTimeout?: string } = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-conformance-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const d = (n: string): string => path.join(dir, n);
    for (const n of ['inbox', 'outbox', 'sent', 'error']) fs.mkdirSync(d(n));
    const mailboxId = mailbox.mailboxId === undefined ? 1001 : mailbox.mailboxId;
    const config = {
      api: { baseUrl: svc.url, apiKey: svc.apiKey },
      stateDir: './state',
      log: { level: 'info', pretty: false },
      once: { drainTimeout: mailbox.drainTimeout ?? '20s' },
      mailboxes: [
        {
          ...(mailboxId !== null ? { mailboxId } : {}),
          inbox: { dir: './inbox', maxAttempts: 2 },
          ...(mailbox.outbox
            ? { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '50ms', validateEnvelope: false } }
            : {}),
        },
      ],
    };
    fs.writeFileSync(d('gridsync.yaml'), YAML.stringify(config));
    const run = async (): Promise<Run> => {
      const child = startCli(['once', '-c', d('gridsync.yaml')], { GRIDSYNC_LOG_LEVEL: 'info' });
      cleanups.push(() => child.kill('SIGKILL'));
      const r = await child.exited;
      const read = (n: string): string[] => fs.readdirSync(d(n)).sort();
      return {
        code: r.code,
        out: r.stdout + r.stderr,
        inbox: Object.fromEntries(read('inbox').map((f) => [f, fs.readFileSync(path.join(d('inbox'), f), 'utf8')])),
        sent: read('sent'),
        errorDir: read('error'),
      };
    };
    return { dir, run, outbox: d('outbox') };
  }

  /** Every confirmed parcel is in the inbox with its exact content; nothing unconfirmed is. */
  function expectConfirmedExactlyWhatWasStored(svc: ScriptedService, r: Run): void {
    const stored = new Set(Object.values(r.inbox));
    for (const p of svc.confirmed()) expect(stored.has(p.content.toString('utf8'))).toBe(true);
    expect(Object.keys(r.inbox)).toHaveLength(svc.confirmed().length);
    expect(r.out).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/); // no stack trace
  }

  it('reference shapes, success envelopes with "" — syncs both directions, exit 0', async () => {
    const svc = await service();
    svc.addInbound('order-1.x12', 'ISA*one~');
    svc.addInbound('order-2.x12', 'ISA*two~');
    const w = world(svc, { outbox: true });
    fs.writeFileSync(path.join(w.outbox, 'invoice.x12'), 'ISA*invoice~');
    const r = await run(w);
    expect(r.code, r.out).toBe(0);
    expect(r.inbox).toEqual({ 'order-1.x12': 'ISA*one~', 'order-2.x12': 'ISA*two~' });
    expect(svc.confirmed()).toHaveLength(2);
    expect(r.sent).toEqual(['invoice.x12']);
    expect(svc.parcels.filter((p) => p.direction === 'out').map((p) => p.content.toString())).toEqual(['ISA*invoice~']);
    expectConfirmedExactlyWhatWasStored(svc, r);
  });

  it.each(['null', 'omitted'] as const)('success envelopes with errorCode/message %s — syncs, exit 0', async (form) => {
    const svc = await service();
    svc.variants.envelope = form;
    svc.addInbound('a.x12', 'ISA*a~');
    const w = world(svc, { outbox: true });
    fs.writeFileSync(path.join(w.outbox, 'b.x12'), 'ISA*b~');
    const r = await run(w);
    expect(r.code, r.out).toBe(0);
    expect(r.inbox).toEqual({ 'a.x12': 'ISA*a~' });
    expect(r.sent).toEqual(['b.x12']);
  });

  it.each(['missing', 'partial', 'error'] as const)('session endpoint %s, mailbox id configured — warns and syncs', async (mode) => {
    const svc = await service();
    svc.variants.session = mode;
    svc.addInbound('s.x12', 'ISA*s~');
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(0);
    expect(r.inbox).toEqual({ 's.x12': 'ISA*s~' });
    expect(r.out).not.toMatch(/not reachable/);
  });

  it('no session endpoint (404 page) and no mailbox id in the config — learns it from users/me and syncs', async () => {
    const svc = await service();
    svc.variants.session = 'missing';
    svc.addInbound('m.x12', 'ISA*m~');
    const r = await run(world(svc, { mailboxId: null }));
    expect(r.code, r.out).toBe(0);
    expect(r.inbox).toEqual({ 'm.x12': 'ISA*m~' });
    expect(svc.requests.some((q) => q.path === '/v2/users/me')).toBe(true);
  });

  it.each(['bare', 'object'] as const)('upload answers the parcel id %s — archived once, one parcel on the service', async (form) => {
    const svc = await service();
    svc.variants.upload = form;
    const w = world(svc, { outbox: true });
    fs.writeFileSync(path.join(w.outbox, 'up.x12'), 'ISA*up~');
    const r = await run(w);
    expect(r.code, r.out).toBe(0);
    expect(r.sent).toEqual(['up.x12']);
    expect(svc.parcels.filter((p) => p.direction === 'out')).toHaveLength(1);
  });

  it.each(['object', 'null'] as const)('confirm answers %s — confirmed', async (form) => {
    const svc = await service();
    svc.variants.confirm = form;
    svc.addInbound('c.x12', 'ISA*c~');
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(0);
    expect(r.inbox).toEqual({ 'c.x12': 'ISA*c~' });
    expect(svc.confirmed()).toHaveLength(1);
  });

  it('extra legacy fields, missing non-essential fields, unknown and nested status values — syncs, warns once per field', async () => {
    const svc = await service();
    svc.variants.record = (r, p) => {
      const { networkId: _n, mailboxId: _m, modified: _x, gridIdFrom: _f, gridIdTo: _t, ...rest } = r;
      return {
        ...rest,
        mailbagControlId: 'MB-1',
        parcelDate: p.created,
        parcelBytes: p.content.length,
        statusCode: 7,
        statusMessage: 'ok',
        direction: 'InBox',
        status: { code: 'x1256Pending', description: 'legacy', statusDate: p.created },
        from: { gridId: 1, name: 'A' },
        to: { gridId: 2, name: 'B' },
        interchanges: [{ interchangeId: 1 }],
        created: Math.random() > 2 ? rest.created : 12345, // a number where a date belongs
      };
    };
    svc.addInbound('x1.x12', 'ISA*x1~');
    svc.addInbound(null, 'ISA*noname~');
    svc.addInbound('x3.x12', 'ISA*x3~');
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(0);
    expect(Object.keys(r.inbox).sort()).toEqual([`parcel-${svc.parcels[1]!.parcelId}`, 'x1.x12', 'x3.x12']);
    expectConfirmedExactlyWhatWasStored(svc, r);
    const warnings = r.out.split('\n').filter((l) => l.includes('does not expect'));
    expect(warnings.length).toBeGreaterThan(0);
    // Three records with the same odd field: one warning per endpoint and field, not one per record.
    expect(warnings.filter((l) => l.includes('"data[].created"'))).toHaveLength(1);
  });

  it('unknown parcel status strings on the outbox list — reconciliation and archive unaffected', async () => {
    const svc = await service();
    svc.variants.record = (r) => ({ ...r, status: 'OutBoxQueued' });
    const w = world(svc, { outbox: true });
    fs.writeFileSync(path.join(w.outbox, 'q.x12'), 'ISA*q~');
    const r = await run(w);
    expect(r.code, r.out).toBe(0);
    expect(r.sent).toEqual(['q.x12']);
  });

  it('ids near 2^53 sync with the exact id; an id above 2^53 stops that item with a typed error, never confirmed, exit 1', async () => {
    const svc = await service({ firstId: TWO53 - 2n });
    svc.addInbound('near-1.x12', 'ISA*near1~'); // 2^53 - 2
    svc.addInbound('near-2.x12', 'ISA*near2~'); // 2^53 - 1
    const above = svc.addInbound('above.x12', 'ISA*above~'); // 2^53
    above.parcelId = TWO53 + 1n;
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(1);
    expect(r.inbox).toEqual({ 'near-1.x12': 'ISA*near1~', 'near-2.x12': 'ISA*near2~' });
    expect(svc.confirmed().map((p) => p.parcelId)).toEqual([TWO53 - 2n, TWO53 - 1n]);
    // The confirms named the exact ids.
    const confirms = svc.requests
      .filter((q) => q.path === '/v2/parcels/confirm')
      .map((q) => String(q.body.parcelId))
      .sort();
    expect(confirms).toEqual([String(TWO53 - 2n), String(TWO53 - 1n)]);
    expect(r.out).toMatch(/GRID_RESPONSE_ERROR/);
    expect(r.out).toMatch(/above 2\^53/);
    expect(r.out).toMatch(/above\.x12/); // the summary names the item
    expect(above.status).toBe('InBoxReady');
  });

  it('problem-details and proxy HTML error pages: transient ones retried to success, a permanent one stops only its item', async () => {
    const svc = await service();
    const ok1 = svc.addInbound('pd.x12', 'ISA*pd~');
    const ok2 = svc.addInbound('html.x12', 'ISA*html~');
    const bad = svc.addInbound('rejected.x12', 'ISA*rejected~');
    const seen = new Map<string, number>();
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/download') return false;
      const id = String(req.body.parcelId);
      const count = (seen.get(id) ?? 0) + 1;
      seen.set(id, count);
      if (id === String(ok1.parcelId) && count === 1) {
        res.writeHead(500, { 'content-type': 'application/problem+json' });
        res.end(
          JSON.stringify({
            type: 'about:blank',
            title: 'Internal Server Error',
            status: 500,
            detail: 'upstream timeout',
            traceId: '00-abc-01',
          }),
        );
        return true;
      }
      if (id === String(ok2.parcelId) && count === 1) {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return true;
      }
      if (id === String(bad.parcelId)) {
        res.writeHead(400, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ title: 'Bad Request', status: 400, detail: 'parcel is quarantined', traceId: '00-def-01' }));
        return true;
      }
      return false;
    };
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(1);
    expect(r.inbox).toEqual({ 'pd.x12': 'ISA*pd~', 'html.x12': 'ISA*html~' });
    expect(bad.status).toBe('InBoxReady');
    expect(r.out).toMatch(/GRID_API_ERROR/);
    expect(r.out).toMatch(/parcel is quarantined/);
    expectConfirmedExactlyWhatWasStored(svc, r);
  });

  it('dates with and without fractional seconds and offsets — syncs', async () => {
    const svc = await service();
    const dates = [
      '2026-05-07T08:00:00Z',
      '2026-05-07T08:00:00.1234567Z',
      '2026-05-07T10:00:00+02:00',
      '2026-05-07T10:00:00.5+0200',
      '2026-05-07T08:00Z',
    ];
    dates.forEach((created, i) => svc.addInbound(`d${i}.x12`, `ISA*d${i}~`, { created }));
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(0);
    expect(Object.keys(r.inbox).sort()).toEqual(['d0.x12', 'd1.x12', 'd2.x12', 'd3.x12', 'd4.x12']);
  });

  it('download with `size` and contentEncoding instead of `bytes` — syncs; a declared size that does not match stops the item unconfirmed', async () => {
    const svc = await service();
    const good = svc.addInbound('sized.x12', 'ISA*sized~');
    const lying = svc.addInbound('lying.x12', 'ISA*lying~');
    svc.variants.download = (d, p) => {
      const { bytes, ...rest } = d;
      return p === lying ? { ...rest, bytes: Number(bytes) + 1 } : { ...rest, size: bytes, contentEncoding: 'Base64' };
    };
    const r = await run(world(svc));
    expect(r.code, r.out).toBe(1);
    expect(r.inbox).toEqual({ 'sized.x12': 'ISA*sized~' });
    expect(good.status).toBe('InBoxTransferred');
    expect(lying.status).toBe('InBoxReady');
    expect(r.out).toMatch(/GRID_CONTENT_INTEGRITY/);
    expect(r.out).toMatch(/lying\.x12|byte-mismatch/);
  });

  it('a download that breaks off half way is retried in the same run into a fresh staging file', async () => {
    const svc = await service();
    const content = Buffer.alloc(300_000, 'E');
    const p = svc.addInbound('big.x12', content);
    let broke = false;
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/download' || broke) return false;
      broke = true;
      const text = wireJson({
        success: true,
        data: { parcelId: p.parcelId, fileName: p.fileName, bytes: content.length, content: content.toString('base64') },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      res.write(text.slice(0, text.length / 2), () => res.destroy());
      return true;
    };
    const w = world(svc);
    const r = await run(w);
    expect(r.code, r.out).toBe(0);
    const placed = fs.readFileSync(path.join(w.dir, 'inbox', 'big.x12'));
    expect(createHash('sha256').update(placed).digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
    expect(svc.requests.filter((q) => q.path === '/v2/parcels/download')).toHaveLength(2);
    expect(svc.confirmed()).toHaveLength(1);
    // One run, one cycle: the retry happened inside the call, not in a later cycle.
    expect(svc.requests.filter((q) => q.path === '/v2/parcels/pending-inbox-list').length).toBeLessThanOrEqual(2);
    expect(fs.readdirSync(path.join(w.dir, 'state', 'staging'))).toEqual([]);
  });
});

// Side by side: each test runs once against a service of its own and mostly waits on retries,
// pauses and drainTimeout; each cleans up its own (cleanupsOf).
describe.concurrent('once drains', () => {
  function setup(cleanups: Cleanups, svc: ScriptedService, drainTimeout: string) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-drain-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'inbox'));
    const config = {
      api: { baseUrl: svc.url, apiKey: svc.apiKey },
      stateDir: './state',
      log: { level: 'info', pretty: false },
      once: { drainTimeout },
      mailboxes: [{ mailboxId: 1001, inbox: { dir: './inbox', maxAttempts: 2 } }],
    };
    fs.writeFileSync(path.join(dir, 'gridsync.yaml'), YAML.stringify(config));
    return {
      dir,
      once: async () => {
        const child = startCli(['once', '-c', path.join(dir, 'gridsync.yaml')]);
        cleanups.push(() => child.kill('SIGKILL'));
        return child.exited;
      },
    };
  }

  it('a service that fails whole cycles for a while: once repeats cycles and exits 0 when everything arrived', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    svc.addInbound('late-1.x12', 'ISA*late1~');
    svc.addInbound('late-2.x12', 'ISA*late2~');
    let lists = 0;
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/pending-inbox-list' || ++lists > 4) return false;
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>Service Unavailable</html>');
      return true;
    };
    const w = setup(cleanups, svc, '30s');
    const r = await w.once();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(fs.readdirSync(path.join(w.dir, 'inbox')).sort()).toEqual(['late-1.x12', 'late-2.x12']);
    expect(lists).toBeGreaterThan(4); // more than one cycle's worth of list calls (3 attempts per call)
  });

  it('parcels that cannot be delivered (one truncated every time, two corrupt): exit 1, each named with its reason on stderr and in status', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    svc.addInbound('fine.x12', 'ISA*fine~');
    const truncated = svc.addInbound('truncated.x12', Buffer.alloc(200_000, 'T'));
    const corrupt1 = svc.addInbound('corrupt-1.x12', 'ISA*c1~');
    const corrupt2 = svc.addInbound('corrupt-2.x12', 'ISA*c2~');
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/download') return false;
      const id = String(req.body.parcelId);
      if (id === String(truncated.parcelId)) {
        const text = wireJson({
          success: true,
          data: { parcelId: truncated.parcelId, fileName: 'truncated.x12', bytes: 200_000, content: truncated.content.toString('base64') },
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
        res.write(text.slice(0, 50_000), () => res.destroy());
        return true;
      }
      if (id === String(corrupt1.parcelId) || id === String(corrupt2.parcelId)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(wireJson({ success: true, data: { parcelId: req.body.parcelId, fileName: 'x', bytes: 7, content: 'SVNB*%%%not-base64' } }));
        return true;
      }
      return false;
    };
    const w = setup(cleanups, svc, '30s');
    const r = await w.once();
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(fs.readdirSync(path.join(w.dir, 'inbox'))).toEqual(['fine.x12']);
    for (const name of ['truncated.x12', 'corrupt-1.x12', 'corrupt-2.x12'])
      expect(r.stderr).toMatch(new RegExp(`${name.replace('.', '\\.')}\\): failed: .*(truncated|UND_ERR_SOCKET|invalid-base64)`));
    expect(svc.confirmed().map((p) => p.fileName)).toEqual(['fine.x12']);
    const status = startCli(['status', '-c', path.join(w.dir, 'gridsync.yaml')]);
    const s = await status.exited;
    expect(s.stdout).toMatch(/left undelivered by the last `once`/);
    expect(s.stdout).toMatch(/corrupt-2\.x12/);
  });

  it('a service that stays down: once gives up when once.drainTimeout is reached, exit 1 naming why', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    svc.addInbound('never.x12', 'ISA*never~');
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/pending-inbox-list') return false;
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>down</html>');
      return true;
    };
    const w = setup(cleanups, svc, '3s');
    const started = Date.now();
    const r = await w.once();
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.stderr).toMatch(/once\.drainTimeout reached/);
    expect(r.stderr).toMatch(/\(cycle\): service: the service answered HTTP 503/);
  });
});

async function run(w: { run: () => Promise<Run> }): Promise<Run> {
  return w.run();
}
