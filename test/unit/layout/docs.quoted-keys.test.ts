// What the docs and the units tell an operator to write or read is what the product has: every
// config key they quote (`inbox.group`, `api.timeouts.callMs`, `mailboxes[0].outbox.sentDir`) is a
// key of the config schema, and every field of an error report they quote (`.error.json` fields
// `reason`, `errorCode`) is a field gridsync writes. The units once said `inbox.gid` and the
// troubleshooting table told to read a `message` field: both fail here until the text follows.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalog } from '../../../src/api/index.js';
import { settingPaths } from '../../../src/config/keys.js';

const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8');
const pages = [
  'README.md',
  'examples/README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const units = fs.readdirSync(path.join(root, 'systemd')).map((f) => `systemd/${f}`);
const deploy = ['deploy/prometheus/alerts.yml', 'deploy/prometheus/scrape.yml'];

/** The schema's keys without list markers: `mailboxes.inbox.group`, `partners.*`. */
const keys = settingPaths().map((k) => k.replace(/\[\]/g, ''));
/** Top-level sections, plus `inbox`/`outbox` as the docs name a mailbox's keys. */
const SECTIONS = new Set([...keys.map((k) => k.split('.')[0] as string), 'inbox', 'outbox']);
/** Dotted names that are not config keys: the catalog's endpoints, and the emulator's name for its own callback deliveries. */
const NOT_KEYS = new Set([
  ...Object.entries(catalog).flatMap(([group, endpoints]) => Object.keys(endpoints).map((name) => `${group}.${name}`)),
  'callbacks.deliver',
]);

/** A dotted path names a key or a section when it is a whole run of segments of some key. */
function isConfigKey(quoted: string): boolean {
  const name = quoted.replace(/\[\d*\]/g, '').replace(/\.\*$/, '');
  return keys.some((k) => `.${k}.`.includes(`.${name}.`));
}

/** `inbox.group: edi` → `inbox.group`; only dotted names that start with a config section. */
function candidates(tokens: string[]): string[] {
  return tokens
    .map((t) => t.split(/[:= ]/)[0] as string)
    .filter((t) => /^[a-z]\w*(\[\d*\])?\.[A-Za-z*]/.test(t) && SECTIONS.has(t.split(/[.[]/)[0] as string))
    .filter((t) => !t.includes('(') && !/\.(sqlite|json|ya?ml|md|ts|js|service)$/.test(t) && !NOT_KEYS.has(t));
}

function quotedKeys(file: string): string[] {
  const text = read(file);
  // Markdown quotes keys in backticks; units and rules name them in their comments and texts.
  const tokens = file.endsWith('.md')
    ? [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string)
    : [...text.matchAll(/[A-Za-z][\w[\].*]*\.[A-Za-z*][\w[\].*]*/g)].map((m) => m[0]);
  return candidates(tokens);
}

describe('config keys quoted in docs, units and rules exist', () => {
  // contracts.md documents code, where `journal.transaction` is a method, not a key.
  const files = [...pages.filter((p) => p !== 'docs/contracts.md'), ...units, ...deploy];
  it('finds the quotes', () => expect(files.flatMap(quotedKeys).length).toBeGreaterThan(50));
  it('the check tells a wrong key from a right one', () => {
    expect(candidates(['inbox.gid', 'inbox.group: edi', 'journal.sqlite', 'parcels.download', 'api.limits.*'])).toEqual([
      'inbox.gid',
      'inbox.group',
      'api.limits.*',
    ]);
    expect(isConfigKey('inbox.gid')).toBe(false);
    expect(isConfigKey('mailboxes[0].inbox.group')).toBe(true);
    expect(isConfigKey('api.limits.*')).toBe(true);
  });
  it.each(files)('%s', (file) => {
    expect(quotedKeys(file).filter((k) => !isConfigKey(k))).toEqual([]);
  });
});

/** The fields of ErrorReport, as declared where the reports are written. */
function errorReportFields(): string[] {
  const source = read('src/outbound/disposal.ts');
  const body = /export interface ErrorReport \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
  return [...body.matchAll(/^\s*readonly (\w+)\??:/gm)].map((m) => m[1] as string);
}

/** `.error.json` … fields `a`, `b` and `c`: the quoted field names. */
function quotedReportFields(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\.error\.json`?[^|]{0,80}?\bfields?\s+((?:`\w+`(?:,?\s+and\s+|,\s+)?)+)/g))
    for (const f of (m[1] as string).matchAll(/`(\w+)`/g)) out.push(f[1] as string);
  return out;
}

describe('error-report fields quoted in docs exist', () => {
  const fields = errorReportFields();
  const quoted = pages.flatMap((p) => quotedReportFields(read(p)).map((f) => [p, f] as const));
  it('reads the fields and finds the quotes', () => {
    expect(fields).toEqual(expect.arrayContaining(['file', 'reason', 'errorCode', 'requeue']));
    expect(quoted.length).toBeGreaterThan(3);
    expect(quotedReportFields('read `NAME.error.json` (fields `errorCode`, `message`)')).toEqual(['errorCode', 'message']);
  });
  it.each(quoted)('%s: %s', (_page, field) => expect(fields).toContain(field));
});
