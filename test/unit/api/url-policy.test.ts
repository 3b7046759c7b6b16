// One loopback rule for the clients and for config validation: an address the config accepts is
// never refused when the client starts (http://127.0.0.2 used to pass one and fail the other).
import { describe, expect, it } from 'vitest';
import { GridClient, SoapClient, isLoopbackHost } from '../../../src/api/index.js';
import { parseConfig } from '../../../src/config/index.js';

const raw = (baseUrl: string): unknown => ({
  api: { baseUrl, apiKey: 'k' },
  stateDir: '/tmp/gs-state',
  mailboxes: [
    { mailboxId: 1001, inbox: { dir: '/tmp/gs-in' }, outbox: { dir: '/tmp/gs-out', sentDir: '/tmp/gs-sent', errorDir: '/tmp/gs-err' } },
  ],
});

describe('plain http only to this machine', () => {
  it('knows the loopback hosts: localhost, 127.0.0.0/8, ::1 — and nothing else', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '[::1]'])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['127.0.0.256', '128.0.0.1', '10.0.0.1', 'localhost.example.com', '127.0.0.1.nip.io', '::2', ''])
      expect(isLoopbackHost(h)).toBe(false);
  });

  it('an address the config accepts is accepted by both clients, one it refuses by both', async () => {
    for (const [baseUrl, accepted] of [
      ['http://127.0.0.2:8080', true],
      ['http://[::1]:8080', true],
      ['http://10.1.2.3:8080', false],
    ] as const) {
      const config = (): unknown => parseConfig(raw(baseUrl), 'test.yaml', {}, '/etc/gridsync');
      const clients = [
        () => new GridClient({ baseUrl, auth: { apiKey: 'k' } }),
        () => new SoapClient({ url: baseUrl, auth: { apiKey: 'k' } }),
      ];
      if (accepted) {
        expect(config).not.toThrow();
        for (const make of clients) await make().close();
      } else {
        expect(config).toThrow(/plain http/);
        for (const make of clients) expect(make).toThrow(/plain http/);
      }
    }
  });
});
