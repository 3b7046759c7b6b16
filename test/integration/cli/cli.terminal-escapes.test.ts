// A file name carrying terminal control sequences (retitle the window, clear the screen, a bidi
// override that shows the name reversed) reaches the operator's terminal only escaped: the
// bytes the CLI writes to stdout and stderr hold no control character a terminal acts on.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

/** C0 except tab and newline, DEL, C1, bidi overrides and isolates. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('CLI output: control characters from names are escaped', () => {
  it('status (table and JSON) and requeue print an escaped name', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    const hostile = 'evil\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eorder.x12';
    fs.writeFileSync(path.join(w.outbox, hostile), 'not an interchange');
    expect(runCli(['once', '-c', w.configFile], {}, w.dir).status).toBe(1);

    for (const args of [
      ['status', '-c', w.configFile],
      ['status', '-c', w.configFile, '--json'],
      ['requeue', '-c', w.configFile, '--all'],
    ]) {
      const r = runCli(args, {}, w.dir);
      expect({ args, status: r.status }).toEqual({ args, status: 0 });
      expect(r.stdout).toContain('evil');
      expect(r.stdout).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eorder.x12');
      expect({ args, active: ACTIVE.exec(r.stdout + r.stderr)?.[0] }).toEqual({ args, active: undefined });
      // The JSON is still JSON, and gives the real name.
      if (args.includes('--json'))
        expect(
          (JSON.parse(r.stdout) as { outbound: { recentFailures: { file: string }[] } }).outbound.recentFailures.map((f) => f.file),
        ).toContain(hostile);
    }
  });
});
