/**
 * A claim refused by the folders, not by the file: moving a file out of the outbox (the rename
 * into processing/, a marker's removal) needs write and search permission on the outbox and on
 * processing/. Refused there (EACCES), every file of the folder is refused alike and none of them
 * is at fault: the file stays in the outbox, its claim waits, and the folder is named once — not a
 * report per file at every rescan, as when the refusal was taken for an unreadable file.
 */
import { GridsyncError } from '../errors/index.js';

export class OutboxFolderDeniedError extends GridsyncError {
  readonly code = 'OUTBOUND_FOLDER_DENIED';

  constructor(outbox: string, processingDir: string, cause: unknown) {
    const uid = process.getuid?.();
    super(
      `gridsync${uid === undefined ? '' : ` (uid ${uid})`} may not move files out of the outbox ${outbox} into ${processingDir} ` +
        '(EACCES): both folders need write and search (x) permission for that user; the files stay in the outbox ' +
        'and are claimed once they have it',
      { cause },
    );
  }
}
