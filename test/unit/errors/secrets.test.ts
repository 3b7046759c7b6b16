import { describe, expect, it } from 'vitest';
import { scrubSecrets, SECRET_MASK } from '../../../src/errors/index.js';

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
