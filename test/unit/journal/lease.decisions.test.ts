/**
 * The two decisions an instance takes alone: when it must stop acting on a lease it could not
 * renew (self-fencing, on a monotonic clock from the renewal's send time), and how many mailboxes
 * it should hold among the live instances (fair share, the same answer on every instance).
 */
import { describe, expect, it } from 'vitest';
import { defaultInstanceName, fairShare, mayAct, selfFenceDeadline } from '../../../src/journal/index.js';

describe('self-fencing', () => {
  it('counts from when the renewal was sent, not answered, and keeps a margin before the expiry', () => {
    const sentAt = 1_000;
    const answeredAt = 1_800; // a slow answer: the server may have stamped the expiry at 1_001
    const deadline = selfFenceDeadline(sentAt, 10_000, 1_000);
    expect(deadline).toBeLessThan(sentAt + 10_000);
    expect(deadline).toBeLessThan(answeredAt + 10_000 - 1_000);
    expect(mayAct(deadline - 1, deadline)).toBe(true);
    expect(mayAct(deadline, deadline)).toBe(false);
  });
});

describe('fair share', () => {
  const names = ['host-a-1', 'host-b-7', 'host-c-3'];

  it('splits every mailbox, each instance within one of the others, the same on every instance', () => {
    for (let mailboxes = 0; mailboxes <= 10; mailboxes++) {
      for (let k = 1; k <= names.length; k++) {
        const live = names.slice(0, k);
        const shares = live.map((me) => fairShare(mailboxes, [...live].reverse(), me));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(mailboxes);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('counts the asking instance even when the list of live ones does not show it yet', () => {
    expect(fairShare(4, ['host-a-1'], 'host-b-7')).toBe(2);
    expect(fairShare(1, [], 'alone')).toBe(1);
  });
});

it('the default instance name is the host name and the pid', () => {
  expect(defaultInstanceName('edi-01', 4242)).toBe('edi-01-4242');
});
