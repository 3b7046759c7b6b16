/** `gridsync emulator`: the local service as a process. */
import fs from 'node:fs';
import { startEmulator } from '../emulator/index.js';
import { UsageError, parseCommand, runCommand, untilSignal } from './args.js';

const USAGE = `usage: gridsync emulator [--host H] [--port N] [--data FILE] [--seed FILE] [--root-key KEY] [--no-admin]

  --host H         address to listen on (default 127.0.0.1)
  --port N         port; 0 picks a free one (default 8080)
  --data FILE      SQLite file for the state, kept across restarts (default: in memory)
  --seed FILE      YAML fixture: networks, mailboxes, users, grid IDs, interconnects
  --root-key KEY   API key of the seeded Root user
  --no-admin       disable the /_emulator test routes (inject, faults, requests, parcels)

Prints "gridsync emulator listening on URL" and runs until SIGTERM/SIGINT.`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, {
      host: { type: 'string' },
      port: { type: 'string' },
      data: { type: 'string' },
      seed: { type: 'string' },
      'root-key': { type: 'string' },
      'no-admin': { type: 'boolean' },
    });
    if (!args) return 0;
    const v = args.values;
    const port = Number(v.port ?? '8080');
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: not a port number: ${v.port ?? ''}`);
    if (v.seed !== undefined && !fs.existsSync(v.seed)) throw new UsageError(`--seed ${v.seed}: no such file (a YAML fixture: networks, mailboxes, users, grid IDs)`);
    const emu = await startEmulator({
      host: v.host ?? '127.0.0.1',
      port,
      ...(v.data ? { dataFile: v.data } : {}),
      ...(v.seed ? { seed: v.seed } : {}),
      ...(v['root-key'] ? { rootKey: v['root-key'] } : {}),
      admin: !v['no-admin'],
    });
    process.stdout.write(`gridsync emulator listening on ${emu.url}\n`);
    await untilSignal();
    await emu.close();
    return 0;
  });
}
