// Hostile round 3: whoever can write the folder holding the inbox swaps the inbox for a symbolic
// link to another directory while `gridsync run` runs. A parcel whose name a partner chose
// (`authorized_keys` here) was placed into the link's target — any directory gridsync can write.
// The inbox is the folder its path led to at first use (or one made again there); a path that
// leads elsewhere is not written to, and the parcel waits on the service until it leads back.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { callbackWorldForFile } from '../../helpers/callbacks-world.js';
import { swapAtPause } from '../../helpers/swap-at-pause.js';

const w = callbackWorldForFile();

/** A folder of its own under the file's world: a config for mailbox 1001 with `./inbox`, and an empty `victim` folder. */
function inboxWorld(name: string, extra: Record<string, unknown>): { base: string; file: string; inbox: string; victim: string } {
  const base = path.join(w.dir, name);
  fs.mkdirSync(base);
  const file = path.join(base, 'gridsync.yaml');
  const config = { api: { baseUrl: w.emuUrl, apiKey: 'demo-key-1001' }, stateDir: './state', ...extra };
  fs.writeFileSync(file, YAML.stringify({ ...config, mailboxes: [{ mailboxId: 1001, inbox: { dir: './inbox' } }] }), { mode: 0o600 });
  const victim = path.join(base, 'victim');
  fs.mkdirSync(victim);
  return { base, file, inbox: path.join(base, 'inbox'), victim };
}

describe('the inbox swapped for a link to another directory under `run`', () => {
  it('places nothing in the link target; the parcel arrives once the inbox is back', async () => {
    const { base, file, inbox, victim } = inboxWorld('inbox-link', { log: { level: 'info', pretty: false }, schedule: { poll: '1s' } });
    const child = startCli(['run', '-c', file], {}, base);
    try {
      await w.inject('first.x12', 'ISA*first~');
      await eventually(() => fs.existsSync(path.join(inbox, 'first.x12')), 30_000, 'the first parcel placed');
      fs.renameSync(inbox, `${inbox}.away`);
      fs.symlinkSync(victim, inbox);
      await w.inject('authorized_keys', 'ISA*second~');
      // Several polls (1 s) later:
      await new Promise((r) => setTimeout(r, 5000));
      expect(fs.readdirSync(victim)).toEqual([]);
      fs.unlinkSync(inbox);
      fs.renameSync(`${inbox}.away`, inbox);
      await eventually(() => fs.existsSync(path.join(inbox, 'authorized_keys')), 30_000, 'the parcel placed once the inbox is back');
      expect(fs.readFileSync(path.join(inbox, 'authorized_keys'), 'utf8')).toBe('ISA*second~');
    } finally {
      child.kill('SIGTERM');
      await child.exited;
    }
  }, 90_000);
});

describe('the inbox swapped for a link between its check and the placement', () => {
  // The folder that was checked is no longer at the inbox path either (inbound.inbox-rotated.test.ts): the
  // parcel waits on the service until the path leads to the inbox again.
  it('places nothing in the link target nor in the folder moved away; the parcel arrives once the inbox is back', async () => {
    const { base, file, inbox, victim } = inboxWorld('inbox-race', { log: { level: 'warn', pretty: false } });
    fs.mkdirSync(inbox);
    await w.inject('authorized_keys', 'ISA*raced~');
    const child = startCli(['once', '-c', file], { GRIDSYNC_PAUSE_AT: 'in.inbox-checked:1' }, base);
    try {
      await swapAtPause(child, 'in.inbox-checked', inbox, victim);
      await child.exited;
      expect(fs.readdirSync(victim)).toEqual([]);
      expect(fs.readdirSync(`${inbox}.away`)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      await child.exited;
    }
    fs.unlinkSync(inbox);
    fs.renameSync(`${inbox}.away`, inbox);
    const again = startCli(['once', '-c', file], {}, base);
    expect((await again.exited).code).toBe(0);
    expect(fs.readFileSync(path.join(inbox, 'authorized_keys'), 'utf8')).toBe('ISA*raced~');
  }, 90_000);
});
