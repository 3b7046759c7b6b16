// A staged parcel whose final name holds another file when it is to be placed (collision `unique`)
// goes under a free name, journalled before the file is put there: the row stays `staged` with the
// new final path, its content (size, hash, staging path) as it was. Only a staged row changes its
// name: a listed one has none yet, a placed one is already under its name.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/db.js';
import { IllegalTransitionError, InboundJournal } from '../../../src/journal/inbound.js';

let dir: string;
let journal: Journal;
let inbound: InboundJournal;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-'));
  journal = Journal.open(path.join(dir, 'j.sqlite'));
  inbound = new InboundJournal(journal);
});
afterEach(async () => {
  await journal.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const staged = { stagingPath: '/s/1001-7.part', bytes: 3, sha256: 'ab'.repeat(32), finalPath: '/in/orders.edi', fileName: 'orders.edi' };

describe('markFinalPathTaken', () => {
  it('gives a staged row another final path and keeps the rest of it', async () => {
    await inbound.recordListed(1001, { parcelId: 7, fileName: 'orders.edi' });
    await inbound.markStaged(1001, 7, staged);
    await inbound.markFinalPathTaken(1001, 7, '/in/orders.edi', '/in/orders.7.edi');
    expect(await inbound.get(1001, 7)).toMatchObject({
      state: 'staged',
      final_path: '/in/orders.7.edi',
      staging_path: staged.stagingPath,
      bytes: 3,
      sha256: staged.sha256,
    });
    expect(await inbound.reservedPaths()).toEqual(new Set(['/in/orders.7.edi']));
    const event = journal.db.prepare("SELECT from_state, to_state, detail FROM events WHERE item = '7' ORDER BY id DESC LIMIT 1").get();
    expect(event).toEqual({
      from_state: 'staged',
      to_state: 'staged',
      detail: JSON.stringify({ taken: '/in/orders.edi', finalPath: '/in/orders.7.edi' }),
    });
  });

  it('refuses a row that is not staged', async () => {
    await inbound.recordListed(1001, { parcelId: 7, fileName: 'orders.edi' });
    await expect(inbound.markFinalPathTaken(1001, 7, '/in/orders.edi', '/in/orders.7.edi')).rejects.toBeInstanceOf(IllegalTransitionError);
    await inbound.markStaged(1001, 7, staged);
    await inbound.markPlaced(1001, 7);
    await expect(inbound.markFinalPathTaken(1001, 7, '/in/orders.edi', '/in/orders.7.edi')).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(await inbound.get(1001, 7)).toMatchObject({ state: 'placed', final_path: '/in/orders.edi' });
  });
});
