// errorDir is shared with the ERP group and `gridsync requeue --all` is often run as root: a FIFO,
// a link to /dev/zero or a huge file planted as NAME.error.json must neither block it, nor make it
// read gigabytes, nor stop it — each such file is reported and skipped, the others are requeued.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('requeue: planted error reports', () => {
  it('a FIFO, a /dev/zero link and an oversized file as reports are reported and skipped; a real report is honoured', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.mkdirSync(w.error, { recursive: true });
    for (const name of ['good.x12', 'fifo.x12', 'zero.x12', 'big.x12']) fs.writeFileSync(path.join(w.error, name), `ISA*${name}~`);
    fs.writeFileSync(path.join(w.error, 'good.x12.error.json'), JSON.stringify({ file: 'original-name.x12', reason: 'refused' }));
    execFileSync('mkfifo', [path.join(w.error, 'fifo.x12.error.json')]);
    fs.symlinkSync('/dev/zero', path.join(w.error, 'zero.x12.error.json'));
    fs.writeFileSync(path.join(w.error, 'big.x12.error.json'), Buffer.alloc(1024 * 1024, 0x20));

    const r = spawnSync(process.execPath, [cliPath, 'requeue', '-c', w.configFile, '--all'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.signal).toBeNull(); // it finished on its own
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/skipped .*fifo\.x12: .*fifo\.x12\.error\.json is a FIFO/);
    expect(r.stderr).toMatch(/skipped .*zero\.x12: .*zero\.x12\.error\.json is a symbolic link/);
    expect(r.stderr).toMatch(/skipped .*big\.x12: .*big\.x12\.error\.json is a file of more than 65536 bytes/);
    expect(fs.readdirSync(w.outbox)).toEqual(['original-name.x12']);
    expect(fs.readdirSync(w.error).sort()).toEqual(
      ['big.x12', 'big.x12.error.json', 'fifo.x12', 'fifo.x12.error.json', 'zero.x12', 'zero.x12.error.json'].sort(),
    );
  });
});
