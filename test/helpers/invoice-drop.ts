// Where the hostile outbound tests start: a world with an outbox only (two attempts per file) whose
// service is the given `api`, and one ERP file, a real invoice, waiting there old enough to be sent.
import fs from 'node:fs';
import path from 'node:path';
import { makeDaemonWorld, type DaemonWorld } from './daemon-config.js';
import { repoRoot } from './journal-child.js';

export const INVOICE = fs.readFileSync(path.join(repoRoot, 'examples/invoice-810.x12'));

/** The world, `invoice-810.x12` in its outbox; `config` holds `api` and whatever else the test sets. The caller cleans it up. */
export function invoiceDropWorld(config: Record<string, unknown>): DaemonWorld {
  const w = makeDaemonWorld(config, {
    inbox: undefined,
    outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: '500ms', maxAttempts: 2 },
  });
  fs.mkdirSync(w.outbox, { recursive: true });
  const file = path.join(w.outbox, 'invoice-810.x12');
  fs.writeFileSync(file, INVOICE);
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(file, old, old);
  return w;
}
