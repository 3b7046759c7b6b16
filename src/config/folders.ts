/**
 * Folder layout rules: every folder gridsync reads or writes has one role. Two roles on one folder
 * (inbox = outbox) or one inside another (sentDir inside the outbox) make the daemon feed on its
 * own output — received files claimed as outbound, error files re-claimed for ever — so the config
 * is refused, naming both keys. Paths are compared after resolving symlinks of the part that
 * exists, so an alias through a link counts as the same folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './schema.js';

export interface FolderRole {
  /** The config key, e.g. `mailboxes[0].outbox.sentDir`. */
  readonly key: string;
  readonly dir: string;
}

/** Folders of the config with their keys (absolute paths expected). */
export function folderRoles(config: Config): FolderRole[] {
  const roles: FolderRole[] = [{ key: 'stateDir', dir: config.stateDir }];
  config.mailboxes.forEach((m, i) => {
    const at = `mailboxes[${i}]`;
    if (m.inbox) {
      roles.push({ key: `${at}.inbox.dir`, dir: m.inbox.dir });
      if (m.inbox.stagingDir) roles.push({ key: `${at}.inbox.stagingDir`, dir: m.inbox.stagingDir });
    }
    if (m.outbox) {
      roles.push({ key: `${at}.outbox.dir`, dir: m.outbox.dir });
      roles.push({ key: `${at}.outbox.errorDir`, dir: m.outbox.errorDir });
      if (m.outbox.sentDir) roles.push({ key: `${at}.outbox.sentDir`, dir: m.outbox.sentDir });
      if (m.outbox.processingDir) roles.push({ key: `${at}.outbox.processingDir`, dir: m.outbox.processingDir });
    }
  });
  return roles;
}

/**
 * A mailbox's working folders: configured, else in stateDir — except with a shared (PostgreSQL)
 * journal, where the next lease holder must find what this instance staged or claimed: then beside
 * the inbox or outbox, on its share (`.gridsync-staging`, `.gridsync-processing`), never in a
 * host's own stateDir.
 */
export function workDirOf(
  config: Pick<Config, 'stateDir' | 'journal'>,
  kind: 'staging' | 'processing',
  folder: string,
  configured?: string,
): string {
  if (configured) return configured;
  return config.journal.url ? path.join(path.dirname(path.resolve(folder)), `.gridsync-${kind}`) : path.join(config.stateDir, kind);
}

/** The path with the symlinks of its longest existing prefix resolved. */
export function canonicalPath(p: string): string {
  let existing = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return path.resolve(p);
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

const inside = (child: string, parent: string): boolean => {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
};

/** A staging or processing folder may sit inside stateDir: that is where their defaults live. */
const mayNestInState = (r: FolderRole): boolean => /\.(stagingDir|processingDir)$/.test(r.key);

export interface FolderConflict {
  readonly a: FolderRole;
  readonly b: FolderRole;
  readonly relation: 'same' | 'inside';
  readonly message: string;
}

/** The first pair of folders that share or nest, or undefined. */
export function findFolderConflict(roles: readonly FolderRole[]): FolderConflict | undefined {
  const canon = roles.map((r) => ({ ...r, real: canonicalPath(r.dir) }));
  for (let i = 0; i < canon.length; i++) {
    for (let j = 0; j < canon.length; j++) {
      if (i === j) continue;
      const a = canon[i] as (typeof canon)[number];
      const b = canon[j] as (typeof canon)[number];
      if (j > i && a.real === b.real) {
        return {
          a,
          b,
          relation: 'same',
          message: `${a.key} and ${b.key} are the same folder (${a.real}); each folder needs its own role, or gridsync would pick up its own files`,
        };
      }
      if (inside(a.real, b.real) && !(b.key === 'stateDir' && mayNestInState(a))) {
        return {
          a,
          b,
          relation: 'inside',
          message: `${a.key} (${a.real}) is inside ${b.key} (${b.real}); keep the folders side by side, not nested, or gridsync would pick up its own files`,
        };
      }
    }
  }
  return undefined;
}
