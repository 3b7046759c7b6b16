/**
 * `{partner}` in an inbox name template: the sender's name, from (1) the operator's `partners:`
 * map, (2) the description of the sender's grid ID record on the service, (3) the grid id itself.
 *
 * The sender's grid ID usually belongs to another tenant, so the service may refuse to show its
 * record (403/404), be slow, or be down. A lookup therefore never stops or holds a parcel: it is
 * one call bounded by a deadline, its answer — or its failure — is cached for the process, and a
 * failure falls back to the grid id (or to the name learned before, so a folder does not flip
 * while the service has a bad moment). The decisions are the pure functions below; PartnerNames
 * is the thin shell that calls the service and keeps the cache.
 */
import { setMaxListeners } from 'node:events';
import { GridApiError, waitShared, type CallOptions } from '../api/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { errorFields } from '../errors/index.js';
import { sanitizeFileName } from '../files/index.js';
import { silentLogger, type Logger } from '../log.js';

/** What the process knows of one grid ID's record: its name (undefined: none known), valid until `until`. */
export interface CachedName {
  readonly name: string | undefined;
  readonly until: number;
}

export type PartnerSource = 'config' | 'service' | 'grid-id' | 'none';

export type PartnerDecision =
  { readonly kind: 'name'; readonly name: string; readonly source: PartnerSource } | { readonly kind: 'lookup'; readonly gridId: number };

/** The names `{partner}` may take: one path segment each (the template's sanitising, applied here too). */
function segment(name: string, gridId: number): string {
  return sanitizeFileName(name, String(gridId));
}

/**
 * Two names that an SMB share (or macOS) may take for one folder compare equal here: Unicode
 * compatibility forms and case are folded (`ＡＣＭＥ`, `acme`, `ACME` are one folder there).
 */
export function folderKey(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * The folder a name learnt from the service gives `gridId`. Anyone can write any description on
 * their own grid ID record, so a learnt name never takes a folder that is another's: a configured
 * partner's, the unknown sender's, another grid id's (a number), or one another grid ID took first
 * (`claims`: folder key → grid id). Such a name is suffixed with the grid id; should even that be
 * taken, the grid id alone is the folder (no other sender can take a number).
 */
export function learntFolder(
  gridId: number,
  learnt: string,
  known: { configured: ReadonlyMap<number, string>; claims: ReadonlyMap<string, number> },
): string {
  const own = String(gridId);
  const takenByOther = (folder: string): boolean => {
    const key = folderKey(folder);
    if (/^\d+$/.test(key)) return key !== own;
    if (key === folderKey(DEFAULTS.partners.unknownName)) return true;
    const claimant = known.claims.get(key);
    if (claimant !== undefined && claimant !== gridId) return true;
    for (const [id, name] of known.configured) if (folderKey(segment(name, id)) === key) return true;
    return false;
  };
  const name = segment(learnt, gridId);
  if (!takenByOther(name)) return name;
  const suffixed = segment(`${name}-${own}`, gridId);
  return suffixed.endsWith(`-${own}`) && !takenByOther(suffixed) ? suffixed : own;
}

/**
 * Which name a grid id gets now, or that the service must be asked first. `canLookup` is false
 * when there is no service call to make (a transport without one): the grid id is used.
 */
export function decidePartnerName(
  gridId: number | null | undefined,
  known: {
    configured: ReadonlyMap<number, string>;
    cached: CachedName | undefined;
    canLookup: boolean;
    now: number;
    /** Folders learnt names took so far (learntFolder); none: no other grid ID has one. */
    claims?: ReadonlyMap<string, number>;
  },
): PartnerDecision {
  if (gridId === null || gridId === undefined || !Number.isSafeInteger(gridId) || gridId <= 0)
    return { kind: 'name', name: DEFAULTS.partners.unknownName, source: 'none' };
  const configured = known.configured.get(gridId);
  if (configured !== undefined) return { kind: 'name', name: segment(configured, gridId), source: 'config' };
  const cached = known.cached;
  if (cached && (cached.until > known.now || !known.canLookup)) {
    return cached.name !== undefined
      ? {
          kind: 'name',
          name: learntFolder(gridId, cached.name, { configured: known.configured, claims: known.claims ?? new Map() }),
          source: 'service',
        }
      : { kind: 'name', name: String(gridId), source: 'grid-id' };
  }
  if (known.canLookup) return { kind: 'lookup', gridId };
  return { kind: 'name', name: String(gridId), source: 'grid-id' };
}

/**
 * What the cache holds after a lookup. An answer is kept for `ttlMs`; a failure (refused, not
 * found, timed out) for `failureTtlMs`, keeping the name learned before, if any.
 */
export function afterLookup(
  previous: CachedName | undefined,
  outcome: { ok: true; name: string | undefined } | { ok: false },
  now: number,
  ttl: { ttlMs: number; failureTtlMs: number },
): CachedName {
  if (outcome.ok) return { name: outcome.name, until: now + ttl.ttlMs };
  return { name: previous?.name, until: now + ttl.failureTtlMs };
}

export type PartnerLookup = (gridId: number, options: CallOptions) => Promise<string | undefined>;

export interface PartnerNamesOptions {
  /** The service call (MailboxTransport.partnerName); absent: configured names and grid ids only. */
  readonly lookup?: PartnerLookup | undefined;
  /** `partners:` from the config. */
  readonly configured?: ReadonlyMap<number, string>;
  readonly ttlMs?: number;
  readonly failureTtlMs?: number;
  /** One lookup's deadline. */
  readonly timeoutMs?: number;
  readonly now?: () => number;
  readonly logger?: Logger;
  /**
   * The process's stop: a lookup under way is given up (the service's client cannot close while
   * one of its requests waits for an answer: `once` waited out the lookup's deadline to exit).
   */
  readonly signal?: AbortSignal;
}

/** The `partners:` config section (grid id as text → name) as the map PartnerNames takes. */
export function configuredPartners(section: Readonly<Record<string, string>> | undefined): Map<number, string> {
  return new Map(Object.entries(section ?? {}).map(([id, name]) => [Number(id), name]));
}

/** A lookup under way, with the parcels waiting on it; `ctl` gives it up. */
interface InFlight {
  readonly done: Promise<void>;
  readonly ctl: AbortController;
  waiters: number;
}

/** Partner names for one process: one per daemon, shared by every mailbox's inbound pipeline. */
export class PartnerNames {
  private readonly cache = new Map<number, CachedName>();
  /** Lookups in flight: parcels of one partner downloaded in parallel share one call. */
  private readonly inFlight = new Map<number, InFlight>();
  /** Folder key → the grid id whose learnt name took that folder in this process (first come). */
  private readonly claims = new Map<string, number>();
  private readonly configured: ReadonlyMap<number, string>;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly ttl: { ttlMs: number; failureTtlMs: number };
  private readonly timeoutMs: number;

  constructor(private readonly options: PartnerNamesOptions = {}) {
    this.configured = options.configured ?? new Map();
    this.now = options.now ?? Date.now;
    this.logger = (options.logger ?? silentLogger).child({ component: 'partners' });
    this.ttl = {
      ttlMs: options.ttlMs ?? DEFAULTS.partners.cacheTtlMs,
      failureTtlMs: options.failureTtlMs ?? DEFAULTS.partners.failureTtlMs,
    };
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.partners.lookupTimeoutMs;
    // One listener per lookup under way (a cycle may ask for many partners at once).
    if (options.signal) setMaxListeners(0, options.signal);
  }

  /**
   * The name for a sender's grid id, asking the service at most once per cache period and never for
   * longer than the deadline. A caller whose `signal` aborts (a stop, a lost lease) stops waiting at
   * once with its reason; the lookup goes on for the other parcels waiting on it. The last to stop
   * so gives the lookup up: nobody would use its answer (every parcel of a lost lease left), and
   * run to its deadline it would tell and cache a failure nobody met.
   */
  async nameOf(gridId: number | null | undefined, signal?: AbortSignal): Promise<string> {
    const first = this.decide(gridId, true);
    if (first.kind === 'name') return first.name;
    const id = first.gridId;
    let pending = this.inFlight.get(id);
    if (!pending) {
      const ctl = new AbortController();
      const entry: InFlight = {
        ctl,
        waiters: 0,
        done: this.lookup(id, ctl).finally(() => {
          if (this.inFlight.get(id) === entry) this.inFlight.delete(id);
        }),
      };
      this.inFlight.set(id, (pending = entry));
    }
    pending.waiters++;
    try {
      await waitShared(pending.done, signal);
    } finally {
      if (--pending.waiters === 0 && signal?.aborted && this.inFlight.get(id) === pending) {
        this.inFlight.delete(id);
        pending.ctl.abort(signal.reason);
      }
    }
    const after = this.decide(gridId, false);
    return after.kind === 'name' ? after.name : String(first.gridId);
  }

  /** The name as known now, without asking the service (for the post-delivery hook's environment). */
  known(gridId: number | null | undefined): string {
    const d = this.decide(gridId, false);
    return d.kind === 'name' ? d.name : String(gridId);
  }

  private decide(gridId: number | null | undefined, canLookup: boolean): PartnerDecision {
    const decision = decidePartnerName(gridId, {
      configured: this.configured,
      cached: gridId === null || gridId === undefined ? undefined : this.cache.get(gridId),
      canLookup: canLookup && this.options.lookup !== undefined,
      now: this.now(),
      claims: this.claims,
    });
    if (decision.kind === 'name' && decision.source === 'service' && typeof gridId === 'number') {
      const key = folderKey(decision.name);
      if (!this.claims.has(key)) this.claims.set(key, gridId);
    }
    return decision;
  }

  /** One bounded call; whatever happens, the cache holds an entry afterwards and nothing throws. */
  private async lookup(gridId: number, ctl: AbortController): Promise<void> {
    const call = this.options.lookup as PartnerLookup;
    const stop = this.options.signal;
    const giveUp = (): void => ctl.abort(stop?.reason);
    stop?.addEventListener('abort', giveUp, { once: true });
    if (stop?.aborted) giveUp();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    const given = new Promise<'given-up'>((resolve) => ctl.signal.addEventListener('abort', () => resolve('given-up'), { once: true }));
    let outcome: { ok: true; name: string | undefined } | { ok: false };
    try {
      const answer = await Promise.race([call(gridId, { signal: ctl.signal }).then((name) => ({ name })), deadline, given]);
      if (answer === 'given-up') return; // stopping, or nobody waits: nothing to tell, nothing worth caching
      if (answer === 'timeout') {
        outcome = { ok: false };
        this.logger.warn(
          { gridId, timeoutMs: this.timeoutMs },
          'no answer about the partner’s grid ID in time; its parcels use the grid id as {partner}',
        );
      } else outcome = { ok: true, name: answer.name };
    } catch (err) {
      if (ctl.signal.aborted) return;
      outcome = { ok: false };
      // A sender's record is usually another tenant's: 403/404 is the expected answer, not a fault.
      const expected = err instanceof GridApiError && (err.httpStatus === 403 || err.httpStatus === 404);
      this.logger[expected ? 'info' : 'warn'](
        { gridId, ...errorFields(err) },
        'the service does not show the partner’s grid ID record; its parcels use the grid id as {partner} (partners: in the config names it)',
      );
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', giveUp);
      ctl.abort();
    }
    const previous = this.cache.get(gridId);
    this.cache.set(gridId, afterLookup(previous, outcome, this.now(), this.ttl));
  }
}
