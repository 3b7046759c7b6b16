// gridsync's own parts around a scripted service (not our emulator): a REST client of it, a
// journal and a temporary folder, closed and removed by `cleanups` in reverse order.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GridClient } from '../../src/api/index.js';
import { Journal } from '../../src/journal/index.js';
import type { ScriptedService } from './scripted-service.js';

export interface ScriptedWorld {
  readonly dir: string;
  readonly client: GridClient;
  readonly journal: Journal;
}

export function scriptedWorld(
  svc: ScriptedService,
  cleanups: (() => Promise<void> | void)[],
  clientOptions: { maxAttempts?: number } = {},
): ScriptedWorld {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-scripted-'));
  const client = new GridClient({ baseUrl: svc.url, auth: { apiKey: svc.apiKey }, sleep: async () => undefined, ...clientOptions });
  const journal = Journal.open(path.join(dir, 'journal.sqlite'));
  cleanups.push(
    () => svc.close(),
    () => client.close(),
    () => journal.close(),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  return { dir, client, journal };
}

/** A scripted world with the pipelines' folders made under its root. */
export function scriptedFolders(
  svc: ScriptedService,
  cleanups: (() => Promise<void> | void)[],
  clientOptions: { maxAttempts?: number } = {},
): ScriptedWorld & { dirs: Record<'inbox' | 'outbox' | 'sent' | 'error' | 'state', string> } {
  const world = scriptedWorld(svc, cleanups, clientOptions);
  const dirs = Object.fromEntries(['inbox', 'outbox', 'sent', 'error', 'state'].map((d) => [d, path.join(world.dir, d)])) as Record<
    'inbox' | 'outbox' | 'sent' | 'error' | 'state',
    string
  >;
  for (const d of Object.values(dirs)) fs.mkdirSync(d);
  return { ...world, dirs };
}
