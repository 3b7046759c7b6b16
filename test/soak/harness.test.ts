// The soak harness itself: when it runs the daemon as nobody, it first proves nobody can start it.
// On the first Node 24 CI run the Node binary and the clone's copy sat in a `mktemp -d` (0700):
// every daemon start failed with EACCES and the soak only reported everything as lost.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRoot, prerequisite } from '../helpers/require-tool.js';
// @ts-expect-error plain ESM harness without type declarations (it runs outside the TS build)
import { whyUserCannotStart } from './soak.mjs';

const nobody = { uid: 65534, gid: 65534 };
const asRoot = prerequisite('root (to start a process as nobody)', isRoot, "the soak's start check as nobody is not checked");
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.skipIf(!asRoot)('the soak harness start check', () => {
  it('names the folder nobody cannot enter when the Node binary sits under a 0700 folder', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-closed-'));
    fs.chmodSync(dir, 0o700);
    const node = path.join(dir, 'node');
    fs.symlinkSync(process.execPath, node);
    const why = whyUserCannotStart(nobody, node) as string | null;
    expect(why).toContain('EACCES');
    expect(why).toContain(`not searchable by others: ${dir}`);
  });

  it('passes for the Node and the clone this suite runs (the soak needs exactly that)', () => {
    expect(whyUserCannotStart(nobody)).toBeNull();
  });
});
