/**
 * The config file's schema. Its defaults come from ./defaults.ts, the one place defaults live. Every key is documented in
 * config/gridsync.example.yaml. Numbers and booleans also accept strings, so that env overrides
 * (GRIDSYNC_…) and YAML parse alike.
 */
import { z } from 'zod';
import { SENT_TEMPLATE_VARIABLES, TEMPLATE_VARIABLES } from '../files/index.js';
import { DEFAULTS } from './defaults.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `30s`, `5m`, `1h`, `7d`, or a number of milliseconds. */
export const Duration = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) {
    ctx.addIssue({ code: 'custom', message: `expected a duration such as 500ms, 30s, 5m, 1h or 7d, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return Number(m[1]) * (UNITS[m[2] ?? 'ms'] ?? 1);
});

/** The longest delay a Node timer takes: a longer one fires at once (a poll or rescan loop without pause). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration that waits on a timer: at most MAX_TIMER_MS (~24.8 days). */
const TimerDuration = Duration.pipe(
  z.number().max(MAX_TIMER_MS, { message: `at most ${MAX_TIMER_MS} ms (~24.8 days): a longer timer would fire at once` }),
);

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const bool = z.union([z.boolean(), z.stringbool()]);

/** Transfers at once: `adaptive` (grows while latency stays flat, backs off on 429/503) or a fixed number 1–64. */
const Concurrency = z.union([z.number(), z.string()]).transform((v, ctx): 'adaptive' | number => {
  if (v === 'adaptive') return v;
  const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
  if (Number.isInteger(n) && n >= 1 && n <= 64) return n;
  ctx.addIssue({ code: 'custom', message: `expected "adaptive" or a number from 1 to 64, got ${JSON.stringify(v)}` });
  return z.NEVER;
});

const OCTAL_MODE = 'expected an octal mode such as "0640"';
/**
 * File mode as octal digits (`"0640"`; the config file's loader hands an unquoted 0640 on as those
 * digits) or a number: permission bits only, so a decimal 640 taken for a mode is refused.
 */
const FileMode = z
  .union([z.number().int().min(0, OCTAL_MODE).max(0o777, OCTAL_MODE), z.string().regex(/^0?[0-7]{3}$/, OCTAL_MODE)])
  .transform((v) => (typeof v === 'number' ? v : Number.parseInt(v, 8)));

/** A naming template whose `{variables}` are all among `allowed` (a typo must not silently produce odd names). */
const template = (allowed: readonly string[]) =>
  z
    .string()
    .min(1)
    .refine((t) => [...t.matchAll(/\{(\w+)\}/g)].every((m) => allowed.includes(m[1] as string)), {
      message: `unknown variable; allowed: ${allowed.map((v) => `{${v}}`).join(' ')}`,
    });

/**
 * `partners:` — grid id → the name `{partner}` gives that trading partner's parcels. It wins over
 * the service's record. A name is one folder name: no path separators, no control characters.
 */
const Partners = z.record(
  z.string().regex(/^[1-9]\d{0,15}$/, 'expected a grid id (a positive integer) as the key'),
  z
    .string()
    .trim()
    .min(1, 'expected a non-empty name')
    .max(200, 'at most 200 characters')
    .refine((n) => !/[/\\\u0000-\u001f\u007f]/.test(n), 'one folder name: no "/", "\\" or control characters')
    .refine((n) => !/^\.+$/.test(n), 'not "." or ".."'),
);

export const InboxSchema = z
  .object({
    dir: z.string().min(1),
    nameTemplate: template(TEMPLATE_VARIABLES).default(DEFAULTS.inbox.nameTemplate),
    collision: z.enum(['unique', 'overwrite', 'fail']).default(DEFAULTS.inbox.collision),
    doneMarker: bool.default(DEFAULTS.inbox.doneMarker),
    doneSuffix: z.string().min(1).default(DEFAULTS.inbox.doneSuffix),
    fileMode: FileMode.optional(),
    group: z.union([z.number().int(), z.string().min(1)]).optional(),
    concurrency: Concurrency.default(DEFAULTS.inbox.concurrency),
    /** The most downloads at once an adaptive concurrency grows to. */
    maxConcurrency: int(1, 256).default(DEFAULTS.inbox.maxConcurrency),
    maxAttempts: int(1).default(DEFAULTS.inbox.maxAttempts),
    redelivery: z.enum(['deliver', 'ignore']).default(DEFAULTS.inbox.redelivery),
    minFreeBytes: int(0).default(DEFAULTS.inbox.minFreeBytes),
    stagingDir: z.string().min(1).optional(),
  })
  .strict();

export const OutboxSchema = z
  .object({
    dir: z.string().min(1),
    sentDir: z.string().min(1).optional(),
    archive: z.enum(['move', 'delete']).default(DEFAULTS.outbox.archive),
    sentTemplate: template(SENT_TEMPLATE_VARIABLES).default(DEFAULTS.outbox.sentTemplate),
    errorDir: z.string().min(1),
    /** Delete files in sentDir / errorDir older than this many days (by mtime); absent = keep for ever. */
    sentRetentionDays: int(1).optional(),
    errorRetentionDays: int(1).optional(),
    stableMs: TimerDuration.default(DEFAULTS.outbox.stableMs),
    readiness: z.enum(['stable', 'marker']).default(DEFAULTS.outbox.readiness),
    markerSuffix: z.string().min(1).default(DEFAULTS.outbox.markerSuffix),
    ignore: z.array(z.string()).default([...DEFAULTS.outbox.ignore]),
    usePolling: bool.default(DEFAULTS.outbox.usePolling),
    rescanMs: TimerDuration.default(DEFAULTS.outbox.rescanMs),
    concurrency: Concurrency.default(DEFAULTS.outbox.concurrency),
    /** The most uploads at once an adaptive concurrency grows to. */
    maxConcurrency: int(1, 256).default(DEFAULTS.outbox.maxConcurrency),
    maxAttempts: int(1).default(DEFAULTS.outbox.maxAttempts),
    gridIdFrom: int(1).optional(),
    gridIdTo: int(1).optional(),
    validateEnvelope: bool.default(DEFAULTS.outbox.validateEnvelope),
    envelopeCounts: bool.default(DEFAULTS.outbox.envelopeCounts),
    maxBytes: int(1).optional(),
    duplicates: z.enum(['reject', 'allow']).default(DEFAULTS.outbox.duplicates),
    duplicateWindowMs: Duration.default(DEFAULTS.outbox.duplicateWindowMs),
    processingDir: z.string().min(1).optional(),
  })
  .strict()
  .refine((o) => o.archive === 'delete' || o.sentDir !== undefined, {
    message: 'sentDir is required unless archive is "delete"',
    path: ['sentDir'],
  })
  .refine((o) => (o.gridIdFrom === undefined) === (o.gridIdTo === undefined), {
    message: 'give both gridIdFrom and gridIdTo, or neither',
    path: ['gridIdTo'],
  });

export const MailboxSchema = z
  .object({
    mailboxId: int(1).optional(),
    name: z
      .string()
      .regex(/^[\w.-]+$/, 'letters, digits, _ . - only')
      .optional(),
    inbox: InboxSchema.optional(),
    outbox: OutboxSchema.optional(),
  })
  .strict()
  .refine((m) => m.inbox !== undefined || m.outbox !== undefined, { message: 'a mailbox needs an inbox, an outbox, or both' });

export const ConfigSchema = z
  .object({
    api: z
      .object({
        /** A URL (without /v2), or `embedded`: start the emulator in-process. */
        baseUrl: z.union([z.literal('embedded'), z.url({ protocol: /^https?$/, error: 'expected an http(s) URL or "embedded"' })]),
        /** The service interface: `rest` (v2, JSON) or `soap` (4.1; baseUrl is the host, or the full …/GridOS.asmx address). */
        protocol: z.enum(['rest', 'soap']).default('rest'),
        apiKey: z.string().min(1).optional(),
        apiKeyFile: z.string().min(1).optional(),
        login: z.string().min(1).optional(),
        password: z.string().min(1).optional(),
        passwordFile: z.string().min(1).optional(),
        allowInsecureHttp: bool.default(DEFAULTS.api.allowInsecureHttp),
        maxAttempts: int(1, 10).default(DEFAULTS.api.maxAttempts),
        connections: int(1, 128).default(DEFAULTS.api.connections),
        timeouts: z
          .object({
            connectMs: TimerDuration.default(DEFAULTS.api.timeouts.connectMs),
            headersMs: TimerDuration.default(DEFAULTS.api.timeouts.headersMs),
            bodyMs: TimerDuration.default(DEFAULTS.api.timeouts.bodyMs),
            callMs: TimerDuration.default(DEFAULTS.api.timeouts.callMs),
          })
          .strict()
          .prefault({}),
        limits: z
          .object({
            maxBodyBytes: int(1024).default(DEFAULTS.api.limits.maxBodyBytes),
            maxListEntries: int(1).default(DEFAULTS.api.limits.maxListEntries),
            minBytesPerSecond: int(0).default(DEFAULTS.api.limits.minBytesPerSecond),
            rateWindowMs: TimerDuration.default(DEFAULTS.api.limits.rateWindowMs),
          })
          .strict()
          .prefault({}),
      })
      .strict(),
    emulator: z
      .object({
        dataFile: z.string().min(1).optional(),
        port: int(0, 65535).default(DEFAULTS.emulator.port),
        rootKey: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    stateDir: z.string().min(1),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(DEFAULTS.log.level),
        /** `auto`: pretty when stdout is a terminal. */
        pretty: z.union([z.literal('auto'), bool]).default(DEFAULTS.log.pretty),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        enabled: bool.default(DEFAULTS.http.enabled),
        host: z.string().default(DEFAULTS.http.host),
        port: int(0, 65535).default(DEFAULTS.http.port),
      })
      .strict()
      .prefault({}),
    schedule: z
      .object({
        poll: TimerDuration.default(DEFAULTS.schedule.pollMs),
        cron: z.array(z.string().min(1)).optional(),
        timezone: z.string().optional(),
        /** `continuous`: watch outboxes all the time; `windows`: send only when a cron window fires. */
        outbound: z.enum(['continuous', 'windows']).default(DEFAULTS.schedule.outbound),
        /** With windows: fetch inbound once more this long after a window (its acknowledgments); 0 = off. */
        windowFollowUp: TimerDuration.default(DEFAULTS.schedule.windowFollowUpMs),
      })
      .strict()
      .prefault({}),
    retention: z
      .object({ journalDays: int(1).default(DEFAULTS.retention.journalDays) })
      .strict()
      .prefault({}),
    /** Unset: the embedded SQLite journal in stateDir. A `postgres://` URL: one journal shared by several instances. */
    journal: z
      .object({
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\//i, { error: 'expected a postgres:// URL' })
          .optional(),
        /** A file holding the URL (it carries the database password). */
        urlFile: z.string().min(1).optional(),
        lease: TimerDuration.default(DEFAULTS.journal.leaseMs),
        renew: TimerDuration.default(DEFAULTS.journal.renewMs),
      })
      .strict()
      .prefault({}),
    /** This instance's name among those sharing a journal; default the host name and the pid. */
    instance: z
      .object({ name: z.string().min(1).optional() })
      .strict()
      .prefault({}),
    /** false: a missing folder stops start-up instead of being created (an unmounted share must not fill the local disk). */
    createDirs: bool.default(true),
    shutdownTimeout: TimerDuration.default(DEFAULTS.shutdownTimeoutMs),
    /**
     * Commands run after each delivered file, as argv (no shell): `afterReceive` once a parcel is
     * placed and confirmed, `afterSend` once a file is uploaded and archived. They learn the item
     * from GRIDSYNC_HOOK_* variables; a failure is logged and never touches the file.
     */
    hooks: z
      .object({
        afterReceive: z.array(z.string().min(1)).min(1).optional(),
        afterSend: z.array(z.string().min(1)).min(1).optional(),
        timeout: TimerDuration.default(DEFAULTS.hooks.timeoutMs),
        concurrency: int(1, 64).default(DEFAULTS.hooks.concurrency),
      })
      .strict()
      .prefault({}),
    /**
     * The receiver of the service's callbacks (webhooks): a hint to look now, never the truth —
     * polling at `schedule.poll` stays. Absent: polling alone.
     */
    callbacks: z
      .object({
        /** host:port the receiver binds (its own port, not the metrics one). */
        listen: z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, such as 127.0.0.1:9470'),
        /** What the service calls; gridsync appends /<mailboxId>/<secret> per mailbox. */
        publicUrl: z.url({ protocol: /^https$/, error: 'expected an https:// URL (the service calls nothing else)' }),
        /** Without it the receiver speaks plain HTTP (behind a TLS-terminating proxy). */
        tls: z
          .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
          .strict()
          .optional(),
        /**
         * How the service presents the credentials: `basic` sends the password with every call (TLS
         * hides it); `digest` proves it against a nonce the receiver issued, so it never crosses the wire.
         */
        auth: z.enum(['basic', 'digest']).default(DEFAULTS.callbacks.auth),
        /** The user the service sends. */
        username: z
          .string()
          .regex(/^[^:\s]+$/, 'no colon or white space')
          .default(DEFAULTS.callbacks.username),
        /** A file holding the password; absent: one is generated and kept in stateDir. */
        passwordFile: z.string().min(1).optional(),
        /**
         * The service's REST root (without /v2) the callbacks are registered through when
         * api.protocol is soap (SOAP publishes no callback operations); default: the SOAP
         * address's origin. Unused with rest.
         */
        restUrl: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
      })
      .strict()
      .optional(),
    /** Trading-partner names by grid id, for `{partner}` in inbox name templates (before the service's records). */
    partners: Partners.optional(),
    once: z
      .object({ drainTimeout: TimerDuration.default(DEFAULTS.once.drainTimeoutMs) })
      .strict()
      .prefault({}),
    mailboxes: z.array(MailboxSchema).min(1, 'at least one mailbox is required'),
  })
  .strict();

export type Config = z.output<typeof ConfigSchema>;
export type MailboxConfig = z.output<typeof MailboxSchema>;
/** The sections the pipelines and hooks are built from: their option types derive from these. */
export type InboxSettings = z.output<typeof InboxSchema>;
export type OutboxSettings = z.output<typeof OutboxSchema>;
export type HookSettings = Config['hooks'];
