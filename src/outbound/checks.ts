/**
 * Decisions about outbox files: which names to ignore, when a file is ready, whether its content
 * is a complete interchange (the classic ERP failure is a truncated export: an X12 ISA without its
 * IEA, an EDIFACT UNB without its UNZ), and the checks before sending. The send and
 * `once --dry-run` both decide here.
 */
import fs from 'node:fs';
import { checkEnvelope, checkEnvelopeStream, type CheckOptions, type EnvelopeVerdict } from '@gridsync/protocol/edi';
import { DEFAULTS } from '../config/defaults.js';
import { GridsyncError, type ErrorCode } from '../errors/index.js';
import { isByteOnlyPath, pathFromText } from '../files/index.js';
import type { ErrorDecision, OutboundRow } from '../journal/index.js';
import type { OutboxConfig } from './types.js';

export type { EnvelopeVerdict };
export type EnvelopeCheckOptions = CheckOptions;

/** Read size of the streamed envelope check. */
const READ_CHUNK = 256 * 1024;

/** `*.tmp`, `~*`, `.*` … → a matcher of file names (`*` any run, `?` one character). */
export function ignoreMatcher(patterns: readonly string[]): (name: string) => boolean {
  const res = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
        's',
      ),
  );
  return (name) => res.some((re) => re.test(name));
}

/** The names a scan of the outbox passes over: the configured patterns, readiness markers, error reports. */
export function outboxIgnore(cfg: Pick<OutboxConfig, 'ignore' | 'markerSuffix'>): (name: string) => boolean {
  return ignoreMatcher([...cfg.ignore, `*${cfg.markerSuffix}`, '*.error.json']);
}

/** With `readiness: marker`, a file waits until `<name><markerSuffix>` is among the folder's names. */
export function awaitsMarker(cfg: Pick<OutboxConfig, 'readiness' | 'markerSuffix'>, names: ReadonlySet<string>, name: string): boolean {
  return cfg.readiness === 'marker' && !names.has(name + cfg.markerSuffix);
}

export interface Observation {
  readonly size: number;
  readonly mtimeMs: number;
  /**
   * Wall-clock milliseconds since the file last changed (its newer of mtime and ctime: a writer can
   * set mtime back, as `cp -p` does, but every write moves ctime).
   */
  readonly unchangedForMs: number;
}

/**
 * Readiness by stability: a file is ready once its size and mtime have not changed for `stableMs`,
 * measured from when this exact (size, mtime) was first observed — or at once when, at its first
 * observation, the file has not changed for `stableMs` already (a nightly job need not wait on
 * files that sat in the outbox for hours). Returns 0 when ready, else the milliseconds to wait
 * before looking again.
 */
export class StabilityTracker {
  private readonly seen = new Map<string, { size: number; mtimeMs: number; since: number }>();

  constructor(private readonly stableMs: number) {}

  observe(name: string, o: Observation, now: number): number {
    const prev = this.seen.get(name);
    if (!prev || prev.size !== o.size || prev.mtimeMs !== o.mtimeMs) {
      const settled = !prev && o.unchangedForMs >= this.stableMs;
      this.seen.set(name, { size: o.size, mtimeMs: o.mtimeMs, since: now });
      return this.stableMs <= 0 || settled ? 0 : this.stableMs;
    }
    return Math.max(0, prev.since + this.stableMs - now);
  }

  forget(name: string): void {
    this.seen.delete(name);
  }

  /** Drops names no longer present (a rescan's view is authoritative). */
  retainOnly(names: ReadonlySet<string>): void {
    for (const n of this.seen.keys()) if (!names.has(n)) this.seen.delete(n);
  }
}

/**
 * The envelope check (see @gridsync/protocol/edi): every interchange complete, with matching non-empty control
 * references; with `counts`, also every group and set trailer present with the right counts and
 * references, and IEA01/UNZ01 equal to the groups or messages read.
 */
export function validateEnvelope(content: string | Buffer, opts: EnvelopeCheckOptions): EnvelopeVerdict {
  return checkEnvelope(content, opts);
}

/** The same check streamed over a file: one pass, one chunk in memory, stops at the first problem. */
export async function validateEnvelopeFile(file: string, opts: EnvelopeCheckOptions): Promise<EnvelopeVerdict> {
  return checkEnvelopeStream(fs.createReadStream(file, { highWaterMark: READ_CHUNK }), opts);
}

/**
 * The most bytes an outbox file may have: `maxBytes`, and never more than the service's 32-bit
 * size fields carry (docs/wire.md), which no file beyond could be sent with anyway.
 */
export function sizeLimit(cfg: Pick<OutboxConfig, 'maxBytes'>): number {
  return Math.min(cfg.maxBytes ?? Infinity, DEFAULTS.api.limits.maxParcelBytes);
}

/**
 * A claimed file larger than `sizeLimit`, found before or while it is copied into its snapshot: a
 * sparse file's apparent size, or a writer that keeps growing the file through a descriptor, must
 * never be written out into processing/ (a full disk, for the outbox and often the journal).
 */
export class FileTooLargeError extends GridsyncError {
  readonly code = 'OUTBOUND_TOO_LARGE';
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** Found while copying: the file has at least `bytes`. */
    growing = false,
  ) {
    super(`too large: ${growing ? 'at least ' : ''}${bytes} bytes, the limit is ${limit}`);
  }
}

/** Why a file is refused before sending, with the stable code its error report and log line carry. */
export type Refusal = ErrorDecision & { readonly errorCode: ErrorCode };

/** Where the duplicate check finds an earlier send of the same content (the journal's `duplicateOf`). */
export interface SentBefore {
  duplicateOf(id: number, sha256: string, sinceMs: number): Promise<Pick<OutboundRow, 'file_name' | 'parcel_id'> | undefined>;
}

/** What the checks before sending read of a claimed file (its journal row, or the same facts of a file not yet claimed). */
export type CheckedFile = Pick<OutboundRow, 'id' | 'source_path' | 'bytes' | 'sha256' | 'processing_path'>;

/**
 * The checks before sending: a name the service cannot take, empty, too large, an incomplete
 * interchange, content sent before (within `duplicateWindowMs`, by a row older than `file.id`).
 * Reads only: the content at `processing_path` and the journal.
 */
export async function refusalOf(file: CheckedFile, cfg: OutboxConfig, journal: SentBefore, now: number): Promise<Refusal | undefined> {
  if (isByteOnlyPath(file.source_path)) {
    const raw = (pathFromText(file.source_path) as Buffer).subarray(Buffer.byteLength(cfg.dir.endsWith('/') ? cfg.dir : `${cfg.dir}/`));
    return {
      reason: `the file name is not valid UTF-8 (bytes ${raw.toString('hex')}); the service takes UTF-8 names only: rename the file and requeue it`,
      errorCode: 'OUTBOUND_NAME_NOT_UTF8',
    };
  }
  const bytes = file.bytes ?? 0;
  if (bytes === 0) return { reason: 'empty file', errorCode: 'OUTBOUND_EMPTY_FILE' };
  if (bytes > sizeLimit(cfg)) return { reason: new FileTooLargeError(bytes, sizeLimit(cfg)).message, errorCode: 'OUTBOUND_TOO_LARGE' };
  if (cfg.validateEnvelope) {
    const verdict = await validateEnvelopeFile(file.processing_path as string, { counts: cfg.envelopeCounts });
    if (!verdict.ok) return { reason: `invalid interchange: ${verdict.reason}`, errorCode: 'OUTBOUND_INVALID_INTERCHANGE' };
  }
  if (cfg.duplicates === 'reject' && file.sha256) {
    const dup = await journal.duplicateOf(file.id, file.sha256, now - cfg.duplicateWindowMs);
    if (dup)
      return {
        reason: `duplicate content: the same bytes were sent as ${dup.file_name}${dup.parcel_id ? ` (parcel ${dup.parcel_id})` : ''}`,
        errorCode: 'OUTBOUND_DUPLICATE',
      };
  }
  return undefined;
}
