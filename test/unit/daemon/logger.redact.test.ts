import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/daemon/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return {
    lines,
    logger: createLogger('debug', false, stream as never),
    json: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
  };
}

describe('logger: secrets never reach the log', () => {
  it('redacts keys, passwords, tokens, content and auth headers where they occur', () => {
    const c = capture();
    c.logger.info({ apiKey: 'k1', password: 'p1', token: 't1', refreshToken: 'r1', content: 'EDI-PAYLOAD' }, 'top level');
    c.logger.info({ auth: { apiKey: 'k2', password: 'p2' }, parcel: { content: 'EDI2', fileName: 'a.x12' } }, 'one level down');
    c.logger.info({ headers: { authorization: 'Bearer t3', 'x-api-key': 'k3', 'content-type': 'application/json' } }, 'headers');
    c.logger.info({ request: { headers: { authorization: 'Bearer t4', 'x-api-key': 'k4' } } }, 'nested headers');
    c.logger.info({ config: { api: { apiKey: 'k5', password: 'p5', baseUrl: 'https://x' } } }, 'config');
    const all = c.lines.join('\n');
    for (const secret of ['k1', 'p1', 't1', 'r1', 'EDI-PAYLOAD', 'k2', 'p2', 'EDI2', 't3', 'k3', 't4', 'k4', 'k5', 'p5']) {
      expect(all).not.toContain(`"${secret}"`);
      expect(all).not.toContain(secret === 't3' || secret === 't4' ? `Bearer ${secret}` : `:"${secret}"`);
    }
    const [top, nested, headers, , config] = c.json();
    expect(top?.apiKey).toBe('[redacted]');
    expect(nested?.parcel.fileName).toBe('a.x12'); // what is not secret stays
    expect(headers?.headers['content-type']).toBe('application/json');
    expect(config?.config.api.baseUrl).toBe('https://x');
  });

  it('keeps the operator context of a transfer line', () => {
    const c = capture();
    c.logger.child({ mailbox: 'mb1001' }).info({ parcelId: 42, file: '/srv/in/a.x12', bytes: 10, durationMs: 3 }, 'parcel received');
    expect(c.json()[0]).toMatchObject({
      app: 'gridsync',
      mailbox: 'mb1001',
      parcelId: 42,
      file: '/srv/in/a.x12',
      bytes: 10,
      durationMs: 3,
      msg: 'parcel received',
      level: 30,
    });
  });
});
