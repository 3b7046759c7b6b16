/**
 * The endpoint catalog: every endpoint of the 16 groups of the service (docs/wire.md#catalog), declared once and shared by the
 * client (typed calls, `gridsync call`) and the emulator (routing, request validation).
 */
import type { EndpointDef, HttpMethod } from './endpoint.js';
import { auth } from './auth.js';
import { parcels } from './parcels.js';
import { networks } from './networks.js';
import { mailboxes } from './mailboxes.js';
import { ids } from './ids.js';
import { partners } from './partners.js';
import { interchanges } from './interchanges.js';
import { callbacks } from './callbacks.js';
import { carbonCopies } from './carbon-copies.js';
import { certificates } from './certificates.js';
import { comms } from './comms.js';
import { users } from './users.js';
import { keys } from './keys.js';
import { portals } from './portals.js';
import { reports } from './reports.js';
import { statusLists } from './status-lists.js';

export * from './endpoint.js';

export const catalog = {
  auth,
  networks,
  mailboxes,
  ids,
  partners,
  parcels,
  interchanges,
  callbacks,
  carbonCopies,
  certificates,
  comms,
  users,
  keys,
  portals,
  reports,
  statusLists,
} as const;

export const ALL_ENDPOINTS: readonly EndpointDef[] = Object.values(catalog).flatMap((group) => Object.values(group) as EndpointDef[]);

const byName = new Map(ALL_ENDPOINTS.map((e) => [e.name, e]));

export function endpointByName(name: string): EndpointDef | undefined {
  return byName.get(name);
}

export interface EndpointMatch {
  readonly endpoint: EndpointDef;
  /** Path parameters by name, as the raw (URL-decoded) strings of the path. */
  readonly params: Record<string, string>;
}

interface Route {
  readonly endpoint: EndpointDef;
  readonly method: HttpMethod;
  readonly segments: readonly string[];
  /** Number of literal segments: more literals win (`/v2/users/me` over `/v2/users/{userId}`). */
  readonly literals: number;
}

const routes: Route[] = ALL_ENDPOINTS.flatMap((e) =>
  [{ method: e.method, path: e.path }, ...(e.aliases ?? [])].map((form) => {
    const segments = form.path.split('/').filter(Boolean);
    return { endpoint: e, method: form.method, segments, literals: segments.filter((s) => !s.startsWith('{')).length };
  }),
).sort((a, b) => b.literals - a.literals);

/** Constraints a path parameter's value must meet for the route to match (docs/wire.md#routing-traps). */
const PARAM_PATTERNS: Record<string, RegExp> = {
  showInactive: /^(true|false)$/,
};
const NUMERIC_PARAM = /Id$|^id$/;

/**
 * Resolves a concrete request (method + path, query string ignored) to its catalog entry. Literal
 * segments win over parameters; id parameters only match digits, `showInactive` only true/false.
 */
export function matchEndpoint(method: string, rawPath: string): EndpointMatch | undefined {
  const pathOnly = rawPath.split('?')[0] ?? '';
  const segments = pathOnly.split('/').filter(Boolean);
  const m = method.toUpperCase();
  for (const r of routes) {
    if (r.method !== m || r.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segments.length && ok; i++) {
      const pattern = r.segments[i] as string;
      let actual: string;
      try {
        actual = decodeURIComponent(segments[i] as string);
      } catch {
        ok = false;
        break;
      }
      if (pattern.startsWith('{')) {
        const name = pattern.slice(1, -1);
        const constraint = PARAM_PATTERNS[name] ?? (NUMERIC_PARAM.test(name) ? /^-?\d+$/ : undefined);
        if (constraint && !constraint.test(actual)) ok = false;
        else params[name] = actual;
      } else if (pattern !== actual) ok = false;
    }
    if (ok) return { endpoint: r.endpoint, params };
  }
  return undefined;
}

export { ISA_FIELDS } from './interchanges.js';
export { UploadRequest } from './parcels.js';
