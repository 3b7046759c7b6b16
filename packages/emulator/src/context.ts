/**
 * What every emulator handler gets: the store, the caller, the validated request, the clock, and
 * the errors that become the envelope's errorCode and HTTP status (docs/wire.md#errors).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GridsyncError } from '@gridsync/protocol/errors';
import type { EndpointDef } from '@gridsync/protocol/catalog';
import { AUTH_LEVELS, authRank, type AuthLevel, type ErrorCode } from '@gridsync/protocol/wire';
import type { FaultInjector, FaultPlan } from './faults.js';
import type { EmulatorStore, ParcelRow, UserRow } from './store.js';

export class EmulatorError extends GridsyncError {
  readonly code = 'EMULATOR_REJECTED';
  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode | null,
    message: string,
  ) {
    super(message);
  }
}

export const invalidParameter = (message: string): EmulatorError => new EmulatorError(400, 'InvalidParameter', message);
export const objectNotFound = (message: string): EmulatorError => new EmulatorError(404, 'ObjectNotFound', message);
export const accessDenied = (message: string): EmulatorError => new EmulatorError(403, 'AccessDenied', message);
export const duplicateObject = (message: string): EmulatorError => new EmulatorError(400, 'DuplicateObject', message);

export interface EmulatorSettings {
  readonly tokenLifetimeMs: number;
  readonly maxUploadBytes: number;
  /** Legacy mode (docs/wire.md#legacy-download): download hides a parcel from the pending list until redelivery. */
  readonly legacyDownloadMode: boolean;
  readonly redeliverAfterMs: number;
  /** Delay before the demo partner acknowledges an interchange. */
  readonly acknowledgeDelayMs: number;
  /** Gaps between callback delivery attempts (docs/wire.md#callbacks: 1 s, 5 s, 25 s). */
  readonly callbackRetryDelaysMs: readonly number[];
  /** The SOAP endpoint (soap/ here): session idle timeout, open sessions per user, a parcel id offset to test ids beyond 2^53, most parcels per ParcelInBox answer. */
  readonly soap?: {
    readonly sessionTimeoutS?: number;
    readonly maxSessionsPerUser?: number;
    readonly parcelIdOffset?: string;
    readonly inboxCap?: number;
  };
}

export interface World {
  readonly store: EmulatorStore;
  readonly settings: EmulatorSettings;
  readonly now: () => number;
  /** The fault rules, for requests to the emulator and for its own callback deliveries. */
  readonly faults: FaultInjector;
  /** Schedules work after the response (the demo partner's acknowledgments); tracked for close(). */
  later(fn: () => void | Promise<void>, delayMs: number): void;
}

export interface HandlerContext {
  readonly world: World;
  readonly endpoint: EndpointDef;
  /** The request validated with the endpoint's request schema (path params, query or JSON body). */
  readonly input: Record<string, unknown>;
  readonly caller: UserRow | null;
  readonly req: IncomingMessage;
  readonly plan: FaultPlan;
}

/** A handler returns the envelope's `data` (and optional `message`), or writes a streamed reply itself. */
export type HandlerResult =
  { readonly data: unknown; readonly message?: string } | { readonly stream: (res: ServerResponse) => Promise<void> };

export type Handler = (ctx: HandlerContext) => HandlerResult | Promise<HandlerResult>;

export const iso = (ms: number): string => new Date(ms).toISOString();

export function levelOf(user: UserRow): AuthLevel {
  return (AUTH_LEVELS as readonly string[]).includes(user.auth_level) ? (user.auth_level as AuthLevel) : 'General';
}

export const atLeast = (user: UserRow, level: AuthLevel): boolean => authRank(levelOf(user)) <= authRank(level);

/** Root, TechOps, NetOps see everything; network levels their network; the rest their mailbox. */
export function canSeeMailbox(world: World, caller: UserRow, mailboxId: number): boolean {
  const mb = world.store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as
    { network_id: number } | undefined;
  if (!mb) return false;
  if (atLeast(caller, 'NetOps')) return true;
  if (atLeast(caller, 'NetworkUser')) return mb.network_id === caller.network_id;
  return mailboxId === caller.mailbox_id;
}

export function canSeeNetwork(caller: UserRow, networkId: number): boolean {
  return atLeast(caller, 'NetOps') || networkId === caller.network_id;
}

/** `mailboxId` omitted or 0 means the caller's own (docs/wire.md#authentication); another tenant's is not found. */
export function resolveMailbox(ctx: HandlerContext, requested: unknown): number {
  const caller = ctx.caller as UserRow;
  const id = typeof requested === 'number' && requested !== 0 ? requested : caller.mailbox_id;
  if (!canSeeMailbox(ctx.world, caller, id)) throw objectNotFound(`mailbox ${id} not found`);
  return id;
}

export function visibleParcel(ctx: HandlerContext, parcelId: number): ParcelRow {
  const p = ctx.world.store.parcel(parcelId);
  if (!p || !canSeeMailbox(ctx.world, ctx.caller as UserRow, p.mailbox_id)) throw objectNotFound(`parcel ${parcelId} not found`);
  return p;
}
