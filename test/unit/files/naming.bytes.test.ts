/** Names gridsync derives itself: processing names whatever the original, paths that are not UTF-8, invisible characters. */
import { describe, expect, it } from 'vitest';
import { pathFromText, pathToText, processingName, sanitizeFileName } from '../../../src/files/index.js';

describe('processingName', () => {
  it('stays within 200 bytes (255 with room for .snap) for any original, keeps the id, never adds a directory', () => {
    for (const original of ['a'.repeat(255), `${'日'.repeat(85)}.x12`, '🚀'.repeat(63), 'x', 'a/b', 'nul\u0000byte']) {
      for (const id of [1, 999_999_999_999]) {
        const n = processingName(id, original);
        expect(Buffer.byteLength(n)).toBeLessThanOrEqual(200);
        expect(n.startsWith(`${id}-`)).toBe(true);
        expect(n).not.toMatch(/[/\u0000]/);
        expect(n).not.toContain('\ufffd');
      }
    }
  });
});

describe('pathToText / pathFromText', () => {
  it('round-trips every byte string; UTF-8 paths stay readable text', () => {
    expect(pathToText(Buffer.from('/srv/out/ordre-é.x12'))).toBe('/srv/out/ordre-é.x12');
    for (const bytes of [[0xff, 0xfe], [0xc3], [0xed, 0xa0, 0x80], [0x80, 0x41]]) {
      const p = Buffer.concat([Buffer.from('/srv/out/'), Buffer.from(bytes)]);
      const text = pathToText(p);
      expect(text.startsWith('hex:')).toBe(true);
      expect(Buffer.compare(pathFromText(text) as Buffer, p)).toBe(0);
    }
  });
});

describe('sanitizeFileName: invisible characters', () => {
  it('removes bidi controls and zero-width characters (a right-to-left override hides the real extension)', () => {
    expect(sanitizeFileName('invoice\u202efdp.exe', 'f')).toBe('invoicefdp.exe');
    expect(sanitizeFileName('a\u200bb\u200c\u200d\u2066c\u2069\ufeff.x12', 'f')).toBe('abc.x12');
    expect(sanitizeFileName('\u202e\u200b', 'fallback')).toBe('fallback');
  });
});
