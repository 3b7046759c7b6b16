/**
 * What ends a running daemon as its start would have been refused: the shared journal found
 * damaged while in use (`JOURNAL_SCHEMA_DAMAGED`). Retrying is no use — every step of every
 * mailbox needs the missing table or column, and a start refuses the journal too — so `run` stops
 * and exits 2 with the start's line (systemd's `RestartPreventExitStatus=2`), and `once` takes no
 * new item and exits 2. Logged once, here; the command says it on stderr.
 */
import { errorFields } from '../errors/index.js';
import type { JournalStore } from '../journal/index.js';
import type { Logger } from '../log.js';

export class FatalStop {
  private reason: Error | undefined;
  private resolve: (err: Error) => void = () => undefined;
  /** Resolves with the error once the daemon must stop. */
  readonly stopped = new Promise<Error>((r) => (this.resolve = r));

  /** The error the daemon stopped for, if it did. */
  get error(): Error | undefined {
    return this.reason;
  }

  watch(journal: JournalStore, logger: Logger): void {
    journal.onSchemaDamaged?.((err) => {
      if (this.reason) return;
      this.reason = err;
      logger.error(errorFields(err), 'the shared journal is damaged: stopping, as a start would refuse it');
      this.resolve(err);
    });
  }
}
