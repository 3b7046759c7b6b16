/** Where one mailbox and direction stands in a run (the CLI draws it; the daemon fills it). */
export interface ProgressRow {
  readonly mailbox: string;
  readonly direction: 'in' | 'out';
  /** Items that reached a final state (delivered, sent, rejected, failed). */
  readonly done: number;
  /** done + what is still waiting or in flight. */
  readonly total: number;
  readonly failed: number;
  readonly deferred: number;
  readonly bytes: number;
  /** Declared bytes of everything in this cycle, when known (inbound). */
  readonly totalBytes?: number;
  /** When this direction started (ms). */
  readonly startedAt: number;
}
