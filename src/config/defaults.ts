/**
 * Every default gridsync uses, in one place: the config schema fills omitted keys from here, and
 * modules that are also constructed without a config (tests, `gridsync call`, the library) fall
 * back to the same values. This file imports nothing, so any layer may read it.
 */

const MiB = 1024 * 1024;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;

export const DEFAULTS = {
  /** Mode of files gridsync creates (parcels, markers, error reports): the ERP's group may read. */
  fileMode: 0o640,
  inbox: {
    nameTemplate: '{fileName}',
    collision: 'unique',
    doneMarker: false,
    doneSuffix: '.done',
    /** Downloads at once: adaptive between 1 and maxConcurrency (see src/api/concurrency-limit.ts), or a fixed number. */
    concurrency: 'adaptive',
    maxConcurrency: 64,
    maxAttempts: 5,
    redelivery: 'deliver',
    /** Free space kept beyond a parcel's declared size before it is downloaded. */
    minFreeBytes: 64 * MiB,
  },
  outbox: {
    archive: 'move',
    sentTemplate: '{fileName}',
    /** A file is finished when its size and mtime have not changed for this long. */
    stableMs: 2 * SECOND,
    readiness: 'stable',
    markerSuffix: '.done',
    ignore: ['*.tmp', '*.part', '~*', '.*'],
    usePolling: false,
    rescanMs: 30 * SECOND,
    /** Uploads at once, as inbox.concurrency. */
    concurrency: 'adaptive',
    maxConcurrency: 64,
    maxAttempts: 10,
    validateEnvelope: true,
    /** With validateEnvelope: also the GS/GE, ST/SE, UNG/UNE, UNH/UNT trailers and the IEA01/UNZ01 counts. */
    envelopeCounts: true,
    duplicates: 'reject',
    duplicateWindowMs: 7 * DAY,
    /** Reconciliation of an unknown upload outcome looks this far before the attempt (service clock skew). */
    reconcileSlackMs: 10 * MINUTE,
  },
  api: {
    allowInsecureHttp: false,
    /** Attempts per request for the retryable failures (429, 500, 503, network). */
    maxAttempts: 3,
    /** Requests in flight for the whole process at most; the adaptive concurrencies stay below (queueing shows as latency). */
    connections: 64,
    /** callMs: a whole non-streamed call (answer included); a trickling answer must not hang a cycle. */
    timeouts: { connectMs: 10 * SECOND, headersMs: 60 * SECOND, bodyMs: 60 * SECOND, callMs: 2 * MINUTE },
    limits: {
      /** Largest non-streamed answer (lists, records); a body past it is refused, not buffered. */
      maxBodyBytes: 32 * MiB,
      /** Records of one list taken per cycle (the rest wait for the next cycle and cost nothing). */
      maxListEntries: 5000,
      /** A streamed transfer slower than this over a whole window is broken off (slowloris). */
      minBytesPerSecond: 1024,
      rateWindowMs: 30 * SECOND,
      /** Sizes on the wire are 32-bit: a parcel without a declared size is cut off here. */
      maxParcelBytes: 2 * 1024 * MiB - 1,
    },
  },
  /** `gridsync once` repeats cycles while transient failures leave work, for at most this long. */
  once: { drainTimeoutMs: 5 * MINUTE },
  emulator: { port: 0 },
  log: { level: 'info', pretty: 'auto' },
  http: { enabled: false, host: '127.0.0.1', port: 9464 },
  /** windowFollowUpMs: after a cron window, inbound runs once more this much later (its acknowledgments). */
  schedule: { pollMs: 30 * SECOND, outbound: 'continuous', windowFollowUpMs: 10 * MINUTE },
  retention: { journalDays: 90 },
  /** A PostgreSQL journal's mailbox leases: how long one lasts, how often its holder renews it. */
  journal: { leaseMs: 10 * SECOND, renewMs: 3 * SECOND },
  /** In-flight transfers get this long after SIGTERM before the process exits like a crash. */
  shutdownTimeoutMs: 30 * SECOND,
  /** Trading-partner names for `{partner}` in inbox name templates. */
  partners: {
    /** A name read from the service is reused for this long before it is asked again. */
    cacheTtlMs: 60 * MINUTE,
    /** A grid ID whose record could not be read is not asked about again for this long (the grid id is used). */
    failureTtlMs: 15 * MINUTE,
    /** One lookup waits at most this long (never longer than api.timeouts.callMs); then the grid id is used. */
    lookupTimeoutMs: 5 * SECOND,
    /** `{partner}` of a parcel whose sender's grid id the service did not send. */
    unknownName: 'unknown',
  },
  hooks: {
    /** A post-delivery command still running after this long is killed (the file stays where it is). */
    timeoutMs: 60 * SECOND,
    /** Commands running at once; more wait their turn (a burst must not fork thousands of processes). */
    concurrency: 4,
  },
  /** The callback receiver (webhooks of the service). */
  callbacks: {
    auth: 'basic',
    username: 'gridsync',
    /** A call's body is a small JSON object; anything larger is refused unread. */
    maxBodyBytes: 64 * 1024,
    /** The request line and headers, then the body, must arrive within these. */
    headersTimeoutMs: 5 * SECOND,
    bodyTimeoutMs: 5 * SECOND,
    /** Open connections at once; more are dropped by the kernel's accept, never queued in memory. */
    maxConnections: 256,
    /**
     * Of those, what one address may hold: a forger that reopens each socket its deadlines cut
     * kept all of them, and the service's calls were dropped with the rest.
     */
    maxConnectionsPerPeer: 32,
    /** At most one cycle per this long per mailbox is started by callbacks (a flood is not a burst of calls). */
    minTriggerGapMs: SECOND,
    /** A parcel placed before its call arrived is not missed if the call comes within this long. */
    announceGraceMs: 10 * SECOND,
    /** Parcels in a row that no callback announced before /readyz and doctor say the calls do not arrive. */
    missedBeforeWarning: 3,
    /** A Digest nonce the receiver issued is good this long, then the service is asked to take a fresh one. */
    digestNonceTtlMs: 60 * SECOND,
    /** Digest nonces held at once; past it the oldest is forgotten (memory stays bounded under a flood). */
    digestMaxNonces: 1024,
  },
} as const;

/** Consecutive cycles with work left over and nothing delivered before a direction counts as stuck. */
export const STUCK_AFTER_CYCLES = 3;

/** `gridsync doctor` waits at most this long for one answer of the service… */
export const DOCTOR_CALL_TIMEOUT_MS = 8_000;
/** …and this long for all its service checks together, whatever the service does. */
export const DOCTOR_SERVICE_BUDGET_MS = 12_000;
/** A service check still unanswered after this long says what it waits for (a prompt answer says nothing). */
export const DOCTOR_WAIT_NOTICE_MS = 2_000;
