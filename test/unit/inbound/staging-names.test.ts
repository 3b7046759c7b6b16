import { describe, expect, it } from 'vitest';
import { orphanedStaging, stagingName } from '../../../src/inbound/staging-names.js';

describe('staging names', () => {
  it('carry the token only under a shared journal', () => {
    expect(stagingName(1001, 42, undefined)).toBe('1001-42.part');
    expect(stagingName(1001, 42, 7)).toBe('1001-42.t7.part');
  });

  it("orphans: this mailbox's downloads under an older token that no row points at — nothing else", () => {
    const names = [
      stagingName(1001, 1, 3), // older token, unreferenced: orphan
      stagingName(1001, 2, 3), // older token, a staged row points at it: the new holder places it
      stagingName(1001, 3, 5), // the current token: this holder's own download
      stagingName(1001, 4, 6), // a newer token (this holder is the stale one): not ours to judge
      stagingName(1002, 5, 3), // another mailbox
      stagingName(1001, 6, undefined), // a single-instance name
      '1001-7.t3.part.tmp',
      'notes.txt',
    ];
    expect(orphanedStaging(names, 1001, 5, new Set([stagingName(1001, 2, 3)]))).toEqual([stagingName(1001, 1, 3)]);
  });
});
