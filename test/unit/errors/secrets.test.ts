import { describe, expect, it } from 'vitest';
import { holdIssued, holdSecrets, scrubHeld, scrubSecrets, SECRET_MASK } from '../../../src/errors/index.js';

describe('scrubSecrets', () => {
  const key = 'k3y-Secret/Value+42';

  it('masks a secret quoted verbatim, percent-encoded and in base64', () => {
    const echoed = [
      `sender not allowed for API key ${key}`,
      `url?key=${encodeURIComponent(key)}`,
      `Basic ${Buffer.from(key).toString('base64')}`,
    ].join('\n');
    const out = scrubSecrets(echoed, [key]);
    expect(out).not.toContain(key);
    expect(out).not.toContain(encodeURIComponent(key));
    expect(out).not.toContain(Buffer.from(key).toString('base64'));
    expect(out.split(SECRET_MASK)).toHaveLength(4);
  });

  it('leaves text without secrets, and secrets too short to be one, alone', () => {
    expect(scrubSecrets('parcel 42 refused', [key, 'abc'])).toBe('parcel 42 refused');
  });
});

describe('the secrets in effect (scrubHeld)', () => {
  const given = 'config-api-key-0001';
  const token = (n: number): string => `session-token-${String(n).padStart(4, '0')}`;

  it('masks the config credentials for good, and the issued tokens of the last 64 logins', () => {
    holdSecrets([given]);
    for (let n = 1; n <= 100; n++) holdIssued([token(n)]);
    const text = (n: number): string => `echo of ${token(n)} and ${given}`;
    expect(scrubHeld(text(100))).toBe(`echo of ${SECRET_MASK} and ${SECRET_MASK}`);
    expect(scrubHeld(text(37))).toBe(`echo of ${SECRET_MASK} and ${SECRET_MASK}`);
    // The 36 oldest tokens are no longer held: a daemon logging in for years scrubs a bounded set.
    expect(scrubHeld(text(36))).toBe(`echo of ${token(36)} and ${SECRET_MASK}`);
    // A token issued again counts as recent.
    holdIssued([token(36)]);
    expect(scrubHeld(text(36))).toBe(`echo of ${SECRET_MASK} and ${SECRET_MASK}`);
    expect(scrubHeld(Buffer.from(token(99)).toString('base64'))).toBe(SECRET_MASK);
  });
});
