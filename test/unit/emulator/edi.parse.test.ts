import { describe, expect, it } from 'vitest';
import { acknowledgment, parseInterchanges } from '../../../packages/emulator/src/edi.js';
import { edifact, x12 } from '../../helpers/edi.js';

describe('emulator EDI envelopes', () => {
  it('reads sender and receiver from the fixed-width ISA, one interchange per ISA…IEA', () => {
    const ixs = parseInterchanges(`${x12(11)}\n${x12(12)}`);
    expect(ixs.map((i) => i.controlNumber)).toEqual(['000000011', '000000012']);
    expect(ixs[0]).toMatchObject({
      standard: 'X12',
      sender: { qualifier: 'ZZ', id: 'GRIDSYNC' },
      receiver: { qualifier: 'ZZ', id: 'DEMOPARTNER' },
      documentType: '810',
    });
  });

  it('honours the element separator at ISA position 4', () => {
    const ixs = parseInterchanges(x12(5).replaceAll('*', '|'));
    expect(ixs[0]?.sender.id).toBe('GRIDSYNC');
  });

  it('reads sender and receiver (with qualifiers) from the EDIFACT UNB, with and without UNA', () => {
    const withUna = parseInterchanges(edifact(42));
    const withoutUna = parseInterchanges(edifact(43).replace("UNA:+.? '", ''));
    for (const ixs of [withUna, withoutUna]) {
      expect(ixs[0]).toMatchObject({
        standard: 'EDIFACT',
        sender: { qualifier: 'ZZ', id: 'GRIDSYNC' },
        receiver: { qualifier: 'ZZ', id: 'DEMOPARTNER' },
      });
    }
    expect(withUna[0]?.controlNumber).toBe('42');
  });

  it('finds nothing in text that is not an interchange, or in a truncated ISA', () => {
    expect(parseInterchanges('hello world')).toEqual([]);
    expect(parseInterchanges(x12(1).slice(0, 80))).toEqual([]);
  });

  it('answers X12 with a valid 997 going back to the sender: 106-char ISA, AK1 naming the group', () => {
    const ix = parseInterchanges(x12(77))[0]!;
    const ack = acknowledgment(ix, () => 900, new Date('2026-11-22T12:34:00Z'))!;
    expect(ack.fileName).toBe('997_000000077.x12');
    expect(ack.content.indexOf('~GS')).toBe(105);
    const back = parseInterchanges(ack.content)[0]!;
    expect(back).toMatchObject({ sender: { id: 'DEMOPARTNER' }, receiver: { id: 'GRIDSYNC' }, documentType: '997' });
    const segs = ack.content.split('~').map((s) => s.split('*')[0]);
    expect(segs).toEqual(['ISA', 'GS', 'ST', 'AK1', 'AK2', 'AK5', 'AK9', 'SE', 'GE', 'IEA', '']);
    expect(ack.content).toContain('AK1*IN*77~AK2*810*0001~AK5*A~AK9*A*1*1*1~SE*6*0001~');
  });

  it('adds a TA1 when the sender asks for one in ISA14, and none otherwise', () => {
    const asked = parseInterchanges(x12(78).replace('*000000078*0*P*', '*000000078*1*P*'))[0]!;
    expect(acknowledgment(asked, () => 1, new Date())!.content.slice(106)).toMatch(/^TA1\*000000078\*261122\*1200\*A\*000~GS\*FA/);
    expect(acknowledgment(parseInterchanges(x12(79))[0]!, () => 1, new Date())!.content).not.toContain('TA1');
  });

  it('answers EDIFACT with a CONTRL going back to the sender', () => {
    const ix = parseInterchanges(edifact(5))[0]!;
    const ack = acknowledgment(ix, () => 901, new Date('2026-11-22T12:34:00Z'))!;
    expect(ack.fileName).toBe('CONTRL_5.edi');
    expect(parseInterchanges(ack.content)[0]).toMatchObject({
      standard: 'EDIFACT',
      sender: { id: 'DEMOPARTNER' },
      receiver: { id: 'GRIDSYNC' },
    });
  });
});
