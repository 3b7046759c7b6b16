// Missed callbacks (issue 23): a parcel placed without a call counts as missed once its grace has
// passed; a late call within the grace, or a call naming no parcel, is not a miss.
import { describe, expect, it } from 'vitest';
import { Announcements } from '../../../src/callbacks/index.js';

describe('Announcements', () => {
  it('counts a parcel placed unannounced as missed after the grace, and in a row until an announced one', () => {
    let now = 0;
    const a = new Announcements(() => now, 10_000);
    a.heard(1001, { event: 'Parcel', objectId: 1, parcelId: 1 });
    a.placed(1001, 1);
    a.placed(1001, 2); // its call comes late, within the grace
    a.placed(1001, 3); // never announced
    now = 5000;
    a.heard(1001, { parcelId: 2 });
    expect(a.sweep()).toEqual([]);
    now = 10_001;
    expect(a.sweep()).toEqual([1001]);
    expect(a.health()).toMatchObject({ missed: 1, missedInARow: 1, calls: 2 });
    a.placed(1001, 4);
    a.placed(1001, 5);
    now = 30_000;
    expect(a.sweep()).toEqual([1001, 1001]);
    expect(a.health().missedInARow).toBe(3);
    a.heard(1001, {}); // names no parcel: announces one
    a.placed(1001, 6);
    expect(a.health()).toMatchObject({ missed: 3, missedInARow: 0 });
  });

  it('the call for a confirm (our own, coming back) does not announce the parcel it names', () => {
    let now = 0;
    const a = new Announcements(() => now, 1000);
    a.placed(1001, 7); // its ready call never came
    a.heard(1001, { event: 'Parcel', parcelId: 7, status: 'InBoxTransferred' });
    a.heard(1001, { event: 'Parcel', status: 'InBoxTransferred' });
    a.heard(1001, { event: 'Parcel', parcelId: 8, status: 'InBoxReady' });
    a.placed(1001, 8);
    now = 2000;
    expect(a.sweep()).toEqual([1001]);
    expect(a.health()).toMatchObject({ missed: 1, calls: 3 });
  });

  it('a test call announces nothing', () => {
    let now = 0;
    const a = new Announcements(() => now, 1000);
    a.heard(1001, { isTest: true });
    a.placed(1001, 9);
    now = 2000;
    expect(a.sweep()).toEqual([1001]);
  });
});
