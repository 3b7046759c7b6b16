// A parcel a complete pending list no longer shows, whose download had not begun here: only the
// service's word that someone confirmed it ends our row `taken`; anything a download of ours may
// have left, or a status we do not know, is downloaded again (a second copy is better than none).
import { describe, expect, it } from 'vitest';
import { offListVerdict } from '../../../src/inbound/taken-elsewhere.js';

describe('offListVerdict', () => {
  it('a confirmed parcel (InBoxArchived) is taken, whoever tried it', () => {
    expect(offListVerdict('InBoxArchived', false)).toBe('taken');
    expect(offListVerdict('InBoxArchived', true)).toBe('taken');
  });

  it('InBoxTransferred is taken unless we tried to download it (then the download may have left it so)', () => {
    expect(offListVerdict('InBoxTransferred', false)).toBe('taken');
    expect(offListVerdict('InBoxTransferred', true)).toBe('download');
  });

  it('still ready, unknown or no status: downloaded by id', () => {
    for (const status of ['InBoxReady', 'x1256Pending', '', undefined]) expect(offListVerdict(status, false)).toBe('download');
  });
});
