// Digest credentials (issue 23): with `callbacks.auth: digest` the daemon registers Digest, the
// emulator process delivers with Digest (the 401 challenge, then the answer) over TLS, and a parcel
// arrives long before the 10-minute poll. Forged and replayed Digest headers are refused without
// a single cycle; a right answer from outside (MD5 here, the emulator took SHA-256) is believed once.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { freePort, inboxFiles, metric, startDaemon, callbackWorldForFile, type DaemonHandle } from '../../helpers/callbacks-world.js';

const w = callbackWorldForFile();

const agent = new https.Agent({ rejectUnauthorized: false, keepAlive: false });

function send(port: number, p: string, auth?: string): Promise<{ status: number; challenges: string[] }> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
      },
      (res) => {
        res.resume();
        const www = res.headersDistinct['www-authenticate'];
        resolve({ status: res.statusCode ?? 0, challenges: www === undefined ? [] : Array.isArray(www) ? www : [www] });
      },
    );
    req.on('error', () => resolve({ status: 0, challenges: [] }));
    req.end('{"parcelId":1}');
  });
}

function answer(
  challenge: string,
  o: { password: string; uri: string; algorithm: 'MD5' | 'SHA-256'; nc?: string; nonce?: string },
): string {
  const nonce = o.nonce ?? (/nonce="([^"]+)"/.exec(challenge)?.[1] as string);
  const realm = /realm="([^"]+)"/.exec(challenge)?.[1] as string;
  const h = (s: string): string =>
    createHash(o.algorithm === 'MD5' ? 'md5' : 'sha256')
      .update(s)
      .digest('hex');
  const nc = o.nc ?? '00000001';
  const response = h(`${h(`gridsync:${realm}:${o.password}`)}:${nonce}:${nc}:c0ffee:auth:${h(`POST:${o.uri}`)}`);
  return `Digest username="gridsync", realm="${realm}", nonce="${nonce}", uri="${o.uri}", algorithm=${o.algorithm}, qop=auth, nc=${nc}, cnonce="c0ffee", response="${response}"`;
}

async function pendingListCalls(): Promise<number> {
  const log = (await w.emu('GET', '/_emulator/requests')).data as { endpoint?: string }[];
  return log.filter((r) => r.endpoint === 'parcels.pendingInboxList').length;
}

describe('callbacks: Digest', () => {
  it('a daemon switched from Basic to Digest is registered anew and takes the emulator’s Digest calls', async () => {
    const port = await freePort();
    const basic = await startDaemon(w, 'switch', { poll: '10m', callbacks: { port } });
    await basic.stop();
    const d = await startDaemon(w, 'switch', { poll: '10m', callbacks: { port, auth: 'digest' } });
    try {
      await eventually(async () => (await metric(d, 'gridsync_last_success_timestamp_seconds{mailbox="mb1001"}')) > 0);
      await w.inject('digest.x12', 'ISA*digest~');
      await eventually(() => inboxFiles(d).includes('digest.x12'), 15_000, 'the Digest-announced arrival');
      expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1001"}')).toBeGreaterThanOrEqual(1);
      // Each Digest call first draws a challenge; no call was refused for wrong credentials.
      expect(await metric(d, 'gridsync_callbacks_refused_total{reason="challenged"}')).toBeGreaterThanOrEqual(1);
      expect(await metric(d, 'gridsync_callbacks_refused_total{reason="auth"}')).toBe(0);
      // The service's record: every delivery (the ready call, and the one for our confirm) answered 200.
      await eventually(
        async () => {
          const r = (await w.emu('POST', '/v2/callbacks/event-list', { mailboxId: 1001 })).data as {
            events: { httpStatus: number | null }[];
          };
          return r.events.length >= 2 && r.events.every((e) => e.httpStatus === 200);
        },
        15_000,
        'every delivery answered 200',
      );
    } finally {
      await d.stop();
    }
  }, 90_000);

  it('forged and replayed Digest headers are refused without a cycle; a right answer is believed once', async () => {
    const port = await freePort();
    const d: DaemonHandle = await startDaemon(w, 'target', { poll: '10m', callbacks: { port, auth: 'digest' }, mailboxId: 1002 });
    try {
      const state = JSON.parse(fs.readFileSync(path.join(w.dir, 'target', 'state', 'callbacks.json'), 'utf8')) as {
        paths: Record<string, string>;
        password: string;
      };
      const uri = `/gridsync/callbacks/1002/${state.paths['1002']}`;
      await eventually(async () => (await metric(d, 'gridsync_last_success_timestamp_seconds{mailbox="mb1002"}')) > 0);
      const before = await pendingListCalls();
      const challenge = async (): Promise<string> => {
        const r = await send(port, uri);
        expect(r.status).toBe(401);
        expect(r.challenges.map((c) => /algorithm=([\w-]+)/.exec(c)?.[1])).toEqual(['SHA-256', 'MD5']);
        return r.challenges[1] as string;
      };
      const c = await challenge();
      const forged = [
        answer(c, { password: 'guess', uri, algorithm: 'MD5' }),
        answer(c, { password: state.password, uri, algorithm: 'MD5', nonce: 'never-issued-by-the-receiver' }),
        answer(c, { password: state.password, uri: uri.replace('/1002/', '/1001/'), algorithm: 'MD5' }),
        answer(c, { password: state.password, uri, algorithm: 'MD5' }).replace('qop=auth', 'qop=auth-int'),
        answer(c, { password: state.password, uri, algorithm: 'MD5' }).replace('algorithm=MD5', 'algorithm=SHA-256'),
        `Basic ${Buffer.from(`gridsync:${state.password}`).toString('base64')}`,
        'Digest garbage',
      ];
      for (const auth of forged) expect((await send(port, uri, auth)).status).toBe(401);
      // Many challenges drawn: each only costs a bounded nonce (the bound: the unit test).
      for (let i = 0; i < 100; i++) await send(port, uri);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await pendingListCalls()).toBe(before);
      expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1002"}')).toBe(0);
      expect(await metric(d, 'gridsync_callbacks_refused_total{reason="auth"}')).toBeGreaterThanOrEqual(forged.length - 1); // the never-issued nonce with the right password is only stale

      // A right MD5 answer to a fresh challenge is believed, and starts a cycle.
      const right = answer(await challenge(), { password: state.password, uri, algorithm: 'MD5' });
      expect((await send(port, uri, right)).status).toBe(200);
      await eventually(async () => (await pendingListCalls()) > before, 10_000, 'the cycle the call started');
      await new Promise((r) => setTimeout(r, 1000));
      const afterOne = await pendingListCalls();
      // The same header again (a captured call replayed): refused, no cycle.
      expect((await send(port, uri, right)).status).toBe(401);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await pendingListCalls()).toBe(afterOne);
      expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1002"}')).toBe(1);
    } finally {
      await d.stop();
    }
  }, 90_000);
});
