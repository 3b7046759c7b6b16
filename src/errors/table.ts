/**
 * The one table of error codes: for each, when it is raised, the exit code of a command that ends
 * on it, whether running again unchanged can succeed, and what the operator does. The CLI takes its
 * exit codes from here and docs/errors.md shows this table (a test holds the two equal).
 */

/** 0 all done · 1 something is left that a later run can finish · 2 the operator must change something first · 3 a bug. */
export const EXIT = { ok: 0, incomplete: 1, operator: 2, internal: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface ErrorRow {
  /** When the error is raised. */
  readonly when: string;
  /** Exit code of a command that ends on it; null where it never ends a command (internal to the emulator, a field in an error file). */
  readonly exit: ExitCode | null;
  /** Whether the same step, repeated later without any change, can succeed. */
  readonly retryable: boolean;
  readonly action: string;
}

const row = (exit: ExitCode | null, retryable: boolean, when: string, action: string): ErrorRow => ({ when, exit, retryable, action });

export const ERROR_TABLE = {
  CONFIG_INVALID: row(
    EXIT.operator,
    false,
    'the config file or a `GRIDSYNC_*` variable is invalid; the message names the key (or the variable, or the YAML line)',
    'fix the key named',
  ),
  CLI_USAGE: row(EXIT.operator, false, 'unknown option, bad argument', 'see `gridsync <command> --help`'),
  STARTUP_CONFIG: row(
    EXIT.operator,
    false,
    'the client refuses the configured service address (plain http off loopback, no credentials)',
    'fix `api.*`',
  ),
  STARTUP_JOURNAL: row(
    EXIT.operator,
    false,
    'the journal cannot be opened (unwritable folder, damaged file); the message names the file and what to do',
    'check `stateDir`; a damaged journal: "When the journal is damaged" in the operations guide',
  ),
  STARTUP_SERVICE_CHANGED: row(
    EXIT.operator,
    false,
    "the journal holds rows of another service than `api.baseUrl` names (its origin, or `embedded`): that service's parcel ids would be taken for the configured one's; the message names the journal and both services. Also a shared journal without rows while instances of its service are live on it. Said by `run`, `once`, `once --dry-run` and `redeliver`",
    "keep a journal per service (`stateDir` or `journal.url`), after finishing the old service's work with `gridsync once` against it; the same service at a new address: `gridsync journal set-service -c FILE`",
  ),
  STARTUP_FOLDERS: row(EXIT.operator, false, 'a folder is missing, unwritable, or on the wrong filesystem', 'fix the folder named'),
  STARTUP_CREDENTIALS_REJECTED: row(EXIT.operator, false, 'the service answered 401/403 to the credentials', 'check the API key or login'),
  STARTUP_MAILBOX_UNREACHABLE: row(
    EXIT.operator,
    false,
    'a configured `mailboxId` is not reachable with the key (403/404 from the service)',
    'fix the id, or use a key of a user with access to it',
  ),
  STARTUP_HTTP_PORT: row(
    EXIT.operator,
    false,
    'the health endpoint cannot listen on `http.host`:`http.port` (in use, privileged port, foreign address)',
    'stop the other process or choose another `http.port`',
  ),
  STARTUP_UNREACHABLE: row(EXIT.incomplete, true, '`once` could not reach the service', 'nothing; the next run retries'),
  STARTUP_NO_MAILBOX: row(
    EXIT.operator,
    false,
    "a mailbox has no `mailboxId` and the service did not name the session's mailbox (or has no session endpoint)",
    'set `mailboxes[].mailboxId`',
  ),
  STARTUP_STOPPED: row(EXIT.incomplete, true, 'a signal arrived while waiting for the service', 'nothing'),
  JOURNAL_LOCKED: row(
    EXIT.operator,
    false,
    'another gridsync holds the journal',
    'stop the other process, or give this one its own `stateDir`',
  ),
  JOURNAL_ILLEGAL_TRANSITION: row(
    EXIT.internal,
    false,
    'a bug: the journal refused a state change its table does not allow',
    'report it with the log line',
  ),
  JOURNAL_LEASE_LOST: row(
    EXIT.incomplete,
    true,
    "a shared (PostgreSQL) journal refused a write: another instance took over the mailbox's lease, or this one's renewal failed; the daemon goes on",
    'nothing: the new owner goes on; if it repeats, look for a host that stops for longer than the lease (swap, a VM pause)',
  ),
  JOURNAL_SERVICE_CHANGED: row(
    EXIT.operator,
    false,
    'a shared (PostgreSQL) journal was taken over, while it held no rows, by an instance configured for another service: this instance hands back its leases and its cycles fail until it is restarted',
    'give every instance on the journal the same `api.baseUrl` (or this one a journal of its own), then restart it',
  ),
  CALLBACKS_SETUP: row(
    EXIT.operator,
    false,
    'the callback credentials or registration cannot be used: an empty `callbacks.passwordFile`, an unreadable callback state in stateDir, a mailbox not registered',
    'fix the file named, or remove the state file to generate new secrets; `gridsync callbacks register`',
  ),
  CALLBACKS_TEST_FAILED: row(
    EXIT.incomplete,
    true,
    "`gridsync callbacks test`: the service's test call got no HTTP 200, or did not arrive at the receiver",
    'check the reverse proxy, firewall and `callbacks.publicUrl` (docs/callbacks.md); polling still takes every parcel',
  ),
  JOURNAL_UNAVAILABLE: row(
    EXIT.incomplete,
    true,
    'the PostgreSQL journal cannot be reached, broke off, or refused a statement (`dbCode`: SQLSTATE or socket code; 25006: the server accepts no writes, a standby or a read-only database); the message never holds the password',
    'check the database and the network; with 25006, point `journal.url` at the primary; writes resume by themselves',
  ),
  JOURNAL_SCHEMA_TOO_NEW: row(
    EXIT.operator,
    false,
    'the journal was written by a newer gridsync; it is left untouched',
    'run the newer version',
  ),
  JOURNAL_SCHEMA_DAMAGED: row(
    EXIT.operator,
    false,
    'the shared (PostgreSQL) journal lacks a table or column its schema version needs (dropped by hand, a partial restore); the message names each; nothing is created in its place. Found while running: `run` stops, `once` takes no new item',
    'restore the table from a backup of the database ("When the shared journal is damaged" in the operations guide)',
  ),
  JOURNAL_IN_USE: row(
    EXIT.operator,
    false,
    '`gridsync journal migrate` found a live lease in a PostgreSQL journal: an instance still runs',
    'stop every gridsync using that journal, then run it again',
  ),
  JOURNAL_SCHEMA_MISMATCH: row(
    EXIT.operator,
    false,
    '`gridsync journal migrate`: the two journals are at different schema versions',
    'open both with the same gridsync version first',
  ),
  GRID_API_ERROR: row(
    EXIT.incomplete,
    true,
    'the service answered an error envelope or status (`httpStatus`, `errorCode`)',
    '429/500/503 retry by themselves; others: see the error file',
  ),
  GRID_TRANSPORT_ERROR: row(
    EXIT.incomplete,
    true,
    'the network failed (`transportCode`: ECONNRESET, UND_ERR_…)',
    'retried; check connectivity if it persists',
  ),
  GRID_RESPONSE_ERROR: row(
    EXIT.incomplete,
    false,
    'the answer is not what the daemon needs to act on (`field`)',
    'report it with the log line',
  ),
  GRID_CONTENT_INTEGRITY: row(
    EXIT.incomplete,
    true,
    'a downloaded parcel failed verification (`reason`)',
    'retried, then marked failed; the service keeps the parcel',
  ),
  GRID_UPLOAD_OUTCOME_UNKNOWN: row(
    EXIT.incomplete,
    true,
    'an upload may have reached the service without an answer',
    'nothing: reconciled before any resend',
  ),
  GRID_UPLOAD_SOURCE_CHANGED: row(
    EXIT.incomplete,
    true,
    'a claimed outbox file changed size while it was uploaded',
    'nothing: the upload is abandoned; a later try sends the file only at the size it was claimed with, else errorDir (`OUTBOUND_COPY_CHANGED`); find out what writes into claimed files',
  ),
  GRID_LIMIT_EXCEEDED: row(
    EXIT.incomplete,
    true,
    'an answer went past a protective limit (`limitKey`): a body too large, a download longer than declared',
    'the item is retried next cycle; raise the limit only if the service legitimately sends that much',
  ),
  GRID_DOWNLOAD_NO_ROOM: row(
    EXIT.incomplete,
    true,
    "a download's content, as it arrives, would leave less free space than `inbox.minFreeBytes` (whatever size the service declared): stopped before writing more; the parcel is deferred (`INBOUND_DEFERRED`)",
    'free space; the parcel is downloaded again next cycle',
  ),
  GRID_CONFIRM_NOT_TAKEN: row(
    EXIT.incomplete,
    true,
    'the service answered a confirm, but not as a confirm of this parcel: a success answer naming another parcel, or a SOAP `false` while the parcel is not shown archived (`parcelId`)',
    'nothing: the parcel stays unconfirmed and the confirm is repeated (the service calls it safe to repeat)',
  ),
  GRID_CONFIG_ERROR: row(EXIT.operator, false, 'the client was constructed with settings it refuses', 'fix `api.*`'),
  GRID_JSON_STREAM: row(EXIT.incomplete, true, 'a streamed body is not valid JSON or ended early', 'retried'),
  GRID_INVALID_BASE64: row(EXIT.incomplete, true, 'parcel content is not canonical base64', 'retried, then marked failed'),
  GRID_SOAP_XML: row(
    EXIT.incomplete,
    true,
    'a SOAP message is not well-formed, not an envelope, or a value does not fit its type (`path`)',
    'retried when truncated; otherwise report it',
  ),
  GRID_SOAP_LIMIT: row(
    EXIT.incomplete,
    true,
    'a SOAP answer went past a reading limit; always reported as `GRID_LIMIT_EXCEEDED` with the `api.limits` key',
    'see `GRID_LIMIT_EXCEEDED`',
  ),
  INBOUND_NAME_COLLISION: row(EXIT.incomplete, false, '`collision: fail` and the inbox already has the name', 'move the old file away'),
  INBOUND_STAGING_LOST: row(
    EXIT.incomplete,
    true,
    "a staged download's staging file was removed (a tmp cleaner, an operator) before it was placed, and the inbox does not hold its content",
    'nothing: the parcel is downloaded again, never confirmed without its file; keep cleaners out of the staging folder',
  ),
  INBOUND_TAKEN_ELSEWHERE: row(
    null,
    false,
    "a parcel whose download had not begun is no longer on a complete pending list and the service shows it confirmed (another client or the service's web UI confirmed it, or an older journal backup was restored): its row ends `taken`, nothing is downloaded",
    'nothing, unless no one else should take parcels from this mailbox: then find who did; `gridsync redeliver` delivers it here',
  ),
  INBOUND_DEFERRED: row(
    EXIT.incomplete,
    true,
    'a local condition (disk full, inbox unwritable) stops a parcel for now',
    'free space or fix permissions',
  ),
  FILES_UNSAFE_ENTRY: row(
    EXIT.incomplete,
    false,
    'where gridsync expected a regular file or a folder it found a symlink, FIFO, device or socket (`filePath`, `found`): it was not followed or opened; an outbox file goes to errorDir with this reason, an inbox sub-folder stops the parcel',
    'find out who put it there; remove it, then requeue the file or let the parcel be placed',
  ),
  FILES_UNSAFE_PATH: row(
    EXIT.incomplete,
    false,
    'a name (from the service or a naming template) would leave its folder (`..`, `/`, an absolute path): it is refused, nothing is written outside',
    'check the naming template and the parcel named; the parcel waits',
  ),
  FILES_CROSS_FILESYSTEM: row(
    EXIT.operator,
    false,
    'a staging or processing folder is not on the filesystem of its inbox or outbox, so the final rename would not be atomic: found at start-up, or under `run` once a filesystem was mounted over the inbox or one of its sub-folders (the parcel is deferred)',
    'set `inbox.stagingDir` / `outbox.processingDir` to a folder on the same filesystem, or unmount what was mounted over the inbox',
  ),
  OUTBOUND_FILE_REPLACED: row(
    EXIT.incomplete,
    false,
    'the outbox file was replaced by another one between the readiness check and the claim',
    'check the file in errorDir; requeue it if it is the one to send',
  ),
  OUTBOUND_FOLDER_DENIED: row(
    EXIT.incomplete,
    true,
    'the outbox or `outbox.processingDir` does not let the user gridsync runs as move a file out of it (EACCES): the file stays in the outbox, its claim waits',
    'give that user write and search (x) permission on both folders; the files are claimed at the next scan',
  ),
  FILES_FOLDER_ELSEWHERE: row(
    null,
    false,
    'the path of the inbox, the outbox, sentDir or errorDir leads to another directory than at its first use (it, or a folder above it, swapped for a link): nothing is read or written there until it leads back; outbound files wait in processing/, parcels on the service',
    'find out who replaced the folder; put the outbox folder back, or restart gridsync if the new place is meant',
  ),
  OUTBOUND_COPY_REMOVED: row(
    null,
    false,
    "(errorCode in an `.error.json`) the file's claimed copy in the processing folder was removed before it was sent, and the service's outbox list does not show it: nothing was sent, and errorDir holds the report alone",
    'have the ERP export the file again if it is still to be sent',
  ),
  OUTBOUND_COPY_CHANGED: row(
    null,
    false,
    "(errorCode in an `.error.json`) the file's claimed copy in the processing folder was not the size it was claimed with when its upload was to start (cut short or grown since): nothing was sent, and errorDir holds that copy",
    'have the ERP export the file again; find out what changed the processing folder',
  ),
  OUTBOUND_NAME_NOT_UTF8: row(
    null,
    false,
    "(errorCode in an `.error.json`) the outbox file's name is not valid UTF-8, which the service cannot take",
    'rename the file, then requeue it',
  ),
  OUTBOUND_EMPTY_FILE: row(
    null,
    false,
    '(errorCode in an `.error.json`) the outbox file was empty: nothing was sent',
    'have the ERP export it again',
  ),
  OUTBOUND_TOO_LARGE: row(
    null,
    false,
    "(errorCode in an `.error.json`) the outbox file is larger than `outbox.maxBytes` (never above 2 GiB − 1, the most the service's sizes carry), or grew past it while claimed: it was not sent",
    'split it in the ERP, or raise `outbox.maxBytes` and requeue it',
  ),
  OUTBOUND_INVALID_INTERCHANGE: row(
    null,
    false,
    '(errorCode in an `.error.json`) the envelope check found the outbox file incomplete or inconsistent (a truncated export, a missing trailer, wrong counts or control numbers; the reason names which): it was not sent',
    'have the ERP export it again; a file that is right but fails the counts: `outbox.envelopeCounts: false`, then requeue it',
  ),
  OUTBOUND_DUPLICATE: row(
    null,
    false,
    '(errorCode in an `.error.json`) the same bytes were sent before, within `outbox.duplicateWindowMs` (the reason names the earlier file and parcel): it was not sent again',
    'nothing if it was an accidental second export; to send it on purpose, `gridsync requeue --force` it',
  ),
  OUTBOUND_FILE_UNMOVABLE: row(
    null,
    false,
    "(errorCode in an `.error.json`) the outbox file could be moved neither into processing/ nor into errorDir (EPERM: an immutable or append-only file, another user's file in a sticky outbox): it stays in the outbox, unsent, its report alone in errorDir, and is not claimed again until it changes or gridsync starts again",
    "make the file movable by gridsync's user (`chattr -i`; in a sticky outbox, owned by that user): it is then claimed and sent; or take it out of the outbox",
  ),
  EMULATOR_SOAP_FAULT: row(null, false, "the emulator's SOAP endpoint answers a request with a fault (internal to the emulator)", '—'),
  REDELIVER_OTHER_MAILBOX: row(
    EXIT.operator,
    false,
    '`gridsync redeliver` was given a parcel the service shows in the inbox of a mailbox the configuration does not receive for (another system takes its parcels); the message names each such parcel and its mailbox. Nothing is reset. A parcel whose record names no mailbox is not this refusal: whose it is cannot be told, so it is not reset, as one that cannot be looked up (exit 1)',
    'check the parcel ids (`gridsync status`, the inbox logs); a parcel of another configuration: run `redeliver` with that configuration',
  ),
  EMULATOR_CONFIG: row(
    EXIT.operator,
    false,
    '`gridsync emulator` refuses its options (a non-loopback host without `--expose`, or exposure with the default or a weak root key), or its data file (`--data`, `emulator.dataFile`) cannot serve: a directory, not SQLite, not writable, or a root key given for a data file with several Root users, with none, or with a user holding that key (the message names it)',
    'pass `--expose` and a root key of 16+ characters from a file or the environment; point the data file at a writable SQLite file (or a new path)',
  ),
  EMULATOR_SEED: row(
    EXIT.operator,
    false,
    "the emulator's seed file is invalid: YAML that does not parse, keys the message names as written (`mailboxes[0].mailboxId`) with what each takes, an unknown key at any level, or several Root users, none, or a user holding the key when a root key is given",
    'fix the seed file named',
  ),
  EMULATOR_REJECTED: row(null, false, 'the emulator answers a request with an error envelope (internal to the emulator)', '—'),
  INTERNAL_ERROR: row(
    EXIT.internal,
    false,
    'a bug: something gridsync itself guarantees did not hold (also any unexpected error without a code)',
    'report it with the log line; rerun with `GRIDSYNC_DEBUG=1` for the stack',
  ),
} as const satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The row of `code`, if it is one of ours (a system code such as ENOENT is not). */
export function errorRow(code: string): ErrorRow | undefined {
  return Object.hasOwn(ERROR_TABLE, code) ? ERROR_TABLE[code as ErrorCode] : undefined;
}

/** The table as docs/errors.md shows it. */
export function renderErrorTable(): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|');
  return [
    '| code | raised when | exit | retryable | what the operator does |',
    '|---|---|---|---|---|',
    ...Object.entries(ERROR_TABLE).map(
      ([code, r]: [string, ErrorRow]) =>
        `| \`${code}\` | ${cell(r.when)} | ${r.exit ?? '—'} | ${r.retryable ? 'yes' : 'no'} | ${cell(r.action)} |`,
    ),
  ].join('\n');
}
