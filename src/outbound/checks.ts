/**
 * Decisions about outbox files: which names to ignore, when a file is ready, and whether its
 * content is a complete interchange (the classic ERP failure is a truncated export: an X12 ISA
 * without its IEA, an EDIFACT UNB without its UNZ).
 */
import fs from 'node:fs';
import { checkEnvelope, checkEnvelopeStream, type CheckOptions, type EnvelopeVerdict } from '../edi/index.js';

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
 * The envelope check (see src/edi): every interchange complete, with matching non-empty control
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
