/** `gridsync emulator`: the local service as a process. */
import fs from 'node:fs';
import { startEmulator } from '@gridsync/emulator';
import { UsageError, parseCommand, runCommand, untilSignal } from './args.js';
import { print, printError } from './print.js';

/** The Root key from the environment: not visible in `ps` as an argument would be. */
export const ROOT_KEY_ENV = 'GRIDSYNC_EMULATOR_ROOT_KEY';

const USAGE = `usage: gridsync emulator [--host H] [--port N] [--data FILE] [--seed FILE] [--root-key-file FILE] [--no-admin] [--expose] [--remote-admin]

  --host H              address to listen on (default 127.0.0.1)
  --port N              port; 0 picks a free one (default 8080)
  --data FILE           SQLite file for the state, kept across restarts (default: in memory)
  --seed FILE           YAML fixture: networks, mailboxes, users, grid IDs, interconnects
  --root-key-file FILE  API key of the seeded Root user, read from FILE (first line);
                        or set ${ROOT_KEY_ENV}. (--root-key KEY also works but shows in ps.)
  --no-admin            disable the /_emulator test routes (inject, faults, requests, parcels)
  --expose              required to listen on an address other than loopback; needs a Root key
                        of at least 16 characters that is not the default one
  --remote-admin        answer the /_emulator routes from other hosts too (they must send the
                        Root key as X-API-Key); otherwise they answer loopback callers only

Prints "gridsync emulator listening on URL" and runs until SIGTERM/SIGINT.`;

function rootKey(v: { 'root-key'?: string | undefined; 'root-key-file'?: string | undefined }): string | undefined {
  if (v['root-key-file']) {
    let text: string;
    try {
      text = fs.readFileSync(v['root-key-file'], 'utf8');
    } catch (err) {
      throw new UsageError(`--root-key-file: cannot read ${v['root-key-file']}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const key = text.split('\n')[0]?.trim() ?? '';
    if (key === '') throw new UsageError(`--root-key-file: ${v['root-key-file']} is empty`);
    return key;
  }
  if (v['root-key']) {
    printError(
      'gridsync emulator: warning: --root-key shows the key in the process list; prefer --root-key-file or ' + ROOT_KEY_ENV + '\n',
    );
    return v['root-key'];
  }
  const env = process.env[ROOT_KEY_ENV];
  return env && env.trim() !== '' ? env.trim() : undefined;
}

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, {
      host: { type: 'string' },
      port: { type: 'string' },
      data: { type: 'string' },
      seed: { type: 'string' },
      'root-key': { type: 'string' },
      'root-key-file': { type: 'string' },
      'no-admin': { type: 'boolean' },
      expose: { type: 'boolean' },
      'remote-admin': { type: 'boolean' },
    });
    if (!args) return 0;
    const v = args.values;
    // Digits only: Number('') and Number(' ') are 0, a random port nobody asked for.
    const port = /^\d{1,5}$/.test(v.port ?? '8080') ? Number(v.port ?? '8080') : NaN;
    if (!(port <= 65535)) throw new UsageError(`--port: not a port number: ${v.port ?? ''}`);
    if (v.seed !== undefined && !fs.existsSync(v.seed))
      throw new UsageError(`--seed ${v.seed}: no such file (a YAML fixture: networks, mailboxes, users, grid IDs)`);
    const key = rootKey(v);
    const emu = await startEmulator({
      host: v.host ?? '127.0.0.1',
      port,
      ...(v.data ? { dataFile: v.data } : {}),
      ...(v.seed ? { seed: v.seed } : {}),
      ...(key ? { rootKey: key } : {}),
      admin: !v['no-admin'],
      expose: v.expose ?? false,
      remoteAdmin: v['remote-admin'] ?? false,
    });
    if (v.expose) {
      printError(
        'gridsync emulator: warning: listening beyond loopback; the demo users of the default seed (keys demo-key-1001, demo-key-1002, demo-key-admin) are known to anyone who read the docs — use --seed with your own keys\n',
      );
    }
    // Taken before the line is printed: whoever waits for the line may signal at once, and a
    // SIGTERM in between ended the process by the default action, the store not closed.
    const stopped = untilSignal();
    print(`gridsync emulator listening on ${emu.url}\n`);
    await stopped;
    await emu.close();
    return 0;
  });
}
