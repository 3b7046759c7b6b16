/**
 * Callback (webhook) delivery, docs/wire.md#callbacks: a `Parcel` event fires when a parcel becomes
 * InBoxReady (and on confirm); each registration scoped to that mailbox, its network or nothing
 * gets a POST with a small JSON payload and Basic or Digest auth when configured; non-2xx or no answer is
 * retried after the configured gaps, and every attempt is recorded.
 *
 * TLS: callback URLs are https (the service allows nothing else). For a receiver on this machine
 * (127.0.0.1, ::1, localhost) a self-signed certificate is accepted, because that is how a
 * developer runs a receiver next to the emulator; any other host is verified.
 */
import { Agent, request } from 'undici';
import { setTimeout as delay } from 'node:timers/promises';
import { iso, type World } from './context.js';
import { digestAuthorization } from './digest.js';
import { CALLBACK_DELIVERY } from './faults.js';

export interface CallbackRow {
  callback_id: number;
  url: string;
  event: string;
  mailbox_id: number | null;
  network_id: number | null;
  http_auth_type: string;
  username: string | null;
  password: string | null;
  status: string;
  owner_network_id: number;
  created: string;
}

export interface CallbackEventRow {
  callback_event_id: number;
  callback_id: number;
  event: string;
  mailbox_id: number | null;
  object_id: number;
  status: string;
  created: string;
  created_ms: number;
  delivered: string | null;
  http_status: number | null;
  payload: string;
  attempts: number;
  last_attempt: string | null;
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const localAgent = new Agent({ connect: { rejectUnauthorized: false } });

interface Answer {
  readonly status: number;
  readonly body: string;
  /** Its WWW-Authenticate values (a 401's challenges). */
  readonly challenges: readonly string[];
}

async function send(url: URL, headers: Record<string, string>, payload: string): Promise<Answer> {
  try {
    const res = await request(url, {
      method: 'POST',
      headers,
      body: payload,
      headersTimeout: 5000,
      bodyTimeout: 5000,
      ...(LOOPBACK.has(url.hostname) ? { dispatcher: localAgent } : {}),
    });
    const www = res.headers['www-authenticate'];
    return {
      status: res.statusCode,
      body: (await res.body.text()).slice(0, 2000),
      challenges: www === undefined ? [] : Array.isArray(www) ? www : [www],
    };
  } catch (err) {
    return { status: 0, body: (err as Error).message, challenges: [] };
  }
}

/**
 * One delivery to a callback URL; returns the receiver's status and body (0 when it did not answer).
 * Digest takes two requests, as with any HTTP client: the first draws the 401 and its challenge,
 * the second answers it.
 */
export async function post(cb: CallbackRow, payload: string): Promise<{ status: number; body: string }> {
  const url = new URL(cb.url);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'grid-emulator-callbacks' };
  if (cb.http_auth_type === 'Basic' && cb.username)
    headers.authorization = `Basic ${Buffer.from(`${cb.username}:${cb.password ?? ''}`).toString('base64')}`;
  const first = await send(url, headers, payload);
  if (cb.http_auth_type !== 'Digest' || !cb.username || first.status !== 401) return first;
  const authorization = digestAuthorization(first.challenges, cb.username, cb.password ?? '', 'POST', url.pathname + url.search);
  return authorization ? send(url, { ...headers, authorization }, payload) : first;
}

/** Fires `event` for a parcel of `mailboxId`: one recorded delivery per matching registration. */
export function fireParcelEvent(world: World, mailboxId: number, parcel: Record<string, unknown>): void {
  const { db } = world.store;
  const mb = db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number } | undefined;
  if (!mb) return;
  const cbs = db
    .prepare(
      `SELECT * FROM callbacks WHERE status = 'Active' AND event = 'Parcel'
         AND (mailbox_id = ? OR (mailbox_id IS NULL AND (network_id = ? OR network_id IS NULL) AND owner_network_id = ?))`,
    )
    .all(mailboxId, mb.network_id, mb.network_id) as CallbackRow[];
  for (const cb of cbs) {
    const id = world.store.nextId('callbackEvent', 800_001);
    const now = world.now();
    const payload = JSON.stringify({
      callbackEventId: id,
      callbackId: cb.callback_id,
      event: 'Parcel',
      mailboxId,
      objectId: parcel.parcelId,
      status: parcel.status,
      created: iso(now),
      isTest: false,
      parcelId: parcel.parcelId,
      fileName: parcel.fileName,
      bytes: parcel.bytes,
      gridIdFrom: parcel.gridIdFrom,
      gridIdTo: parcel.gridIdTo,
    });
    db.prepare(
      `INSERT INTO callback_events (callback_event_id, callback_id, event, mailbox_id, object_id, status, created, created_ms, payload)
       VALUES (?, ?, 'Parcel', ?, ?, 'Pending', ?, ?, ?)`,
    ).run(id, cb.callback_id, mailboxId, parcel.parcelId, iso(now), now, payload);
    world.later(() => attempt(world, id), 0);
  }
}

async function attempt(world: World, eventId: number): Promise<void> {
  const { db } = world.store;
  const ev = db.prepare('SELECT * FROM callback_events WHERE callback_event_id = ?').get(eventId) as CallbackEventRow | undefined;
  const cb = ev && (db.prepare('SELECT * FROM callbacks WHERE callback_id = ?').get(ev.callback_id) as CallbackRow | undefined);
  if (!ev || !cb || ev.status !== 'Pending') return;
  const plan = world.faults.plan(CALLBACK_DELIVERY);
  if (plan.latencyMs > 0) await delay(plan.latencyMs);
  if (!db.open) return;
  // A dropped call looks delivered from the service's side, as behind a proxy that swallowed it.
  const r = plan.drop ? { status: 200, body: '' } : await post(cb, ev.payload);
  if (plan.duplicate) await post(cb, ev.payload);
  if (!db.open) return;
  const attempts = ev.attempts + 1;
  const ok = r.status >= 200 && r.status < 300;
  const delays = world.settings.callbackRetryDelaysMs;
  const status = ok ? 'Completed' : attempts > delays.length ? 'Error' : 'Pending';
  db.prepare(
    'UPDATE callback_events SET attempts = ?, last_attempt = ?, http_status = ?, status = ?, delivered = ? WHERE callback_event_id = ?',
  ).run(attempts, iso(world.now()), r.status || null, status, ok ? iso(world.now()) : null, eventId);
  if (status === 'Pending') world.later(() => attempt(world, eventId), delays[attempts - 1] ?? 0);
}
