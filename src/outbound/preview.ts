/**
 * What a cycle would do with each file in an outbox now (`gridsync once --dry-run`), decided by the
 * very checks of the real claim and send — only reading: nothing is journalled, moved or sent.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { FileCalls, openRegularNoFollow, pathToText } from '../files/index.js';
import type { OutboundJournal } from '../journal/index.js';
import { awaitsMarker, outboxIgnore, refusalOf, type SentBefore } from './checks.js';
import { outboxEntryPath } from './scanner.js';
import { unsendable } from './snapshot.js';
import type { OutboxConfig } from './types.js';

export interface OutboxVerdict {
  readonly file: string;
  /** The bytes that would be sent; null when the entry is not read (not ready, no regular file). */
  readonly bytes: number | null;
  /** send: would be uploaded; refuse: would go to errorDir; wait: not ready yet, left in the outbox. */
  readonly verdict: 'send' | 'refuse' | 'wait';
  readonly reason?: string;
  /** The code the real run's error report and log line would carry. */
  readonly code?: string;
}

/**
 * The duplicate check compares with rows older than the file's own; a file not claimed yet would
 * get a newer id than every row there is.
 */
const NOT_YET_CLAIMED = Number.MAX_SAFE_INTEGER;
const READ_CHUNK = 256 * 1024;
/** Where the open descriptor can be read again by path (Linux): the content checked is the very file opened. */
const fdPath = (fd: number, fallback: string): string => (fs.existsSync('/proc/self/fd') ? `/proc/self/fd/${fd}` : fallback);

/**
 * Every entry of the outbox a scan would take up, with its verdict, sorted by name. Folders and
 * ignored names are passed over as the scan does. `journal` undefined: no journal yet, so nothing
 * was sent before.
 *
 * Entries are judged in the order the scan claims them (the folder's order): a file that would
 * be sent counts, for the duplicate check of those after it, as a row claimed before theirs —
 * of two files with the same content the real run sends the first and refuses the second.
 */
export async function previewOutbox(cfg: OutboxConfig, journal: OutboundJournal | undefined, now: number): Promise<OutboxVerdict[]> {
  let entries: fs.Dirent<Buffer>[];
  try {
    entries = await fs.promises.readdir(cfg.dir, { withFileTypes: true, encoding: 'buffer' });
  } catch {
    return []; // no outbox yet: nothing to send
  }
  const ignored = outboxIgnore(cfg);
  const names = new Set(entries.map((e) => e.name.toString('utf8')));
  const claimedBefore = new Map<string, string>();
  const sentBefore: SentBefore = {
    duplicateOf: async (id, sha256, sinceMs) => {
      const earlier = claimedBefore.get(sha256);
      return earlier !== undefined ? { file_name: earlier, parcel_id: null } : journal?.duplicateOf(id, sha256, sinceMs);
    },
  };
  const verdicts: OutboxVerdict[] = [];
  for (const e of entries) {
    const name = e.name.toString('utf8');
    if (ignored(name) || e.isDirectory()) continue;
    const judged = await previewEntry(cfg, names, name, outboxEntryPath(cfg.dir, e.name), sentBefore, now);
    if (!judged) continue;
    if (judged.outcome.verdict === 'send' && judged.sha256 !== undefined && !claimedBefore.has(judged.sha256))
      claimedBefore.set(judged.sha256, name);
    verdicts.push(judged.outcome);
  }
  return verdicts.sort((a, b) => a.file.localeCompare(b.file));
}

async function previewEntry(
  cfg: OutboxConfig,
  names: ReadonlySet<string>,
  file: string,
  source: string | Buffer,
  journal: SentBefore,
  now: number,
): Promise<{ outcome: OutboxVerdict; sha256?: string } | undefined> {
  const judged = (outcome: OutboxVerdict, sha256?: string) => ({ outcome, ...(sha256 ? { sha256 } : {}) });
  const shown = typeof source === 'string' ? source : pathToText(source);
  const st = await fs.promises.lstat(source).catch(() => undefined);
  if (!st) return undefined; // gone since the listing
  // A link, FIFO or device is claimed at once, whatever the readiness: only a regular file waits.
  if (st.isFile() && awaitsMarker(cfg, names, file))
    return judged({ file, bytes: null, verdict: 'wait', reason: `waits for its marker ${file}${cfg.markerSuffix}` });
  let opened: { fd: number };
  try {
    opened = await openRegularNoFollow(source, shown);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // gone since the listing
    const refused = unsendable(err);
    if (!refused) throw err;
    return judged({ file, bytes: null, verdict: 'refuse', reason: refused.reason, code: refused.errorCode });
  }
  try {
    const { bytes, sha256 } = await hashOpen(opened.fd);
    const refusal = await refusalOf(
      { id: NOT_YET_CLAIMED, source_path: shown, bytes, sha256, processing_path: fdPath(opened.fd, shown) },
      cfg,
      journal,
      now,
    );
    return judged(
      refusal ? { file, bytes, verdict: 'refuse', reason: refusal.reason, code: refusal.errorCode } : { file, bytes, verdict: 'send' },
      sha256,
    );
  } finally {
    await FileCalls.POOL.close(opened.fd);
  }
}

/** Size and SHA-256 of an open file, as the claim's snapshot would record them. */
async function hashOpen(fd: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(READ_CHUNK);
  let bytes = 0;
  for (;;) {
    const bytesRead = await FileCalls.POOL.read(fd, buf, 0, buf.length, bytes);
    if (bytesRead === 0) break;
    hash.update(buf.subarray(0, bytesRead));
    bytes += bytesRead;
  }
  return { bytes, sha256: hash.digest('hex') };
}
