/**
 * What the daemon's parts share once it is wired: the config, the journal, the mailboxes with
 * their pipelines, the abort signal of the run. The composition (daemon.ts) builds it; the drain,
 * the cycle and the reporting read it.
 */
import type { LoadedConfig } from '../config/index.js';
import { emptyInboundResult, type InboundCycleResult, type InboundPipeline } from '../inbound/index.js';
import type { JournalStore } from '../journal/index.js';
import type { Logger } from '../log.js';
import { emptyOutboundResult, type OutboundCycleResult, type OutboundPipeline } from '../outbound/index.js';

export type DaemonConfig = LoadedConfig['config'];

export interface MailboxRuntime {
  readonly name: string;
  readonly mailboxId: number;
  readonly inbound?: InboundPipeline;
  readonly outbound?: OutboundPipeline;
  /** The outbox folder, when the mailbox sends. */
  readonly outboxDir?: string;
}

/** The mailbox leases of a shared journal (`lease-keeper.ts`); absent with SQLite, where every mailbox is held. */
export interface MailboxLeases {
  holds(mailboxId: number): boolean;
  /** True once after each acquisition: the new holder finishes what the journal holds first. */
  takeFresh(mailboxId: number): boolean;
  /** The run's signal, also aborted when this mailbox's lease is lost. */
  signal(mailboxId: number, run: AbortSignal): AbortSignal;
  /**
   * Why this instance holds no mailbox now — the journal serves another service, or its last lease
   * round could not reach the journal — each cycle fails with it.
   */
  refusal(): Error | undefined;
}

export interface DaemonRuntime {
  readonly config: DaemonConfig;
  readonly logger: Logger;
  readonly journal: JournalStore;
  readonly mailboxes: readonly MailboxRuntime[];
  /** Aborted by interrupt() and at shutdown: no new items. */
  readonly signal: AbortSignal;
  readonly now: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly leases?: MailboxLeases;
}

export interface CycleTotals {
  inbound: InboundCycleResult;
  outbound: OutboundCycleResult;
}

export function emptyTotals(): CycleTotals {
  return { inbound: emptyInboundResult(), outbound: emptyOutboundResult() };
}

/** Adds every counter of `from` to `into`. */
export function addCounts<T extends object>(into: T, from: T): void {
  for (const k of Object.keys(from) as (keyof T)[]) (into[k] as number) += from[k] as number;
}
