/**
 * Safe local names for untrusted server-supplied file names, the naming template, and collision
 * handling. Pure functions: the pipelines decide with them and do the I/O themselves.
 *
 * The rules: a name never contains a directory part, `..`, control characters, characters that
 * Windows shares reject, or a reserved device name; it is NFC-normalised (so the ERP sees one
 * spelling of "é"), at most 255 bytes with its extension kept, and never empty. A rendered path is
 * proven to stay inside its root.
 */
import path from 'node:path';
import { InternalError } from '../errors/index.js';
import { UnsafePathError } from './path-errors.js';

// 255 bytes is the filesystem limit; the rest is room for a unique tag (`.<parcelId>-<n>`) and a
// done-marker suffix, which are added to a sanitised name later (a 300-character name found this in the soak).
const MAX_NAME_BYTES = 200;
const MAX_TAGGED_NAME_BYTES = 230;
const MAX_EXT_BYTES = 32;
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
// Control characters, and what Windows/SMB reject, so that a share mounted by the ERP can hold the name.
const UNSAFE = /[\u0000-\u001f\u007f<>:"|?*]/g;
// Bidirectional controls and invisible characters: `invoice\u202Efdp.exe` shows as `invoiceexe.pdf`
// in a file manager. Removed, not replaced: they carry no meaning of their own in a name.
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

// Half of a surrogate pair (a UTF-16 service cut a name between the two): no file name can hold it,
// and the filesystem call writes U+FFFD in its place. Written so here, names that differ only there
// are one name before either is placed, not only on disk.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Truncates a string to at most `max` UTF-8 bytes without splitting a character. */
function truncateBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = '';
  for (const ch of s) {
    if (Buffer.byteLength(out + ch) > max) break;
    out += ch;
  }
  return out;
}

/** One safe path segment from an untrusted name; `fallback` when nothing usable remains. */
export function sanitizeFileName(raw: string | null | undefined, fallback: string): string {
  let name = (raw ?? '').replace(LONE_SURROGATE, '\ufffd').normalize('NFC');
  name = name.split(/[/\\]/).pop() ?? '';
  name = name.replace(INVISIBLE, '').replace(UNSAFE, '_');
  name = name.replace(/^[\s.]+/, (m) => (m.trim() === '' ? '' : '_')).replace(/[\s.]+$/, '');
  if (name === '' || name === '.' || name === '..') return fallback;
  if (RESERVED.test(name)) name = `_${name}`;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    const ext = path.extname(name);
    const keepExt = Buffer.byteLength(ext) <= MAX_EXT_BYTES ? ext : '';
    name = truncateBytes(name.slice(0, name.length - keepExt.length), MAX_NAME_BYTES - Buffer.byteLength(keepExt)) + keepExt;
    // The cut may end on a space or dot, which Windows shares strip (two names would then collide).
    name = name.replace(/[\s.]+$/, '');
    if (name === '') return fallback;
  }
  return name;
}

export type TemplateVars = Readonly<Record<string, string | number | null | undefined>>;

/**
 * Renders a naming template such as `{fileName}` or `{gridIdFrom}/{date}/{fileName}`. Every
 * segment is sanitised on its own, so a variable can never add a directory level or climb out.
 * Unknown variables are an error (a typo in the config must not silently produce odd names).
 */
export function renderTemplate(template: string, vars: TemplateVars, fallback: string): string {
  const segments = template.split('/').map((seg) =>
    seg.replace(/\{(\w+)\}/g, (_m, key: string) => {
      if (!(key in vars)) throw new InternalError(`unknown naming variable {${key}} in template ${template}`);
      const v = vars[key];
      return v === null || v === undefined ? '' : String(v);
    }),
  );
  const safe = segments.map((s, i) => sanitizeFileName(s, i === segments.length - 1 ? fallback : '_')).filter((s) => s !== '');
  return safe.join('/');
}

/**
 * The variables an inbox name template may use, for config validation. `partner` is the sender's
 * name (configured, else the service's record, else its grid id), one sanitised segment like the rest.
 */
export const TEMPLATE_VARIABLES = ['fileName', 'parcelId', 'gridIdFrom', 'gridIdTo', 'partner', 'mailboxId', 'date'] as const;

/** The variables a sentDir template may use: an outbound file has no sender record to name. */
export const SENT_TEMPLATE_VARIABLES = ['fileName', 'parcelId', 'mailboxId', 'date'] as const;

/** Resolves `rel` under `root` and proves the result stays inside it. */
export function resolveInside(root: string, rel: string): string {
  const base = path.resolve(root);
  const full = path.resolve(base, rel);
  const back = path.relative(base, full);
  if (back === '' || back.startsWith('..') || path.isAbsolute(back)) throw new UnsafePathError(`refusing a path outside ${base}: ${rel}`);
  return full;
}

/** `invoice.x12` → `invoice.<tag>.x12`: the unique variant of a name (collision policy `unique`). */
export function uniqueVariant(name: string, tag: string): string {
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  return truncateBytes(stem, MAX_TAGGED_NAME_BYTES - Buffer.byteLength(`.${tag}${ext}`)) + `.${tag}${ext}`;
}

/**
 * `name`, or `name_` when it ends as a done marker does (`orders.edi.done`): an ERP that waits for
 * markers would take such a parcel for the marker of another file and remove it with that file.
 * The character added is never the suffix's last, so the result never ends with the suffix.
 */
export function unlikeMarker(name: string, markerSuffix: string): string {
  return name.endsWith(markerSuffix) ? name + (markerSuffix.endsWith('_') ? '-' : '_') : name;
}

/**
 * The name a claimed file has in processing/ (and its snapshot, `.snap` added): unique by journal
 * id, and short enough for any original name — a 255-byte outbox name plus the id would not fit.
 */
export function processingName(id: number, fileName: string): string {
  const prefix = `${id}-`;
  const safe = fileName.replace(/[/\u0000]/g, '_');
  return prefix + truncateBytes(safe, MAX_NAME_BYTES - Buffer.byteLength(prefix));
}

/**
 * A path as journal text. A name that is not valid UTF-8 cannot round-trip through a JS string,
 * so such a path is kept as `hex:` + its bytes (journalled paths are otherwise absolute).
 */
export function pathToText(p: Buffer): string {
  const s = p.toString('utf8');
  return Buffer.from(s, 'utf8').equals(p) ? s : `hex:${p.toString('hex')}`;
}

/** The path `pathToText` journalled: a string, or the exact bytes of a non-UTF-8 one. */
export function pathFromText(s: string): string | Buffer {
  return s.startsWith('hex:') ? Buffer.from(s.slice(4), 'hex') : s;
}

/** True when a journalled path is not valid UTF-8 (see pathToText). */
export const isByteOnlyPath = (s: string): boolean => s.startsWith('hex:');
