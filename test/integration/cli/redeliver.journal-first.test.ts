// `gridsync redeliver` had the service reset the parcel first and noted it in the journal after.
// Whatever came between — the command killed, the service's answer lost — left the journal not
// knowing: a parcel whose confirm was not yet seen to take, listed ready again, was taken for a
// confirm that never took and confirmed once more, and the redelivery the service had made was
// lost. The note now comes first. A reset that fails says what the service shows: the parcel
// ready (it will be delivered again), not ready (nothing changes), or not known.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { openJournal, REDELIVERY_REQUESTED } from '../../../src/journal/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels } from '../../helpers/world.js';

const MB = 1001;

interface World {
  readonly dir: string;
  readonly config: string;
  readonly inbox: string;
  readonly emu: Emulator;
}

const worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.emu.close();
    fs.rmSync(w.dir, { recursive: true, force: true });
  }
});

async function makeWorld(): Promise<World> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-redeliver-'));
  const emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
  const config = path.join(dir, 'gridsync.yaml');
  const inbox = path.join(dir, 'inbox');
  fs.writeFileSync(
    config,
    YAML.stringify({
      api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
      stateDir: path.join(dir, 'state'),
      log: { level: 'warn', pretty: false },
      mailboxes: [{ mailboxId: MB, inbox: { dir: inbox } }],
    }),
  );
  const w = { dir, config, inbox, emu };
  worlds.push(w);
  return w;
}

/** The built CLI, in a child this process does not block on: the emulator answers it from here. */
const cli = (w: World, args: string[], env: Record<string, string> = {}) => startCli([...args, '-c', w.config], env).exited;

const statusOf = async (w: World, id: number): Promise<unknown> =>
  (await emulatorParcels(w.emu, MB)).find((p) => p.parcelId === id)?.status;

async function requested(w: World): Promise<number> {
  const journal = await openJournal({ url: undefined, stateDir: path.join(w.dir, 'state') }, { readonly: true });
  try {
    return (await journal.all('SELECT 1 FROM events WHERE to_state = ?', REDELIVERY_REQUESTED)).length;
  } finally {
    await journal.close();
  }
}

/** A parcel placed and confirmed (the emulator records InBoxTransferred) by a run killed right after the confirm was journalled: not yet seen to take. */
async function confirmedUnseen(w: World): Promise<number> {
  const id = await w.emu.inject({ mailboxId: MB, fileName: 'po.x12', content: Buffer.from(x12(81)) });
  expect((await cli(w, ['once'], { GRIDSYNC_CRASH_AT: 'in.confirmed' })).signal).toBe('SIGKILL');
  expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);
  expect(await statusOf(w, id)).toBe('InBoxTransferred');
  return id;
}

describe('redeliver journals the request before the reset', () => {
  it("the reset's answer lost: the service reset the parcel, and the next cycle delivers it again", async () => {
    const w = await makeWorld();
    const id = await confirmedUnseen(w);
    // The service resets the parcel and the connection breaks before its answer.
    w.emu.setFaults({ rules: [{ endpoint: 'parcels.resetToInbox', resetAfterRate: 1 }] });
    const r = await cli(w, ['redeliver', String(id)]);
    expect(await statusOf(w, id)).toBe('InBoxReady');
    w.emu.setFaults({});

    const again = await cli(w, ['once', '--log-level', 'info']);
    expect(again.code, again.stderr).toBe(0);
    expect(fs.readdirSync(w.inbox), 'delivered again, not confirmed once more').toHaveLength(2);
    expect(again.stdout).toMatch(/redelivered on request/);

    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `parcel ${id}: the reset was answered with an error \\(.+\\), but the service shows the parcel ready: the next cycle delivers it again`,
      ),
    );
    expect(await requested(w)).toBe(1);
  });

  it('a reset that did not take: exit 1, the message says nothing changes, and nothing is delivered again', async () => {
    const w = await makeWorld();
    const id = await confirmedUnseen(w);
    w.emu.setFaults({ rules: [{ endpoint: 'parcels.resetToInbox', rate500: 1 }] });
    const r = await cli(w, ['redeliver', String(id)]);
    w.emu.setFaults({});
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `parcel ${id}: not reset — .+; the service does not show it ready, so it is not delivered again \\(the journal notes the request`,
      ),
    );
    expect(await statusOf(w, id)).toBe('InBoxTransferred');
    expect(await requested(w)).toBe(1);

    const again = await cli(w, ['once']);
    expect(again.code, again.stderr).toBe(0);
    expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);
    expect(await statusOf(w, id)).toBe('InBoxTransferred');
  });

  it('the status unreadable too: exit 1, and the message says a reset that did take is delivered again', async () => {
    const w = await makeWorld();
    const id = await confirmedUnseen(w);
    // The command looks the parcel up before anything else (whose it is): that first read gets
    // through, the reads after the reset do not. Seed 13 of the emulator's fault schedule draws a
    // pass for the lookup, then (after the reset's 3 attempts) a 500 for each of the 3 reads.
    w.emu.setFaults({
      seed: 13,
      rules: [
        { endpoint: 'parcels.resetToInbox', resetAfterRate: 1 },
        { endpoint: 'parcels.get', rate500: 0.5 },
      ],
    });
    const r = await cli(w, ['redeliver', String(id)]);
    w.emu.setFaults({});
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `parcel ${id}: not reset — .+ \\(its status could not be read either: .+\\); if the service did reset it, the next cycle delivers it again: the journal notes the request`,
      ),
    );
    const again = await cli(w, ['once']);
    expect(again.code, again.stderr).toBe(0);
    expect(fs.readdirSync(w.inbox)).toHaveLength(2);
  });
});
