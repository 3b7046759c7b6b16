// The demo partner's acknowledgments over real HTTP: what we upload as mailbox 1001 reaches the
// partner (1002), which answers every interchange into our inbox.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
});
afterEach(async () => emu.close());

async function call(p: string, body: unknown): Promise<{ status: number; data: unknown }> {
  const res = await fetch(emu.url + p, {
    method: 'POST',
    headers: { 'x-api-key': 'demo-key-1001', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: unknown };
  return { status: res.status, data: json.data };
}

const upload = async (fileName: string, content: string): Promise<void> => {
  const r = await call('/v2/parcels/upload', { fileName, content: Buffer.from(content, 'latin1').toString('base64') });
  expect(r.status).toBe(200);
};

async function inbox(): Promise<Map<string, string>> {
  await new Promise((r) => setTimeout(r, 100));
  const list = (await call('/v2/parcels/pending-inbox-list', {})).data as { parcelId: number; fileName: string }[];
  const out = new Map<string, string>();
  for (const p of list) {
    const d = (await call('/v2/parcels/download', { parcelId: p.parcelId })).data as { content: string };
    out.set(p.fileName, Buffer.from(d.content, 'base64').toString('latin1'));
  }
  return out;
}

const pad = (s: string, n: number): string => s.padEnd(n, ' ').slice(0, n);
const isa = (ctrl: string, version: string, test: string, el = '*', term = '~'): string =>
  [
    `ISA`,
    '00',
    pad('', 10),
    '00',
    pad('', 10),
    'ZZ',
    pad('GRIDSYNC', 15),
    'ZZ',
    pad('DEMOPARTNER', 15),
    '261122',
    '1200',
    '^',
    version,
    ctrl,
    '0',
    test,
    ':',
  ].join(el) + term;

describe('demo partner acknowledgments', () => {
  it('answers every interchange of a newline-terminated file: one 997 set per group, AK2/AK5 per set, real AK9 counts, GS08/ISA12/ISA15 echoed', async () => {
    const nl = (segs: string[]): string => segs.map((s) => `${s}\n`).join('');
    const first =
      isa('000000101', '00401', 'P', '*', '\n') +
      nl([
        'GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*11*X*004010',
        'ST*810*0001',
        'BIG*20261122*1',
        'SE*3*0001',
        'GE*1*11',
        'IEA*1*000000101',
      ]);
    const second =
      isa('000000102', '00501', 'T', '*', '\n') +
      nl([
        'GS*PO*GRIDSYNC*DEMOPARTNER*20261122*1200*21*X*005010',
        'ST*850*0001',
        'BEG*00*SA*1',
        'SE*3*0001',
        'ST*850*0002',
        'BEG*00*SA*2',
        'SE*9*0002', // wrong count: rejected with AK5 code 4
        'GE*2*21',
        'GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*22*X*004010',
        'ST*810*0003',
        'SE*2*0003',
        'GE*1*22',
        'IEA*2*000000102',
      ]);
    // the third asks for a TA1 (ISA14 = 1) and declares 2 groups in IEA01 for the 1 it holds
    const third =
      isa('000000103', '00401', 'P').replace('*000000103*0*', '*000000103*1*') +
      'GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*31*X*004010~ST*810*0001~SE*2*0001~GE*1*31~IEA*2*000000103~';
    await upload('batch.x12', `\u00ef\u00bb\u00bf${first}\n${second}\r\n${third}`);
    const got = await inbox();
    expect([...got.keys()].sort()).toEqual(['997_000000101.x12', '997_000000102.x12', '997_000000103.x12']);
    expect(got.get('997_000000103.x12')?.slice(106)).toMatch(/^TA1\*000000103\*261122\*1200\*E\*021~GS\*FA\*/);
    expect(got.get('997_000000101.x12')).not.toContain('TA1');
    const a = got.get('997_000000101.x12') as string;
    expect(a.slice(0, 106)).toMatch(
      /^ISA\*00\*.{10}\*00\*.{10}\*ZZ\*DEMOPARTNER {4}\*ZZ\*GRIDSYNC {7}\*\d{6}\*\d{4}\*\^\*00401\*\d{9}\*0\*P\*>~$/,
    );
    expect(a.slice(106)).toMatch(
      /^GS\*FA\*DEMOPARTNER\*GRIDSYNC\*\d{8}\*\d{4}\*\d+\*X\*004010~ST\*997\*0001~AK1\*IN\*11~AK2\*810\*0001~AK5\*A~AK9\*A\*1\*1\*1~SE\*6\*0001~GE\*1\*\d+~IEA\*1\*\d{9}~$/,
    );
    const b = got.get('997_000000102.x12') as string;
    expect(b.slice(0, 106)).toMatch(/\*00501\*\d{9}\*0\*T\*>~$/);
    const segs = b.slice(106).split('~');
    const gs = segs.filter((s) => s.startsWith('GS*'));
    expect(gs.map((s) => s.split('*')[8])).toEqual(['005010', '004010']);
    expect(b).toContain('ST*997*0001~AK1*PO*21~AK2*850*0001~AK5*A~AK2*850*0002~AK5*R*4~AK9*P*2*2*1~SE*8*0001~');
    expect(b).toContain('ST*997*0001~AK1*IN*22~AK2*810*0003~AK5*A~AK9*A*1*1*1~SE*6*0001~');
    expect(segs.at(-2)).toMatch(/^IEA\*2\*\d{9}$/);
  });

  it('never acknowledges an acknowledgment (997, 999, TA1, CONTRL)', async () => {
    const fa = (ctrl: string, set: string): string =>
      isa(ctrl, '00501', 'P') +
      `GS*FA*GRIDSYNC*DEMOPARTNER*20261122*1200*5*X*005010X231A1~ST*${set}*0001~AK1*HC*1~AK9*A*1*1*1~SE*4*0001~GE*1*5~IEA*1*${ctrl}~`;
    await upload('997.x12', fa('000000201', '997'));
    await upload('999.x12', fa('000000202', '999'));
    await upload('ta1.x12', `${isa('000000203', '00401', 'P')}TA1*000000009*261122*1200*A*000~IEA*0*000000203~`);
    await upload(
      'contrl.edi',
      "UNB+UNOC:3+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+261122:1200+77'UNH+1+CONTRL:D:3:UN'UCI+5+DEMOPARTNER:ZZ+GRIDSYNC:ZZ+7'UNT+3+1'UNZ+1+77'",
    );
    // a regular interchange last: its answer proves the partner has read everything before it
    await upload(
      'in.x12',
      `${isa('000000204', '00401', 'P')}GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*6*X*004010~ST*810*0001~SE*2*0001~GE*1*6~IEA*1*000000204~`,
    );
    expect([...(await inbox()).keys()]).toEqual(['997_000000204.x12']);
  });

  it('answers EDIFACT syntax 4 with a syntax-4 CONTRL carrying the test indicator, one UCM per message', async () => {
    await upload(
      'o.edi',
      "UNA:+.? 'UNB+UNOD:4+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+20261122:1200+4711++++++1'UNH+1+ORDERS:D:01B:UN'BGM+220+1'UNT+3+1'UNH+2+ORDERS:D:01B:UN'BGM+220+2'UNT+9+2'UNZ+2+4711'",
    );
    const got = await inbox();
    expect([...got.keys()]).toEqual(['CONTRL_4711.edi']);
    const c = got.get('CONTRL_4711.edi') as string;
    expect(c).toMatch(/^UNA:\+\.\? 'UNB\+UNOD:4\+DEMOPARTNER:ZZ\+GRIDSYNC:ZZ\+\d{8}:\d{4}\+(\d+)\+\+\+\+\+\+1'UNH\+1\+CONTRL:4:1:UN'/);
    expect(c).toContain("UCI+4711+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+7'UCM+1+ORDERS:D:01B:UN+7'UCM+2+ORDERS:D:01B:UN+4+29'UNT+5+1'");
  });
});
