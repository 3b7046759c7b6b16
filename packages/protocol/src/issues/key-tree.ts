/**
 * A zod schema's keys as a tree, read from the schema itself, and the names operators write them
 * by: what the daemon's config and the emulator's seed file both use to name a key in an error
 * ("did you mean …?") without a second list of keys to keep in step with the schema.
 */
import type { z } from 'zod';

export type KeyNode =
  /** A section: its keys. */
  | { readonly kind: 'section'; readonly keys: ReadonlyMap<string, KeyNode> }
  /** A list of sections (`mailboxes`): entries by index. */
  | { readonly kind: 'entries'; readonly entry: KeyNode }
  /** A mapping with keys of the operator's choice (`partners`). */
  | { readonly kind: 'map'; readonly value: KeyNode }
  /** A setting; `list` when it takes several values (`schedule.cron`, `hooks.afterSend`). */
  | { readonly kind: 'value'; readonly list: boolean };

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly shape?: Record<string, z.ZodType>;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under defaults, optionals and transforms: what the operator writes. */
function unwrap(schema: z.ZodType): z.ZodType {
  const def = defOf(schema);
  if (def.innerType) return unwrap(def.innerType);
  if (def.type === 'pipe' && def.in) return unwrap(def.in);
  return schema;
}

export function keyTree(schema: z.ZodType): KeyNode {
  const def = defOf(unwrap(schema));
  if (def.type === 'object' && def.shape) {
    return { kind: 'section', keys: new Map(Object.entries(def.shape).map(([k, v]) => [k, keyTree(v)])) };
  }
  if (def.type === 'array' && def.element) {
    const entry = keyTree(def.element);
    return entry.kind === 'value' ? { kind: 'value', list: true } : { kind: 'entries', entry };
  }
  if (def.type === 'record' && def.valueType) return { kind: 'map', value: keyTree(def.valueType) };
  return { kind: 'value', list: false };
}

/** The node at a key path (`['mailboxes', 0, 'inbox']`), or undefined when the schema has no such key. */
export function nodeAt(path: readonly PropertyKey[], node: KeyNode): KeyNode | undefined {
  let at: KeyNode | undefined = node;
  for (const seg of path) {
    if (!at) return undefined;
    if (at.kind === 'section') at = typeof seg === 'string' ? at.keys.get(seg) : undefined;
    else if (at.kind === 'entries') at = typeof seg === 'number' ? at.entry : undefined;
    else if (at.kind === 'map') at = at.value;
    else return undefined;
  }
  return at;
}

/** The key path as operators write it: `mailboxes[0].outbox.stableMs`. */
export function formatKeyPath(p: readonly PropertyKey[]): string {
  if (p.length === 0) return '(top level)';
  return p.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)), '');
}

/** Levenshtein distance, for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The candidate closest to `name` (case counts for little), if it is close enough to be a typo. */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const c of candidates) {
    const d = c.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name.toLowerCase(), c.toLowerCase());
    if (!best || d < best.d) best = { name: c, d };
  }
  return best && best.d <= Math.max(2, Math.floor(name.length / 5)) ? best.name : undefined;
}
