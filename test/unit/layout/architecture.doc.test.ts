/**
 * docs/architecture.md draws both lifecycles and lists the crash points; this test holds the
 * drawings to the journal's transition tables and the list to the crash points in the source, so
 * the document cannot drift from the code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INBOUND_TRANSITIONS } from '../../../src/journal/inbound.js';
import { OUTBOUND_TRANSITIONS } from '../../../src/journal/outbound.js';

const root = path.resolve(import.meta.dirname, '../../..');
const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

function section(title: string): string {
  const start = doc.indexOf(`## ${title}`);
  expect(start, `section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** `a --> b` edges of the section's mermaid state diagram, as "a→b". */
function drawnEdges(title: string): string[] {
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(section(title))?.[1] ?? '';
  return [...diagram.matchAll(/^\s*(\w+)\s*-->\s*(\w+)/gm)].map((m) => `${m[1]}→${m[2]}`).sort();
}

function tableEdges(table: Readonly<Record<string, readonly string[]>>): string[] {
  return Object.entries(table)
    .flatMap(([to, froms]) => froms.map((from) => `${from}→${to}`))
    .sort();
}

function sourceCrashPoints(prefix: string): string[] {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts'))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/crashPoint\('([\w.-]+)'/g)) names.add(m[1] as string);
    }
  };
  walk(path.join(root, 'src'));
  return [...names].filter((n) => n.startsWith(prefix)).sort();
}

function documentedCrashPoints(title: string): string[] {
  return [...section(title).matchAll(/^\| `([\w.-]+)` \|/gm)].map((m) => m[1] as string).sort();
}

describe('docs/architecture.md matches the code', () => {
  it('the inbound diagram has exactly the legal inbound transitions', () => {
    expect(drawnEdges('Inbound lifecycle')).toEqual(tableEdges(INBOUND_TRANSITIONS));
  });

  it('the outbound diagram has exactly the legal outbound transitions', () => {
    // `claiming` has no predecessor in the table: it is where a row starts.
    expect(drawnEdges('Outbound lifecycle')).toEqual(tableEdges(OUTBOUND_TRANSITIONS));
  });

  it('every crash point in the source is documented, and only those', () => {
    expect(documentedCrashPoints('Inbound lifecycle')).toEqual(sourceCrashPoints('in.'));
    expect(documentedCrashPoints('Outbound lifecycle')).toEqual(sourceCrashPoints('out.'));
  });
});
