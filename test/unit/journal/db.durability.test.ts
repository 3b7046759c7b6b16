import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/db.js';
import { MIGRATIONS } from '../../../src/journal/migrations.js';
import { distUrl, runModuleChild } from '../../helpers/journal-child.js';
import { prerequisite, runs } from '../../helpers/require-tool.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('journal durability settings', () => {
  it('sets WAL and synchronous=NORMAL (the journal fsyncs the WAL itself) on every open, not only the first', async () => {
    const file = path.join(dir, 'j.sqlite');
    for (let i = 0; i < 2; i++) {
      const j = Journal.open(file);
      expect(j.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(j.db.pragma('synchronous', { simple: true })).toBe(1);
      expect(j.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
      await j.close();
    }
  });

  it('applies every migration once and records the version', async () => {
    const file = path.join(dir, 'j.sqlite');
    await Journal.open(file).close();
    const j = Journal.open(file);
    expect(j.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
    await j.close();
  });

  it('keeps committed events across a SIGKILL of the writer', async () => {
    const file = path.join(dir, 'j.sqlite');
    const child = runModuleChild(`
      const { Journal } = await import(${JSON.stringify(distUrl('journal/db.js'))});
      const j = Journal.open(${JSON.stringify(file)});
      for (let i = 0; i < 50; i++) j.transaction(() => j.recordEvent({ direction: 'in', mailboxId: 1, item: i, from: 'a', to: 'b' }));
      console.log('committed');
      setInterval(() => {}, 1000);
    `);
    await child.waitFor(/committed/);
    child.kill('SIGKILL');
    await child.exited;
    const j = Journal.open(file);
    expect(j.db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 50 });
    expect(j.integrityCheck()).toEqual(['ok']);
    await j.close();
  });

  it('prunes events older than the retention and keeps meta values', async () => {
    let t = 1_000_000;
    const j = Journal.open(path.join(dir, 'j.sqlite'), { now: () => t });
    j.transaction(() => j.recordEvent({ direction: 'daemon', item: 'old' }));
    t += 10_000;
    j.transaction(() => j.recordEvent({ direction: 'daemon', item: 'new', detail: { why: 'kept' } }));
    expect(await j.pruneEvents(5_000)).toBe(1);
    expect(j.db.prepare('SELECT item, detail FROM events').all()).toEqual([{ item: 'new', detail: '{"why":"kept"}' }]);
    await j.setMeta('lastCycle', '1');
    await j.setMeta('lastCycle', '2');
    expect(await j.getMeta('lastCycle')).toBe('2');
    expect(await j.getMeta('missing')).toBeUndefined();
    await j.close();
  });

  // The durability contract, checked on the real syscalls: a commit() resolves only after an
  // fsync of the WAL that started after its frames were written, and that fsync does not run on
  // the event loop's thread. Likewise transaction() returns only after an fsync of the WAL.
  const strace = prerequisite(
    'strace',
    runs('strace', '-V'),
    'the syscall order of journal commits (WAL fsync before resolve) is not checked',
  );
  it.skipIf(!strace)('resolves a commit only after the WAL holding it is fsynced, off the event loop thread', () => {
    const file = path.join(dir, 'j.sqlite');
    const trace = path.join(dir, 'trace');
    const script = `
      const fs = await import('node:fs');
      const { Journal } = await import(${JSON.stringify(distUrl('journal/db.js'))});
      const j = Journal.open(${JSON.stringify(file)});
      fs.writeSync(1, 'MARK-opened\\n');
      await Promise.all(Array.from({ length: 5 }, (_, i) => j.commit(() => j.recordEvent({ direction: 'in', mailboxId: 1, item: i }))));
      fs.writeSync(1, 'MARK-committed\\n');
      j.transaction(() => j.recordEvent({ direction: 'in', mailboxId: 1, item: 'sync' }));
      fs.writeSync(1, 'MARK-transaction\\n');
      j.close();
    `;
    const r = spawnSync(
      'strace',
      [
        '-f',
        '-s',
        '256',
        '-o',
        trace,
        '-e',
        'trace=openat,write,pwrite64,fsync,fdatasync',
        process.execPath,
        '--input-type=module',
        '-e',
        script,
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const lines = fs.readFileSync(trace, 'utf8').split('\n');
    const mainPid = Number(lines[0]?.split(/\s+/)[0]);
    const walFds = new Set<string>();
    const events: { kind: 'walWrite' | 'walSync' | 'mark'; tid: number; what?: string }[] = [];
    for (const line of lines) {
      const tid = Number(line.split(/\s+/)[0]);
      const open = /openat\(.*"([^"]+)".*= (\d+)$/.exec(line);
      if (open?.[1]?.endsWith('j.sqlite-wal')) walFds.add(open[2] as string);
      const call = /(pwrite64|write|fsync|fdatasync)\((\d+)[,) ]/.exec(line);
      if (!call) continue;
      if (call[2] === '1' && /MARK-(\w+)/.test(line)) events.push({ kind: 'mark', tid, what: /MARK-(\w+)/.exec(line)?.[1] as string });
      else if (walFds.has(call[2] as string)) events.push({ kind: /sync/.test(call[1] as string) ? 'walSync' : 'walWrite', tid });
    }
    const at = (what: string): number => events.findIndex((e) => e.kind === 'mark' && e.what === what);
    for (const [from, to, offLoop] of [
      ['opened', 'committed', true],
      ['committed', 'transaction', false],
    ] as const) {
      const span = events.slice(at(from) + 1, at(to));
      const lastWrite = span.map((e) => e.kind).lastIndexOf('walWrite');
      expect(lastWrite, `WAL frames written between ${from} and ${to}`).toBeGreaterThanOrEqual(0);
      const syncs = span.slice(lastWrite + 1).filter((e) => e.kind === 'walSync');
      expect(syncs.length, `an fsync of the WAL after its last write, before ${to}`).toBeGreaterThan(0);
      if (offLoop) expect(syncs.every((e) => e.tid !== mainPid)).toBe(true);
      else expect(syncs.some((e) => e.tid === mainPid)).toBe(true);
    }
  });
});
