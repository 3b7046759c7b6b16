// A race won every time: a hook that runs right before gridsync gives a file a new name — a rename,
// or the link that places an inbound parcel (src/inbound/placement.ts) — whichever way the call is
// made: fs.promises (thread pool) or the fs.*Sync call (inline on a local disk, see
// src/files/calls.ts). Each hook must have run by the end of its test (`expectHooksFired`): a race
// that never happened proves nothing.
import fs from 'node:fs';
import path from 'node:path';
import { expect, vi } from 'vitest';

const armed: { what: string; fired: boolean }[] = [];

/** Runs `hook(from)` once, just before the first rename or link whose source satisfies `match` (`from` as a path of the folder itself). */
export function beforeRename(what: string, match: (from: string) => boolean, hook: (from: string) => void): void {
  const entry = { what, fired: false };
  armed.push(entry);
  const before = (from: fs.PathLike): void => {
    if (entry.fired || !match(String(from))) return;
    entry.fired = true;
    hook(realEntry(String(from)));
  };
  const rename = fs.promises.rename.bind(fs.promises);
  const renameSync = fs.renameSync.bind(fs);
  const link = fs.promises.link.bind(fs.promises);
  const linkSync = fs.linkSync.bind(fs);
  vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
    before(from);
    return rename(from, to);
  });
  vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
    before(from);
    renameSync(from, to);
  });
  vi.spyOn(fs.promises, 'link').mockImplementation(async (from, to) => {
    before(from);
    return link(from, to);
  });
  vi.spyOn(fs, 'linkSync').mockImplementation((from, to) => {
    before(from);
    linkSync(from, to);
  });
}

/** The path a hook is given: a descriptor path (`/proc/self/fd/N/name`) means nothing to a child process. */
function realEntry(from: string): string {
  return from.startsWith('/proc/self/fd/') ? path.join(fs.readlinkSync(path.dirname(from)), path.basename(from)) : from;
}

/**
 * A matcher for the entry `name` of the folder `dir`, whichever way its path is written: the
 * folder's own path, or the descriptor path of the folder held open (`/proc/self/fd/N/name`).
 */
export function entryOf(dir: string, name: string): (from: string) => boolean {
  return (from) => path.basename(from) === name && fs.realpathSync(path.dirname(from)) === fs.realpathSync(dir);
}

/** Fails unless every hook armed since the last call has run; disarms them. */
export function expectHooksFired(): void {
  const missed = armed.filter((a) => !a.fired).map((a) => a.what);
  armed.length = 0;
  expect(missed, 'rename hooks that never ran (the race was not reproduced)').toEqual([]);
}
