/**
 * Decisions about outbox files, as pure functions: which names to ignore, when a file is ready,
 * and whether its content is a complete interchange (the classic ERP failure is a truncated
 * export: an X12 ISA without its IEA, an EDIFACT UNB without its UNZ).
 */

/** `*.tmp`, `~*`, `.*` … → a matcher of file names (`*` any run, `?` one character). */
export function ignoreMatcher(patterns: readonly string[]): (name: string) => boolean {
  const res = patterns.map((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's'));
  return (name) => res.some((re) => re.test(name));
}

export interface Observation {
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Readiness by stability: a file is ready once its size and mtime have not changed for `stableMs`,
 * measured from when this exact (size, mtime) was first observed. Returns 0 when ready, else the
 * milliseconds to wait before looking again.
 */
export class StabilityTracker {
  private readonly seen = new Map<string, { size: number; mtimeMs: number; since: number }>();

  constructor(private readonly stableMs: number) {}

  observe(name: string, o: Observation, now: number): number {
    const prev = this.seen.get(name);
    if (!prev || prev.size !== o.size || prev.mtimeMs !== o.mtimeMs) {
      this.seen.set(name, { size: o.size, mtimeMs: o.mtimeMs, since: now });
      return this.stableMs <= 0 ? 0 : this.stableMs;
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

export type EnvelopeVerdict = { readonly ok: true; readonly standard: 'X12' | 'EDIFACT' } | { readonly ok: false; readonly reason: string };

/**
 * A complete interchange: X12 — every `ISA` is 106 characters with consistent separators and is
 * closed by an `IEA` carrying the same control number; EDIFACT — `[UNA]UNB … UNZ` with the same
 * control reference. Leading whitespace and a trailing newline are tolerated.
 */
export function validateEnvelope(text: string): EnvelopeVerdict {
  const t = text.replace(/^\s+/, '');
  if (t.startsWith('ISA')) return validateX12(t);
  if (t.startsWith('UNA') || t.startsWith('UNB')) return validateEdifact(t);
  return { ok: false, reason: 'not an X12 (ISA) or EDIFACT (UNA/UNB) interchange' };
}

function validateX12(t: string): EnvelopeVerdict {
  if (t.length < 106) return { ok: false, reason: `ISA segment truncated: ${t.length} characters, 106 needed` };
  const el = t[3] as string;
  const seg = t[105] as string;
  const sub = t[104] as string;
  if (/[A-Za-z0-9 ]/.test(el) || /[A-Za-z0-9 ]/.test(seg) || el === seg || sub === el || sub === seg) {
    return { ok: false, reason: 'ISA separators are inconsistent (element, sub-element, segment terminator)' };
  }
  const segments = t.split(seg).map((s) => s.replace(/^[\r\n]+/, '')).filter((s) => s.trim() !== '');
  let open: string | null = null;
  let count = 0;
  for (const s of segments) {
    const f = s.split(el);
    if (f[0] === 'ISA') {
      if (open !== null) return { ok: false, reason: `ISA ${open} is not closed by an IEA before the next ISA` };
      if (s.length !== 105) return { ok: false, reason: `ISA segment is ${s.length + 1} characters, 106 expected` };
      if (f.length !== 17) return { ok: false, reason: `ISA has ${f.length - 1} elements, 16 expected` };
      open = (f[13] ?? '').trim();
      count++;
    } else if (f[0] === 'IEA') {
      if (open === null) return { ok: false, reason: 'IEA without an ISA' };
      if ((f[2] ?? '').trim() !== open) return { ok: false, reason: `IEA control number ${(f[2] ?? '').trim()} does not match ISA ${open}` };
      open = null;
    } else if (open === null) {
      return { ok: false, reason: `segment ${f[0] ?? ''} outside an interchange` };
    }
  }
  if (open !== null) return { ok: false, reason: `ISA ${open} is not closed by an IEA: truncated interchange` };
  return count > 0 ? { ok: true, standard: 'X12' } : { ok: false, reason: 'no ISA segment' };
}

function validateEdifact(t: string): EnvelopeVerdict {
  let el = '+';
  let rel = '?';
  let seg = "'";
  let body = t;
  if (t.startsWith('UNA')) {
    if (t.length < 9) return { ok: false, reason: 'UNA segment truncated' };
    el = t[4] as string;
    rel = t[6] as string;
    seg = t[8] as string;
    body = t.slice(9);
  }
  const segments: string[] = [];
  let cur = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === rel && i + 1 < body.length) {
      cur += c + (body[i + 1] as string);
      i++;
    } else if (c === seg) {
      segments.push(cur.replace(/^[\r\n]+/, ''));
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '') return { ok: false, reason: 'the last segment is not terminated: truncated interchange' };
  let open: string | null = null;
  let count = 0;
  for (const s of segments) {
    const f = s.split(el);
    if (f[0] === 'UNB') {
      if (open !== null) return { ok: false, reason: `UNB ${open} is not closed by a UNZ before the next UNB` };
      open = f[5] ?? '';
      count++;
    } else if (f[0] === 'UNZ') {
      if (open === null) return { ok: false, reason: 'UNZ without a UNB' };
      if ((f[2] ?? '') !== open) return { ok: false, reason: `UNZ control reference ${f[2] ?? ''} does not match UNB ${open}` };
      open = null;
    } else if (open === null && s.trim() !== '') {
      return { ok: false, reason: `segment ${f[0] ?? ''} outside an interchange` };
    }
  }
  if (open !== null) return { ok: false, reason: `UNB ${open} is not closed by a UNZ: truncated interchange` };
  return count > 0 ? { ok: true, standard: 'EDIFACT' } : { ok: false, reason: 'no UNB segment' };
}
