/**
 * What a config or seed file error says: zod's issues turned into plain language that names the
 * key, the value given and what would be accepted ("did you mean baseUrl?", "expected true or
 * false, got …"), instead of zod's generic "Invalid input" or "received NaN".
 */
import type { z } from 'zod';
import { nearest, nodeAt, type KeyNode } from './key-tree.js';

/** Values of these keys are never repeated in a message: they may be secrets. */
const SECRET_KEY = /(key|password|secret|token|url)$/i;

const BOOLEAN_WORDS = 'true or false (also yes/no, on/off, 1/0)';

function shown(value: unknown): string {
  const text =
    typeof value === 'string'
      ? JSON.stringify(value)
      : Array.isArray(value)
        ? 'a list'
        : value === null
          ? 'nothing'
          : typeof value === 'object'
            ? 'a section'
            : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The value at `path` in the raw config. */
export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>(
    (node, seg) => (node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[seg] : undefined),
    raw,
  );
}

type Issue = z.core.$ZodIssue;

/** The alternatives a union accepts, as words: `auto, true or false`. */
function unionWords(issue: Extract<Issue, { code: 'invalid_union' }>): string | undefined {
  const words: string[] = [];
  let booleans = false;
  const visit = (issues: readonly Issue[]): void => {
    for (const i of issues) {
      if (i.code === 'invalid_union') i.errors.forEach(visit);
      else if (i.code === 'invalid_value' && (i as { expected?: string }).expected === 'stringbool') booleans = true;
      else if (i.code === 'invalid_value') words.push(...i.values.map(String));
      else if (i.code === 'invalid_type' && i.expected === 'boolean') booleans = true;
    }
  };
  issue.errors.forEach(visit);
  if (booleans) return [...words, BOOLEAN_WORDS].join(', ');
  return undefined;
}

/** One issue in plain words (without the key, which the caller puts first); `keys`: the schema's key tree. */
export function describeIssue(issue: Issue, raw: unknown, keys: KeyNode): string {
  const value = valueAt(raw, issue.path);
  const key = issue.path.at(-1);
  const got = typeof key === 'string' && SECRET_KEY.test(key) ? '' : `, got ${shown(value)}`;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const node = nodeAt(issue.path, keys);
      const known = node?.kind === 'section' ? [...node.keys.keys()] : [];
      return issue.keys
        .map((k) => {
          const near = nearest(k, known);
          return `Unrecognized key ${k}${near ? ` — did you mean ${near}?` : ` (known here: ${known.join(', ')})`}`;
        })
        .join('; ');
    }
    case 'invalid_type':
      if (value === undefined) return 'missing: this key is required';
      if (issue.expected === 'number' || issue.expected === 'int') return `expected a whole number${got}`;
      return `expected ${issue.expected === 'object' ? 'a section' : issue.expected === 'array' ? 'a list' : `a ${issue.expected}`}${got}`;
    case 'invalid_union': {
      if (value === undefined) return 'missing: this key is required';
      const words = unionWords(issue);
      if (words) return `expected ${words}${got}`;
      const own = issue.errors.flat().find((i) => !/^Invalid (input|option)/.test(i.message));
      return `${own?.message ?? 'not an accepted value'}${got}`;
    }
    case 'invalid_key':
      // The key's own rule says what a key must be; zod's outer message only says that it is not one.
      return issue.issues.map((i) => i.message).join('; ') || issue.message;
    case 'invalid_value':
      return `expected one of ${issue.values.map(String).join(', ')}${got}`;
    case 'too_small':
    case 'too_big': {
      if (!/^Too (small|big)/.test(issue.message)) return issue.message;
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'string')
        return issue.code === 'too_small' && Number(bound) === 1 ? 'must not be empty' : `at most ${bound} characters`;
      if (issue.origin === 'array') return `${issue.code === 'too_small' ? 'at least' : 'at most'} ${bound} entries`;
      return `expected ${issue.code === 'too_small' ? 'at least' : 'at most'} ${bound}${got}`;
    }
    default:
      return issue.message;
  }
}
