/** Splitting a segment's text into its elements (and an EDIFACT composite into its components). */

/** `text.split(sep)` by indexOf: String#split was most of the cost of reading a large file. */
export function split(text: string, sep: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(sep, from);
    if (at === -1) break;
    out.push(text.slice(from, at));
    from = at + 1;
  }
  out.push(text.slice(from));
  return out;
}

/** The first three elements (tag, 01, 02): all a set or group trailer or an ST needs, without splitting the rest. */
export function firstThree(text: string, sep: string): string[] {
  const a = text.indexOf(sep);
  if (a === -1) return [text];
  const b = text.indexOf(sep, a + 1);
  if (b === -1) return [text.slice(0, a), text.slice(a + 1)];
  const c = text.indexOf(sep, b + 1);
  return [text.slice(0, a), text.slice(a + 1, b), c === -1 ? text.slice(b + 1) : text.slice(b + 1, c)];
}

/** Splits a segment into elements, honouring the EDIFACT release character. */
export function splitElements(text: string, sep: string, release: string): string[] {
  if (release === '' || !text.includes(release)) return split(text, sep);
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === release && i + 1 < text.length) {
      cur += c + (text[i + 1] as string);
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}
