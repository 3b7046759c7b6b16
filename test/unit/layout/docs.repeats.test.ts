// A page says each thing once: no run of eight words of prose appears in two paragraphs of the
// same page. docs/emulator.md once described the seed, the exposure rules, the test routes and what
// is simulated twice each (two pages pasted together, drifting apart), and docs/client.md listed
// the retried statuses twice, differently. Code blocks, inline code and table rows do not count.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const RUN = 8;

/** Runs of RUN words that occur in more than one paragraph of `text`. */
function repeatedRuns(text: string): string[] {
  const prose = text
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, ' ')
    .split('\n')
    .filter((l) => !l.startsWith('|'))
    .join('\n');
  const firstSeenIn = new Map<string, number>();
  const repeated = new Set<string>();
  prose.split(/\n\s*\n/).forEach((paragraph, i) => {
    const words = paragraph
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s]/gu, ' ')
      .split(/\s+/)
      .filter(Boolean);
    for (let j = 0; j + RUN <= words.length; j++) {
      const run = words.slice(j, j + RUN).join(' ');
      const seen = firstSeenIn.get(run);
      if (seen === undefined) firstSeenIn.set(run, i);
      else if (seen !== i) repeated.add(run);
    }
  });
  return [...repeated];
}

describe('each page says a thing once', () => {
  it('the check finds a sentence said twice, not one said once', () => {
    const once = 'The emulator listens on the loopback address unless told otherwise by its options.';
    expect(repeatedRuns(`${once}\n\nSomething else.`)).toEqual([]);
    expect(repeatedRuns(`${once}\n\nSomething else.\n\n${once}`).length).toBeGreaterThan(0);
  });
  it.each(pages)('%s', (page) => {
    expect(repeatedRuns(fs.readFileSync(path.join(root, page), 'utf8'))).toEqual([]);
  });
});
