/**
 * Server-supplied names are untrusted. Generated hostile names (path separators, `..`, control and
 * Windows-reserved characters, device names, decomposed Unicode, names of thousands of bytes) must
 * always come out as one safe segment, and every rendered template must stay inside its root.
 * Seeded, so a failing case is reproducible from the printed seed.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderTemplate, resolveInside, sanitizeFileName, uniqueVariant } from '../../../src/files/naming.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  '/',
  '\\',
  '..',
  '.',
  ' ',
  '\u0000',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '<',
  '>',
  ':',
  '"',
  '|',
  '?',
  '*',
  'CON',
  'nul',
  'com1',
  'LPT9',
  'e\u0301',
  'é',
  '日本',
  '🚀',
  'a',
  'Z',
  '0',
  '-',
  '_',
  '.x12',
  '.edi',
  '~',
  '$',
  '%2e%2e',
  '\u202e',
  '\u200b',
];

function hostileName(next: () => number): string {
  const n = 1 + Math.floor(next() * 40);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  if (next() < 0.1) s = s.repeat(1 + Math.floor(next() * 60));
  return s;
}

const seed = Number(process.env.GRIDSYNC_TEST_SEED ?? 20261123);

describe(`sanitizeFileName on generated hostile names (seed ${seed})`, () => {
  const next = rng(seed);
  const names = Array.from({ length: 5000 }, () => hostileName(next));

  it('always yields one non-empty, NFC, length-limited segment with no unsafe character', () => {
    for (const raw of names) {
      const out = sanitizeFileName(raw, 'fallback');
      const why = JSON.stringify(raw);
      expect(out.length, why).toBeGreaterThan(0);
      expect(out, why).not.toMatch(/[/\\\u0000-\u001f\u007f<>:"|?*]/);
      expect(out === '.' || out === '..', why).toBe(false);
      expect(out, why).not.toMatch(/^[\s.]/);
      expect(out, why).not.toMatch(/[\s.]$/);
      expect(out, why).not.toMatch(/^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i);
      expect(Buffer.byteLength(out), why).toBeLessThanOrEqual(200);
      expect(out.normalize('NFC'), why).toBe(out);
      expect(out.includes('\ufffd') && !raw.includes('\ufffd'), `${why}: a character was split`).toBe(false);
    }
  });

  it('keeps a short extension when it shortens a long name', () => {
    const out = sanitizeFileName(`${'x'.repeat(500)}.x12`, 'f');
    expect(out.endsWith('.x12')).toBe(true);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(200);
  });

  it('unique variants of any sanitised name leave room for a done marker within 255 bytes', () => {
    for (const raw of names.slice(0, 1000)) {
      const v = uniqueVariant(sanitizeFileName(raw, 'f'), '9007199254740993-12');
      expect(Buffer.byteLength(`${v}.done`), JSON.stringify(raw)).toBeLessThanOrEqual(255);
    }
  });

  it('a rendered template never leaves the root, whatever the variables hold', () => {
    const root = '/srv/edi/inbox';
    for (const raw of names.slice(0, 2000)) {
      const rel = renderTemplate('{gridIdFrom}/{date}/{fileName}', { gridIdFrom: raw, date: raw.slice(0, 5), fileName: raw }, 'parcel-1');
      const full = resolveInside(root, rel);
      const back = path.relative(root, full);
      expect(back.startsWith('..') || path.isAbsolute(back), JSON.stringify(raw)).toBe(false);
      expect(rel.split('/').length).toBeLessThanOrEqual(3);
    }
  });

  it('resolveInside refuses what climbs out or is the root itself', () => {
    expect(() => resolveInside('/srv/in', '../etc/passwd')).toThrow();
    expect(() => resolveInside('/srv/in', '/etc/passwd')).toThrow();
    expect(() => resolveInside('/srv/in', 'a/../../x')).toThrow();
    expect(() => resolveInside('/srv/in', '.')).toThrow();
    expect(resolveInside('/srv/in', 'a/b.x12')).toBe('/srv/in/a/b.x12');
  });

  it('an unknown template variable is an error, never an odd name', () => {
    expect(() => renderTemplate('{filename}', { fileName: 'a' }, 'f')).toThrow(/unknown naming variable/);
  });
});
