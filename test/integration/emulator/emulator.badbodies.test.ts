// Property-style: every endpoint of the catalog, sent generated bad requests (missing required
// fields, wrong types, huge numbers, unknown enum values, unknown ids, garbage bodies), answers a
// 4xx envelope with a sensible errorCode — never a 500, never a hang. The catalog is used only to
// enumerate the endpoints and their field names; what counts as a good answer is the error table of docs/wire.md#errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ALL_ENDPOINTS, type EndpointDef } from '@gridsync/protocol/catalog';
import { startEmulator, type Emulator } from '@gridsync/emulator';

const ROOT = 'bad-bodies-root-key-0123456789';
const STATUS_OF: Record<string, number> = {
  InvalidSession: 401,
  InvalidAPIKey: 401,
  InvalidParameter: 400,
  AccessDenied: 403,
  ObjectNotFound: 404,
  DuplicateObject: 400,
};

let emu: Emulator;
/** Endpoints that answered 200 to at least one generated request (their answers were schema-checked). */
const answered = new Set<string>();
beforeAll(async () => {
  emu = await startEmulator({ rootKey: ROOT, settings: { acknowledgeDelayMs: 0, callbackRetryDelaysMs: [] } });
});
afterAll(async () => {
  // The other tenant's key must have stayed valid, or its pass would have been a row of 401s.
  const me = await fetch(`${emu.url}/v2/users/me`, { headers: { 'x-api-key': 'demo-key-1002' } });
  expect(me.status).toBe(200);
  await emu.close();
  process.stdout.write(
    `endpoints answering 200 to a generated request: ${answered.size}; never: ${ALL_ENDPOINTS.filter((e) => !answered.has(e.name))
      .map((e) => e.name)
      .join(', ')}\n`,
  );
});

interface Field {
  name: string;
  kind: string;
  required: boolean;
  options?: string[];
}

/** Field names and kinds of an endpoint's request, unwrapping optional/default/nullable. */
function fields(e: EndpointDef): Field[] {
  const shape = (e.request as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  return Object.entries(shape).map(([name, t]) => {
    let def = (t as unknown as { _zod: { def: { type: string; innerType?: unknown; entries?: Record<string, string> } } })._zod.def;
    let required = true;
    while (['optional', 'default', 'nullable'].includes(def.type)) {
      if (def.type !== 'nullable') required = false;
      def = (def.innerType as { _zod: { def: typeof def } })._zod.def;
    }
    return { name, kind: def.type, required, ...(def.entries ? { options: Object.values(def.entries) } : {}) };
  });
}

/** Plausible values: ids of the default seed's other tenant-free objects, so that a base body mostly passes. */
function plausible(f: Field): unknown {
  if (f.kind === 'enum') return f.options?.[0];
  if (f.kind === 'boolean') return true;
  if (f.kind === 'number')
    return (
      (
        { networkId: 1, mailboxId: 1002, gridId: 5002, gridIdFrom: 5001, gridIdTo: 5002, userId: 13, interconnectId: 7001 } as Record<
          string,
          number
        >
      )[f.name] ?? 1
    );
  if (/date|time|month|expires|beginUsage/i.test(f.name)) return '2026-11-01T00:00:00Z';
  if (/Delimiter|Terminator/.test(f.name))
    return { elementDelimiter: '*', subElementDelimiter: '>', segmentTerminator: '~' }[f.name] ?? '*';
  if (/password/i.test(f.name)) return 'Aa1!aaaa';
  if (f.name === 'url') return 'https://127.0.0.1:9/hook';
  return 'x';
}

type Mutation = { label: string; body: Record<string, unknown> | string; must4xx: boolean };

function mutations(e: EndpointDef): Mutation[] {
  const fs = fields(e);
  const base = Object.fromEntries(fs.filter((f) => f.required).map((f) => [f.name, plausible(f)]));
  const out: Mutation[] = [];
  const hasRequired = fs.some((f) => f.required);
  out.push({ label: 'empty object', body: {}, must4xx: hasRequired });
  for (const f of fs) {
    const wrong = f.kind === 'string' || f.kind === 'enum' ? 12345 : f.kind === 'number' ? 'not-a-number' : 'yes';
    if (f.required)
      out.push({ label: `${f.name} missing`, body: Object.fromEntries(Object.entries(base).filter(([k]) => k !== f.name)), must4xx: true });
    out.push({ label: `${f.name} wrong type`, body: { ...base, [f.name]: wrong }, must4xx: !(e.method === 'GET' && f.kind !== 'number') });
    out.push({ label: `${f.name} object`, body: { ...base, [f.name]: { $ne: null } }, must4xx: e.method !== 'GET' });
    out.push({ label: `${f.name} array`, body: { ...base, [f.name]: [1, 2] }, must4xx: e.method !== 'GET' });
    if (f.kind === 'number') {
      for (const n of [2 ** 63, 1e308, -1, 0, 1.5, 999_999_999])
        out.push({ label: `${f.name} = ${n}`, body: { ...base, [f.name]: n }, must4xx: n === 2 ** 63 || n === 1e308 || n === 1.5 });
    }
    if (f.kind === 'enum') out.push({ label: `${f.name} unknown enum`, body: { ...base, [f.name]: 'NoSuchValue' }, must4xx: true });
    if (f.kind === 'string') out.push({ label: `${f.name} huge string`, body: { ...base, [f.name]: 'y'.repeat(100_000) }, must4xx: false });
  }
  out.push({ label: 'base body', body: base, must4xx: false });
  for (const raw of ['{"a":', 'null', '[]', '"text"', '\u0000\u00ff', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":1}}']) {
    out.push({
      label: `raw ${JSON.stringify(raw)}`,
      body: raw,
      must4xx: e.method !== 'GET' && !['{"__proto__":{"x":1}}', '{"constructor":{"prototype":1}}'].includes(raw) ? true : hasRequired,
    });
  }
  return out;
}

/** The request of a mutation: path parameters substituted, the rest as query (GET) or JSON body. */
function request(e: EndpointDef, body: Record<string, unknown> | string, key = ROOT): { path: string; init: RequestInit } {
  const rest = typeof body === 'string' ? {} : { ...body };
  let path = e.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(v === undefined ? 'missing' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  });
  const headers: Record<string, string> = { 'x-api-key': key };
  if (e.method === 'GET') {
    const q = new URLSearchParams(
      Object.entries(rest).map(([k, v]): [string, string] => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
    );
    if ([...q].length) path += `?${q.toString()}`;
    return { path, init: { method: 'GET', headers } };
  }
  headers['content-type'] = 'application/json';
  return { path, init: { method: e.method, headers, body: typeof body === 'string' ? body : JSON.stringify(rest) } };
}

describe('no request produces a 500 (docs/wire.md#errors: every error is a 4xx envelope with its errorCode)', () => {
  it('covers all 119 endpoints', () => {
    expect(ALL_ENDPOINTS).toHaveLength(119);
  });

  // As Root (every level check passes, the handlers run) and as another tenant's MailboxAdmin
  // (403/404 paths, objects of mailbox 1001 out of sight).
  it.each(ALL_ENDPOINTS.flatMap((e) => [[e.name, 'Root', ROOT, e] as const, [e.name, 'another tenant', 'demo-key-1002', e] as const]))(
    '%s as %s: generated bad requests answer 4xx envelopes, never 5xx, never hang',
    async (_name, _who, key, e) => {
      const failures: string[] = [];
      for (const m of mutations(e)) {
        const { path, init } = request(e, m.body, key);
        let res: Response;
        try {
          res = await fetch(emu.url + path, { ...init, signal: AbortSignal.timeout(10_000) });
        } catch (err) {
          failures.push(`${m.label}: no answer (${(err as Error).message})`);
          continue;
        }
        const text = await res.text();
        if (res.status >= 500) {
          failures.push(`${m.label}: ${res.status} ${text.slice(0, 200)}`);
          continue;
        }
        if (m.must4xx && res.status < 400) failures.push(`${m.label}: expected a 4xx, got ${res.status}`);
        if (res.status === 200) {
          answered.add(e.name);
          // What the emulator answers must be readable by the client's response schema.
          const data = (JSON.parse(text) as { data: unknown }).data;
          const parsed = (e.response as z.ZodType).safeParse(data);
          if (!parsed.success)
            failures.push(
              `${m.label}: 200 but the response does not match ${e.name}'s schema: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`,
            );
        }
        if (res.status >= 400) {
          const env = JSON.parse(text) as { success: boolean; data: unknown; errorCode: string; message: string };
          if (env.success !== false || env.data !== null || typeof env.message !== 'string' || STATUS_OF[env.errorCode] !== res.status) {
            failures.push(`${m.label}: bad error envelope ${res.status} ${text.slice(0, 200)}`);
          }
        }
      }
      expect(failures).toEqual([]);
    },
  );
});
