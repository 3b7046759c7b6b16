// `baseUrl: embedded` across a restart: the demo partner's 997 to a file sent before the stop
// arrives after it. The embedded emulator keeps its state in the stateDir, and the partner answers
// at start-up what reached it while no process was there to do it.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { eventually, runCli, startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

let w: DaemonWorld | undefined;
afterEach(() => w?.cleanup());

const replies = (inbox: string): string[] =>
  fs.existsSync(inbox) ? fs.readdirSync(inbox).filter((f) => fs.readFileSync(path.join(inbox, f), 'latin1').includes('ST*997*')) : [];

it('a file sent just before the daemon is killed gets its 997 from the next once', async () => {
  w = makeDaemonWorld();
  fs.mkdirSync(w.outbox, { recursive: true });
  fs.writeFileSync(path.join(w.outbox, 'invoice.x12'), x12(777));
  const daemon = startCli(['run', '-c', w.configFile]);
  const sentDir = w.sent;
  await eventually(() => (fs.existsSync(path.join(sentDir, 'invoice.x12')) ? true : undefined), 30_000);
  // Killed the moment its upload is archived: the partner's pick-up (a timer) dies with it.
  daemon.kill('SIGKILL');
  await daemon.exited;
  const once = runCli(['once', '-c', w.configFile]);
  expect(once.status).toBe(0);
  expect(fs.existsSync(path.join(w.state, 'emulator.sqlite'))).toBe(true);
  expect(replies(w.inbox)).toHaveLength(1);
});
