// The operations guide says what `log.level: debug` shows: every decision the debug lines name, the
// code of a decision without one, and the messages of the debug lines are there, word for word.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DECISION_OF, DEBUG_MESSAGES, UNSPECIFIED_REASON } from '../../../src/daemon/debug-log.js';

const guide = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/operations.md'), 'utf8');
const debugSection = guide.slice(guide.indexOf('**`log.level: debug`**'), guide.indexOf('Info stays quiet'));

describe('docs/operations.md on log.level debug', () => {
  it('has the section', () => expect(debugSection.length).toBeGreaterThan(200));
  it.each([...new Set(Object.values(DECISION_OF))])('names the decision %s', (d) => expect(debugSection).toContain(`\`${d}\``));
  it('names the code of a decision without one', () => expect(debugSection).toContain(`\`${UNSPECIFIED_REASON}\``));
  it.each([...DEBUG_MESSAGES, 'request'])('quotes the line %s', (m) => expect(debugSection).toContain(`\`${m}\``));
});
