// `{partner}` in inbox paths, from the outside: the built CLI (`gridsync once`, a child process)
// against a scripted service that is NOT our emulator (test/helpers/scripted-service.ts), which
// names one sender, refuses another (404), never answers for a third and sends hostile
// descriptions. Every parcel is placed under one folder inside the inbox and confirmed; a slow
// lookup costs one bounded call; the config map wins over the service; a restart after staging
// never renames a parcel. Then the same against our emulator over REST and SOAP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';
import { inboxConfig, listFiles, makeWorld, type Protocol } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(): Promise<ScriptedService> {
  const svc = await startScriptedService();
  cleanups.push(() => svc.close());
  return svc;
}

const grid = (gridId: number, description: string | null): Record<string, unknown> => ({
  gridId,
  mailboxId: 2001,
  networkId: 2,
  qualifier: 'ZZ',
  id: `P${gridId}`,
  description,
  status: 'Active',
});

function world(svc: ScriptedService, extra: Record<string, unknown> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-partners-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'inbox'));
  // The hook records what it saw: GRIDSYNC_HOOK_PARTNER(_NAME) per parcel.
  const hook = path.join(dir, 'hook.mjs');
  fs.writeFileSync(
    hook,
    `import fs from 'node:fs';
fs.appendFileSync(process.argv[2], JSON.stringify({ id: process.env.GRIDSYNC_HOOK_PARCEL_ID, partner: process.env.GRIDSYNC_HOOK_PARTNER, name: process.env.GRIDSYNC_HOOK_PARTNER_NAME }) + '\\n');
`,
  );
  const hookLog = path.join(dir, 'hook.jsonl');
  const config = {
    api: { baseUrl: svc.url, apiKey: svc.apiKey, timeouts: { callMs: '1500ms' } },
    stateDir: './state',
    log: { level: 'info', pretty: false },
    once: { drainTimeout: '20s' },
    hooks: { afterReceive: [process.execPath, hook, hookLog] },
    mailboxes: [{ mailboxId: 1001, inbox: { dir: './inbox', nameTemplate: '{partner}/{fileName}' } }],
    ...extra,
  };
  fs.writeFileSync(path.join(dir, 'gridsync.yaml'), YAML.stringify(config));
  const run = async (env: Record<string, string> = {}) => {
    const started = Date.now();
    const child = startCli(['once', '-c', path.join(dir, 'gridsync.yaml')], env);
    cleanups.push(() => child.kill('SIGKILL'));
    const r = await child.exited;
    return { ...r, out: r.stdout + r.stderr, ms: Date.now() - started };
  };
  const hooks = (): Array<{ id: string; partner: string; name: string }> =>
    fs.existsSync(hookLog)
      ? fs
          .readFileSync(hookLog, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
      : [];
  return { dir, inbox: path.join(dir, 'inbox'), run, hooks };
}

/** Every file under the inbox, relative, with its content. */
function tree(root: string): Record<string, string> {
  return Object.fromEntries(listFiles(root).map((f) => [f, fs.readFileSync(path.join(root, f), 'utf8')]));
}

describe('{partner} against a scripted service (not our emulator), through `gridsync once`', () => {
  it('named, refused (404), silent and nameless senders: each parcel placed under one folder and confirmed; one bounded call per grid id', async () => {
    const svc = await service();
    svc.gridIds.set(7001, grid(7001, 'Acme Corp'));
    svc.gridIds.set(7009, grid(7009, '   ')); // a record without a usable description
    // 7002: not in the map → 404 ObjectNotFound. 7003: the request is taken and never answered.
    svc.variants.fault = (req) => (req.path === '/v2/ids/7003' ? new Promise<boolean>(() => undefined) : false);
    svc.addInbound('a.x12', 'ISA*a~', { gridIdFrom: 7001 });
    svc.addInbound('b.x12', 'ISA*b~', { gridIdFrom: 7002 });
    svc.addInbound('c1.x12', 'ISA*c1~', { gridIdFrom: 7003 });
    svc.addInbound('c2.x12', 'ISA*c2~', { gridIdFrom: 7003 });
    const nameless = svc.addInbound('d.x12', 'ISA*d~');
    svc.addInbound('e.x12', 'ISA*e~', { gridIdFrom: 7009 });
    svc.variants.record = (r, p) => {
      if (p !== nameless) return r;
      const { gridIdFrom: _drop, ...rest } = r;
      return rest;
    };
    const w = world(svc);
    const r = await w.run();
    expect(r.code, r.out).toBe(0);
    expect(tree(w.inbox)).toEqual({
      'Acme Corp/a.x12': 'ISA*a~',
      '7002/b.x12': 'ISA*b~',
      '7003/c1.x12': 'ISA*c1~',
      '7003/c2.x12': 'ISA*c2~',
      'unknown/d.x12': 'ISA*d~',
      '7009/e.x12': 'ISA*e~',
    });
    expect(svc.confirmed()).toHaveLength(6);
    // One lookup per grid id for the whole run (two parcels of 7003: one call), none without a grid id.
    const lookups = svc.requests.filter((q) => q.path.startsWith('/v2/ids/')).map((q) => q.path);
    expect(lookups.sort()).toEqual(['/v2/ids/7001', '/v2/ids/7002', '/v2/ids/7003', '/v2/ids/7009']);
    // The silent one cost one call deadline (api.timeouts.callMs 1.5 s), not a stuck cycle.
    expect(r.ms).toBeLessThan(15_000);
    expect(r.out).toMatch(/partner’s grid ID/);
    expect(r.out).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
    // The hook hears the name the path got, without a second lookup.
    const byId = new Map(svc.parcels.map((p) => [String(p.parcelId), p.fileName]));
    const seen = Object.fromEntries(w.hooks().map((h) => [byId.get(h.id), [h.partner, h.name]]));
    expect(seen).toEqual({
      'a.x12': ['7001', 'Acme Corp'],
      'b.x12': ['7002', '7002'],
      'c1.x12': ['7003', '7003'],
      'c2.x12': ['7003', '7003'],
      'd.x12': ['', 'unknown'],
      'e.x12': ['7009', '7009'],
    });
  });

  it('hostile descriptions stay one folder inside the inbox; the config map overrides the service, which is then not asked', async () => {
    const svc = await service();
    const hostile: Record<number, string> = {
      7101: '../../etc',
      7102: 'a/b',
      7103: 'ctl\u0001\u0007\u001b[31m\nname',
      7104: 'P'.repeat(300),
      7105: '..',
      7106: '/etc/passwd',
    };
    for (const [id, d] of Object.entries(hostile)) {
      svc.gridIds.set(Number(id), grid(Number(id), d));
      svc.addInbound(`h${id}.x12`, `ISA*${id}~`, { gridIdFrom: Number(id) });
    }
    svc.gridIds.set(7200, grid(7200, 'Service Name'));
    svc.addInbound('cfg.x12', 'ISA*cfg~', { gridIdFrom: 7200 });
    const w = world(svc, { partners: { 7200: 'Configured Name' } });
    const r = await w.run();
    expect(r.code, r.out).toBe(0);
    const files = tree(w.inbox);
    expect(Object.keys(files)).toHaveLength(7);
    expect(svc.confirmed()).toHaveLength(7);
    for (const rel of Object.keys(files)) {
      const parts = rel.split('/');
      expect(parts, rel).toHaveLength(2); // exactly one partner folder, never more levels
      expect(parts[0]).not.toMatch(/^\.+$|[\u0000-\u001f]/);
      expect(Buffer.byteLength(parts[0] as string)).toBeLessThanOrEqual(200);
      const full = fs.realpathSync(path.join(w.inbox, rel));
      expect(full.startsWith(fs.realpathSync(w.inbox) + path.sep)).toBe(true);
    }
    // Nothing was written beside the inbox (../../etc would have climbed out of it).
    expect(fs.readdirSync(w.dir).sort()).toEqual(['gridsync.yaml', 'hook.jsonl', 'hook.mjs', 'inbox', 'state']);
    // Each description became one segment by the inbox's naming rules: the last path component, control characters replaced, 200 bytes at most.
    expect(Object.keys(files).sort()).toEqual(
      [
        'etc/h7101.x12',
        'b/h7102.x12',
        'ctl___[31m_name/h7103.x12',
        `${'P'.repeat(200)}/h7104.x12`,
        '_/h7105.x12',
        'passwd/h7106.x12',
        'Configured Name/cfg.x12',
      ].sort(),
    );
    expect(files['Configured Name/cfg.x12']).toBe('ISA*cfg~');
    expect(svc.requests.some((q) => q.path === '/v2/ids/7200')).toBe(false);
  });

  it('issue 24 #9: a sender naming itself like a configured partner, a grid id or another sender never shares its folder, whatever the case or Unicode form', async () => {
    const svc = await service();
    const spoofs: Record<number, string> = {
      7002: 'ACME',
      7003: 'x/../ACME',
      7004: 'acme',
      7005: '\uFF21\uFF23\uFF2D\uFF25', // fullwidth ＡＣＭＥ: NFKC makes it ACME
      7006: '7001', // the folder a grid id gets when it has no name
      7007: 'unknown', // the folder of parcels without a sender
      7008: 'Shared',
      7009: 'sHARED',
      7010: 'Ωmega',
      7011: '\u2126mega', // the ohm sign: NFC/NFKC make it Ω
    };
    svc.addInbound('real.x12', 'ISA*7001~', { gridIdFrom: 7001 });
    for (const [id, d] of Object.entries(spoofs)) {
      svc.gridIds.set(Number(id), grid(Number(id), d));
      svc.addInbound(`s${id}.x12`, `ISA*${id}~`, { gridIdFrom: Number(id) });
    }
    const w = world(svc, { partners: { 7001: 'ACME' } });
    const r = await w.run();
    expect(r.code, r.out).toBe(0);
    expect(svc.confirmed()).toHaveLength(Object.keys(spoofs).length + 1);
    const files = tree(w.inbox);
    const folderOf = new Map<string, string>();
    for (const [rel, content] of Object.entries(files)) folderOf.set(content.slice(4, -1), rel.split('/')[0] as string);
    expect(folderOf.get('7001')).toBe('ACME');
    // One folder per sender, as an SMB share compares names (case and compatibility forms folded).
    const fold = (f: string): string => f.normalize('NFKC').toUpperCase().toLowerCase();
    const owners = new Map<string, string[]>();
    for (const [sender, folder] of folderOf) owners.set(fold(folder), [...(owners.get(fold(folder)) ?? []), sender]);
    for (const [folder, senders] of owners) expect(senders, `folder ${folder}`).toHaveLength(1);
    expect(fold(folderOf.get('7006') as string)).not.toBe('7001');
    expect(fold(folderOf.get('7007') as string)).not.toBe('unknown');
  });

  it('a parcel staged before a crash keeps its path after a restart, even if the service renamed the partner', async () => {
    const svc = await service();
    svc.gridIds.set(7001, grid(7001, 'Acme Corp'));
    svc.addInbound('x.x12', 'ISA*x~', { gridIdFrom: 7001 });
    const w = world(svc);
    const crashed = await w.run({ GRIDSYNC_CRASH_AT: 'in.staged' });
    expect(crashed.signal).toBe('SIGKILL');
    expect(svc.confirmed()).toHaveLength(0);
    svc.gridIds.set(7001, grid(7001, 'Acme Renamed'));
    const r = await w.run();
    expect(r.code, r.out).toBe(0);
    expect(tree(w.inbox)).toEqual({ 'Acme Corp/x.x12': 'ISA*x~' });
    expect(svc.confirmed()).toHaveLength(1);
  });

  it('a config map key that is not a grid id, or a name that is a path, is refused naming the key', async () => {
    const svc = await service();
    for (const [partners, key] of [
      [{ acme: 'Acme' }, 'partners.acme'],
      [{ 7001: 'a/b' }, 'partners.7001'],
      [{ 7001: '..' }, 'partners.7001'],
    ] as const) {
      const w = world(svc, { partners });
      const r = await w.run();
      expect(r.code, r.out).toBe(2);
      expect(r.out).toContain(key);
    }
  });
});

// Our emulator shows a grid ID's record to a key that may see its mailbox: the network admin's
// key sees the demo partner (5002, "Demo Partner"); the mailbox key does not (another tenant's).
describe.each(['rest', 'soap'] as Protocol[])('{partner} against the emulator over %s', (protocol) => {
  it.each([
    ['demo-key-admin', 'Demo Partner'],
    ['demo-key-1001', '5002'],
  ])('with %s the demo partner’s parcel lands under %s/', async (key, folder) => {
    const w = await makeWorld({}, key, protocol);
    cleanups.push(() => w.close());
    // An X12 interchange from the demo partner: over SOAP the sender's grid id comes from it.
    const content = Buffer.from(
      'ISA*00*          *00*          *ZZ*DEMOPARTNER    *ZZ*GRIDSYNC       *260101*1200*U*00401*000000001*0*P*>~GS*FA*DEMOPARTNER*GRIDSYNC*20260101*1200*1*X*004010~ST*997*0001~AK1*IN*1~AK9*A*1*1*1~SE*4*0001~GE*1*1~IEA*1*000000001~',
    );
    await w.emu.inject({ mailboxId: 1001, fileName: 'ack.997', content, gridIdFrom: 5002, gridIdTo: 5001 });
    const p = new InboundPipeline({
      client: w.client,
      journal: w.journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox, { nameTemplate: '{partner}/{fileName}' }) },
      stateDir: w.dirs.state,
    });
    const r = await p.runCycle();
    expect(r).toMatchObject({ confirmed: 1, failed: 0 });
    expect(listFiles(w.dirs.inbox)).toEqual([`${folder}/ack.997`]);
  });
});
