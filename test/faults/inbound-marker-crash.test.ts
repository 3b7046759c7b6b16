// An ERP that waits for the done marker takes each file away as soon as the marker is there. A
// crash may leave a marker behind: the restart must then know the parcel was placed, or it finds
// neither the staging file nor the final file and downloads the parcel again — a second copy, as
// one SOAP soak run showed (two parcels placed twice). `gridsync once` as a child process, killed by
// each inbound crash point; between the crash and the restart the test is that ERP.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { onceChild } from '../helpers/daemon-child.js';
import { emulatorParcels, listFiles } from '../helpers/world.js';

const MAILBOX = 1001;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let emu: Emulator;
let root: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-marker-crash-'));
  emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
});
afterAll(async () => {
  await emu.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The ERP: every file whose marker is there is taken away (content kept by hash), marker too. */
function takeMarked(inbox: string, taken: string[]): void {
  for (const f of listFiles(inbox)) {
    if (f.endsWith('.done') || !fs.existsSync(path.join(inbox, `${f}.done`))) continue;
    taken.push(sha(fs.readFileSync(path.join(inbox, f))));
    fs.unlinkSync(path.join(inbox, f));
    fs.unlinkSync(path.join(inbox, `${f}.done`));
  }
}

describe('an ERP that takes marked files between a crash and the restart', () => {
  // The inbound crash points this concerns: from the link into the inbox to the confirm.
  for (const point of ['in.linked', 'in.renamed', 'in.placed', 'in.marked', 'in.confirm-answered']) {
    it(`gets each parcel exactly once after a SIGKILL at ${point}`, async () => {
      const dir = path.join(root, point);
      const inbox = path.join(dir, 'inbox');
      const config = path.join(dir, 'gridsync.yaml');
      fs.mkdirSync(inbox, { recursive: true });
      fs.writeFileSync(
        config,
        [
          `api: { baseUrl: "${emu.url}", apiKey: demo-key-${MAILBOX}, maxAttempts: 1 }`,
          `stateDir: ${path.join(dir, 'state')}`,
          'log: { level: warn, pretty: false }',
          'mailboxes:',
          `  - mailboxId: ${MAILBOX}`,
          `    inbox: { dir: ${inbox}, doneMarker: true, concurrency: 1 }`,
          '',
        ].join('\n'),
      );
      const want: string[] = [];
      for (let k = 0; k < 4; k++) {
        const content = Buffer.from(`${point} parcel ${k} ${'x'.repeat(100 * k)}`);
        await emu.inject({ mailboxId: MAILBOX, fileName: `in-${k}.x12`, content });
        want.push(sha(content));
      }
      const taken: string[] = [];
      const first = await onceChild(config, `${point}:2`);
      expect(first.signal, `${point}:2 reached: ${first.stderr}`).toBe('SIGKILL');
      takeMarked(inbox, taken);
      const unconfirmed = async (): Promise<unknown[]> =>
        (await emulatorParcels(emu, MAILBOX)).filter((p) => p.direction === 'in' && p.status !== 'InBoxTransferred');
      for (let run = 0; run < 3; run++) {
        const r = await onceChild(config);
        expect(r.code, r.stderr).toBe(0);
        takeMarked(inbox, taken);
        if ((await unconfirmed()).length === 0) break;
      }
      expect(await unconfirmed()).toEqual([]);
      expect(taken.sort()).toEqual(want.sort());
      expect(listFiles(inbox)).toEqual([]);
    }, 120_000);
  }
});
