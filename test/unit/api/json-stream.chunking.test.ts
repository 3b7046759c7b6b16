import { describe, expect, it } from 'vitest';
import { Base64Decoder, Base64Encoder, InvalidBase64Error, JsonStreamError, readJsonStreaming } from '@gridsync/protocol/encoding';

/** mulberry32: a seeded split of the text into chunks, so a failing seed is a regression test. */
function splits(text: string, seed: number): string[] {
  let a = seed >>> 0;
  const rnd = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const n = 1 + Math.floor(rnd() * (rnd() < 0.5 ? 4 : 40));
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** The body as bytes, cut at seeded places: multi-byte UTF-8 characters get split across chunks too. */
async function* bytesOf(text: string, seed: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  for (const piece of splits(bytes.toString('latin1'), seed)) {
    yield bytes.subarray(at, at + piece.length);
    at += piece.length;
  }
}

async function parse(text: string, seed: number, field: (string | number)[] = ['data', 'content']) {
  let streamed = '';
  const r = await readJsonStreaming(bytesOf(text, seed), { streamField: field, onChunk: (t) => void (streamed += t) });
  return { ...r, streamed };
}

describe('streaming JSON reader', () => {
  const doc = {
    success: true,
    errorCode: null,
    message: 'quote " backslash \\ slash / unicode é 😀 \u0001 tab\t',
    data: {
      parcelId: 12345678901,
      fileName: 'a\\b/c "d" é😀.x12',
      bytes: -1.5e3,
      nested: [1, [2, { x: null }], false, true],
      content: 'QUJD\\/+=="',
    },
    trailing: [],
  };
  const text = JSON.stringify(doc, null, 1).replace('"fileName"', '"fileName" \n\t');

  it('gives JSON.parse’s value minus the streamed field, and the field’s decoded text, for 300 seeded chunkings', async () => {
    const expected = JSON.parse(text) as { data: Record<string, unknown> };
    const content = expected.data.content;
    delete expected.data.content;
    for (let seed = 1; seed <= 300; seed++) {
      const r = await parse(text, seed);
      expect(r.value, `seed ${seed}`).toEqual(expected);
      expect(r.streamed, `seed ${seed}`).toBe(content);
      expect(r.streamedFieldSeen).toBe(true);
    }
  });

  it('finds the field whatever the key order, escaped \\/ included', async () => {
    const t = '{"data":{"content":"AAEC\\/w==","fileName":"x","parcelId":1},"success":true}';
    for (let seed = 1; seed <= 50; seed++) expect((await parse(t, seed)).streamed).toBe('AAEC/w==');
  });

  it('rejects truncation and malformed JSON with typed errors', async () => {
    await expect(parse('{"success":true,"data":{"content":"AAAA', 1)).rejects.toMatchObject({ reason: 'truncated' });
    await expect(parse('{"success":true,', 1)).rejects.toBeInstanceOf(JsonStreamError);
    await expect(parse('{"success":tru}', 1)).rejects.toMatchObject({ reason: 'malformed' });
    await expect(parse('{"a":1}}', 1)).rejects.toMatchObject({ reason: 'malformed' });
    await expect(parse('{"a":"\u0001"}', 1)).rejects.toMatchObject({ reason: 'malformed' });
    await expect(parse('<html>', 1)).rejects.toMatchObject({ reason: 'malformed' });
    await expect(parse('{"a":"\\x"}', 1)).rejects.toMatchObject({ reason: 'malformed' });
  });

  it('holds the body beside the streamed field to maxKept, however long the field (escapes included)', async () => {
    const read = (t: string, maxKept: { chars: number; values: number }): Promise<unknown> =>
      readJsonStreaming(bytesOf(t, 7), { streamField: ['data', 'content'], onChunk: () => undefined, maxKept });
    const big = `{"success":true,"data":{"parcelId":1,"content":"${'AB\\/C'.repeat(100_000)}"}}`;
    await expect(read(big, { chars: 100, values: 10 })).resolves.toBeDefined();
    const members = `{"success":true,"data":{"content":"QQ==",${Array.from({ length: 11 }, (_, i) => `"a${i}":1`).join(',')}}}`;
    await expect(read(members, { chars: 1000, values: 10 })).rejects.toMatchObject({ reason: 'kept-values' });
    const long = `{"success":true,"data":{"content":"QQ==","pad":"${'x'.repeat(1000)}"}}`;
    await expect(read(long, { chars: 1000, values: 10 })).rejects.toMatchObject({ reason: 'kept-chars' });
  });
});

describe('strict streaming base64', () => {
  it('decodes any chunking of valid base64 to the original bytes, and encodes back', () => {
    const bytes = Buffer.from(Array.from({ length: 1001 }, (_, i) => (i * 7) % 256));
    const text = bytes.toString('base64');
    for (let seed = 1; seed <= 100; seed++) {
      const d = new Base64Decoder();
      const parts = splits(text, seed).map((c) => d.push(c));
      d.end();
      expect(Buffer.concat(parts).equals(bytes)).toBe(true);
      expect(d.bytes).toBe(1001);
      const e = new Base64Encoder();
      const enc =
        splits(bytes.toString('latin1'), seed)
          .map((c) => e.push(Buffer.from(c, 'latin1')))
          .join('') + e.end();
      expect(enc).toBe(text);
    }
  });

  it.each([
    ['@@@!', 'invalid base64 character'],
    ['QUJD\nREVG', 'invalid base64 character'],
    ['QQ==QUJD', 'padding'],
    ['Q===', 'padding'],
    ['QUJ', 'stray'],
    ['QU=D', 'padding'],
  ])('rejects %j (Node would silently accept it)', (text, message) => {
    const d = new Base64Decoder();
    expect(() => {
      d.push(text.slice(0, 2));
      d.push(text.slice(2));
      d.end();
    }).toThrow(InvalidBase64Error);
    expect(() => {
      const d2 = new Base64Decoder();
      d2.push(text);
      d2.end();
    }).toThrow(new RegExp(message));
  });
});
