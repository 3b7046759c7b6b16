// ERP sharing through a group (docs/operations.md): a file the ERP drops with group read keeps its
// group and permission bits in sentDir — the private snapshot taken at the claim was created 0600
// and owned by gridsync's group, so the ERP could no longer read what was sent (found following
// the install guide).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe("outbound: the archived copy keeps the dropped file's group and mode", () => {
  it('0640 with another group in the outbox → 0640 with that group in sentDir', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    const f = path.join(w.outbox, 'shared.x12');
    fs.writeFileSync(f, x12(77));
    fs.chmodSync(f, 0o640);
    const gid = process.getuid?.() === 0 ? 65534 : fs.statSync(f).gid;
    fs.chownSync(f, -1, gid);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    const sent = fs.statSync(path.join(w.sent, 'shared.x12'));
    expect((sent.mode & 0o777).toString(8)).toBe('640');
    expect(sent.gid).toBe(gid);
  });
});
