/**
 * One entry of the endpoint catalog: everything the client, the emulator and `gridsync call` need
 * to know about an endpoint, declared once. Typed client functions are derived from these entries
 * (src/api/client.ts); the emulator registers its handlers against the same entries.
 */
import { z } from 'zod';
import { IntId, type AuthLevel } from '../wire/index.js';

export const ENDPOINT_GROUPS = [
  'Auth',
  'Networks',
  'Mailboxes',
  'IDs',
  'Partners',
  'Parcels',
  'Interchanges',
  'Callbacks',
  'Carbon Copies',
  'Certificates',
  'Comms',
  'Users',
  'Keys',
  'Portals',
  'Reports',
  'Status Lists',
] as const;
export type EndpointGroup = (typeof ENDPOINT_GROUPS)[number];

/** Endpoint counts per group as the service's published table (docs/wire.md#catalog) (119 in all). */
export const SPEC_GROUP_COUNTS: Record<EndpointGroup, number> = {
  Auth: 6,
  Networks: 6,
  Mailboxes: 7,
  IDs: 13,
  Partners: 7,
  Parcels: 15,
  Interchanges: 8,
  Callbacks: 8,
  'Carbon Copies': 5,
  Certificates: 5,
  Comms: 8,
  Users: 16,
  Keys: 4,
  Portals: 2,
  Reports: 8,
  'Status Lists': 1,
};

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * How well the wire shape is known: `exact` when the published reference gives request and
 * response; `partial` when only some fields are published (the rest pass through as unknown).
 */
export type ShapeKnowledge = 'exact' | 'partial';

/** How a list endpoint returns records, for the pagination iterator. */
export type ListShape =
  | { kind: 'array' } // bare array in `data`; stop when a page is shorter than recordsPerPage
  | { kind: 'object'; key: string }; // { totalRecords, pageNo, recordsPerPage, [key]: T[] }

export interface EndpointDef<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** Stable name used by code and `gridsync call`, e.g. `parcels.download`. */
  readonly name: string;
  readonly group: EndpointGroup;
  readonly method: HttpMethod;
  /** Reference path; path parameters in braces, named after request fields: `/v2/parcels/{parcelId}`. */
  readonly path: string;
  /** Other method/path forms the service also answers (the published alias list, docs/wire.md#aliases, docs/wire.md#catalog). */
  readonly aliases?: readonly { method: HttpMethod; path: string }[];
  /**
   * Request fields: path parameters plus the JSON body (POST/PUT/DELETE) or query string (GET).
   * Strict enums: the emulator validates requests with this schema.
   */
  readonly request: Req;
  /** The `data` of a successful response. Lenient: unknown fields and enum strings are kept. */
  readonly response: Res;
  /** false only for login and version. */
  readonly auth: boolean;
  /**
   * Safe to repeat blindly. false for uploads and creations: a retried request that may have
   * reached the service is reported to the caller instead of silently repeated.
   */
  readonly idempotent: boolean;
  readonly shape: ShapeKnowledge;
  readonly list?: ListShape;
  /** The lowest AuthLevel allowed to call it, where the spec names one (network-level ops). */
  readonly minLevel?: AuthLevel;
  /** One line for `gridsync call --list` and the README. */
  readonly summary: string;
}

/** Names of the `{param}` segments of a path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

type GroupDefaults = 'name' | 'group' | 'auth' | 'idempotent' | 'shape';

/** One entry as a group declares it: the name comes from its key, the rest defaults as `defineGroup` says. */
export type EntryInput<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> = Omit<EndpointDef<Req, Res>, GroupDefaults> &
  Partial<Pick<EndpointDef<Req, Res>, Exclude<GroupDefaults, 'name' | 'group'>>>;

/**
 * The entries of one group, named `<prefix>.<key>` after their keys (so a name cannot disagree with the
 * key code calls it by): `auth: true`, `idempotent: true` (reads and updates that set a value),
 * `shape: 'exact'` unless the entry says otherwise. Creations set `idempotent: false`.
 */
export function defineGroup<const D extends Record<string, EntryInput>>(
  group: EndpointGroup,
  prefix: string,
  entries: D,
): { readonly [K in keyof D]: EndpointDef<D[K]['request'], D[K]['response']> } {
  const defs = Object.entries(entries).map(([key, def]) => [
    key,
    { auth: true, idempotent: true, shape: 'exact', ...def, name: `${prefix}.${key}`, group },
  ]);
  return Object.fromEntries(defs) as { readonly [K in keyof D]: EndpointDef<D[K]['request'], D[K]['response']> };
}

/** An id the service numbers from 1 (ids of networks, mailboxes, users, channels, …). */
export const PositiveId = IntId.refine((n) => n > 0, 'must be positive');

/**
 * An endpoint addressed by one id in its path (`GET /v2/mailboxes/{mailboxId}`): the request is that
 * id alone, named after the path parameter (a positive int unless `id` says otherwise). GET unless the
 * entry says otherwise.
 */
export function byId<P extends string, Res extends z.ZodType, Id extends z.ZodType = typeof PositiveId>(
  def: Omit<EntryInput<z.ZodType, Res>, 'request' | 'method'> & { path: `${string}{${P}}`; method?: HttpMethod },
  id?: Id,
): EntryInput<z.ZodObject<{ [K in P]: Id }>, Res> {
  const [param] = pathParams(def.path);
  const request = z.object({ [param!]: id ?? PositiveId } as { [K in P]: Id }).loose();
  return { method: 'GET', ...def, request };
}
