/**
 * The daemon: wires config, journal, client (or the embedded emulator), and the pipelines of every
 * mailbox; runs schedules (interval or cron windows, cycles never overlap); survives an unreachable
 * service or expired credentials by backing off and showing unready; shuts down within a deadline.
 *
 * Cleanup follows graphile-worker: every resource registers its release, and close() runs them all
 * in reverse order even when one fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { GridApiError, GridClient, GridConfigError, GridTransportError, SoapClient, type MailboxTransport } from '../api/index.js';
import type { LoadedConfig } from '../config/index.js';
import { errorFields, GridsyncError } from '../errors/index.js';
import { EventBus, type PipelineEvents } from '../events/index.js';
import { startEmulator } from '../emulator/index.js';
import { configuredPartners, emptyInboundResult, InboundPipeline, PartnerNames, type InboundCycleResult } from '../inbound/index.js';
import { InboundJournal, Journal, OutboundJournal } from '../journal/index.js';
import type { Logger } from '../log.js';
import { emptyOutboundResult, OutboundPipeline, type OutboundCycleResult } from '../outbound/index.js';
import { startHealthServer, type HealthServer } from './http.js';
import { DEFAULTS, STUCK_AFTER_CYCLES } from '../config/defaults.js';
import { isGridsyncError } from '../errors/index.js';
import { folderRoles } from '../config/index.js';
import { HookRunner } from './hooks.js';
import { DaemonMetrics } from './metrics.js';
import { pruneFolder } from './retention.js';
import { DeliveryWatch, type Direction, type StuckDirection } from './stuck.js';
import type { ProgressRow } from './progress-row.js';
import { SystemdNotifier } from './notify.js';
import { backoffDelay, CronWindows, CycleScheduler, realTimers, WINDOW_FOLLOW_UP, type Timers } from './scheduler.js';

export type StartupCode =
  | 'STARTUP_JOURNAL'
  | 'STARTUP_CONFIG'
  | 'STARTUP_FOLDERS'
  | 'STARTUP_CREDENTIALS_REJECTED'
  | 'STARTUP_MAILBOX_UNREACHABLE'
  | 'STARTUP_UNREACHABLE'
  | 'STARTUP_STOPPED'
  | 'STARTUP_NO_MAILBOX';

/** Start-up failed; the code says whether a later attempt can succeed (docs/errors.md). */
export class StartupError extends GridsyncError {
  constructor(
    readonly code: StartupCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface MailboxRuntime {
  readonly name: string;
  readonly mailboxId: number;
  readonly inbound?: InboundPipeline;
  readonly outbound?: OutboundPipeline;
  /** Outbound work since the previous cycle, from the pipeline's events (in `continuous` mode it runs between cycles). */
  outboundSinceCycle: OutboundCycleResult;
}

/** One item `once` leaves undelivered, and why. */
export interface LeftItem {
  readonly mailbox: string;
  readonly direction: 'in' | 'out';
  /** `parcel 123 (name)`, a file name, or `(cycle)` when the whole cycle failed. */
  readonly item: string;
  /** pending/service: transient, retried while the drain time lasts; the others are final for this run. */
  readonly kind: 'pending' | 'service' | 'deferred' | 'failed' | 'unreadable';
  readonly reason: string;
  readonly code?: string;
}

export interface DrainResult {
  readonly totals: CycleTotals;
  /** Empty when nothing deliverable is left: the only case `once` exits 0. */
  readonly left: LeftItem[];
  readonly rounds: number;
  /** The drain time ran out with transient failures left. */
  readonly timedOut: boolean;
}

export interface CycleTotals {
  inbound: InboundCycleResult;
  outbound: OutboundCycleResult;
}

export interface DaemonOptions {
  readonly loaded: LoadedConfig;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly timers?: Timers;
  /** Aborts the wait for an unreachable service during open() (the first SIGTERM). */
  readonly signal?: AbortSignal;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});

export class Daemon {
  readonly metrics = new DaemonMetrics();
  /** Progress of every pipeline (`inbound:*`, `outbound:*`); metrics and `once`'s display subscribe. */
  readonly events: EventBus<PipelineEvents>;
  private readonly cleanups: { name: string; fn: () => Promise<void> | void; skipWhenForced?: true }[] = [];
  private forced = false;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly notifier: SystemdNotifier;
  private journal!: Journal;
  private client!: MailboxTransport;
  private mailboxes: MailboxRuntime[] = [];
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private scheduler: CycleScheduler | undefined;
  private stopping = false;
  private connectFailures = 0;
  private lastSuccessAt: number | undefined;
  private lastError: string | undefined;
  private readonly abort = new AbortController();
  private readonly watch = new DeliveryWatch(STUCK_AFTER_CYCLES);
  private readonly directionStarted = new Map<string, number>();
  private http: HealthServer | undefined;
  private closed: Promise<void> | undefined;

  private constructor(private readonly options: DaemonOptions) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? realSleep;
    this.logger = options.logger;
    this.notifier = new SystemdNotifier(this.logger);
    this.events = new EventBus<PipelineEvents>((err, name) =>
      this.logger.error({ event: name, ...errorFields(err) }, 'an event listener failed'),
    );
    this.subscribeMetrics();
  }

  private subscribeMetrics(): void {
    const { events, metrics } = this;
    for (const direction of ['in', 'out'] as const) {
      const prefix = direction === 'in' ? 'inbound' : 'outbound';
      events.on(direction === 'in' ? 'inbound:received' : 'outbound:sent', ({ mailbox, count, bytes }) => {
        metrics.transfers.inc({ direction, mailbox }, count);
        metrics.bytes.inc({ direction, mailbox }, bytes);
      });
      events.on(`${prefix}:failed`, ({ mailbox, count }) => metrics.failures.inc({ direction, mailbox, kind: 'failed' }, count));
      events.on(`${prefix}:deferred`, ({ mailbox, count }) => metrics.deferred.inc({ direction, mailbox }, count));
    }
    events.on('outbound:rejected', ({ mailbox, count }) => metrics.failures.inc({ direction: 'out', mailbox, kind: 'rejected' }, count));
    const since = (mailbox: string): OutboundCycleResult | undefined => this.mailboxes.find((m) => m.name === mailbox)?.outboundSinceCycle;
    const count = (key: Exclude<keyof OutboundCycleResult, 'bytes'>) => (e: { mailbox: string; count: number }) => {
      const r = since(e.mailbox);
      if (r) r[key] += e.count;
    };
    events.on('outbound:claimed', count('claimed'));
    events.on('outbound:uploaded', count('uploaded'));
    events.on('outbound:rejected', count('rejected'));
    events.on('outbound:failed', count('failed'));
    events.on('outbound:deferred', count('deferred'));
    events.on('outbound:sent', (e) => {
      const r = since(e.mailbox);
      if (!r) return;
      r.archived += e.count;
      r.bytes += e.bytes;
    });
  }

  get config(): LoadedConfig['config'] {
    return this.options.loaded.config;
  }

  /**
   * Opens everything and checks the prerequisites: journal lock, folders, same-filesystem rules,
   * credentials. Throws StartupError for what a restart cannot fix. An unreachable service is not
   * one of those: with `waitForService` it is retried with backoff until it answers.
   */
  static async open(options: DaemonOptions & { waitForService: boolean; serveHttp?: boolean }): Promise<Daemon> {
    const d = new Daemon(options);
    const onAbort = (): void => d.abort.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (options.serveHttp) await d.startHttp();
      await d.init(options.waitForService);
      return d;
    } catch (err) {
      await d.close();
      throw err;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async init(waitForService: boolean): Promise<void> {
    const cfg = this.config;
    if (!cfg.createDirs) {
      const missing = folderRoles(cfg).filter((r) => !fs.existsSync(r.dir));
      if (missing.length) {
        throw new StartupError(
          'STARTUP_FOLDERS',
          `createDirs: false and ${missing.map((r) => `${r.key} ${r.dir}`).join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist — an unmounted share? Mount it or create the folder; gridsync does not create folders with createDirs: false`,
        );
      }
    }
    const journalFile = path.join(cfg.stateDir, 'journal.sqlite');
    try {
      this.journal = Journal.open(journalFile);
    } catch (err) {
      if (isGridsyncError(err)) throw err; // the lock: its own code and message
      throw new StartupError('STARTUP_JOURNAL', journalAdvice(journalFile, err), { cause: err });
    }
    // After a forced stop a transfer may still write to the journal: leave it to process exit,
    // which the journal survives like a SIGKILL (WAL, synchronous=FULL, the lock dies with the pid).
    this.cleanups.push({ name: 'journal', fn: () => this.journal.close(), skipWhenForced: true });
    if (cfg.hooks.afterReceive || cfg.hooks.afterSend) {
      const hooks = new HookRunner(cfg.hooks, this.logger.child({ component: 'hooks' }));
      hooks.subscribe(this.events);
      this.cleanups.push({ name: 'hooks', fn: () => hooks.close() });
    }
    let baseUrl = cfg.api.baseUrl;
    if (baseUrl === 'embedded') {
      const emu = await startEmulator({
        port: cfg.emulator.port,
        ...(cfg.emulator.dataFile ? { dataFile: cfg.emulator.dataFile } : {}),
        ...(cfg.emulator.rootKey ? { rootKey: cfg.emulator.rootKey } : {}),
        // An emulator fault is logged and answered with a 500; it never ends the daemon.
        onError: (err, context) => this.logger.error({ context, ...errorFields(err) }, 'embedded emulator error'),
      });
      this.cleanups.push({ name: 'emulator', fn: () => emu.close() });
      baseUrl = emu.url;
      this.logger.info({ url: emu.url, dataFile: cfg.emulator.dataFile ?? '(memory)' }, 'embedded emulator started');
    }
    try {
      const transport = {
        auth: cfg.api.apiKey ? { apiKey: cfg.api.apiKey } : { login: cfg.api.login as string, password: cfg.api.password as string },
        maxAttempts: cfg.api.maxAttempts,
        connections: cfg.api.connections,
        timeouts: cfg.api.timeouts,
        limits: cfg.api.limits,
        allowInsecureHttp: cfg.api.allowInsecureHttp,
        logger: this.logger.child({ component: 'client' }),
        onRateLimitPause: () => this.metrics.rateLimitPauses.inc(),
      };
      this.client =
        cfg.api.protocol === 'soap' ? new SoapClient({ url: baseUrl, ...transport }) : new GridClient({ baseUrl, ...transport });
    } catch (err) {
      if (err instanceof GridConfigError) throw new StartupError('STARTUP_CONFIG', `api.baseUrl: ${err.message}`);
      throw err;
    }
    this.cleanups.push({ name: 'client', fn: () => this.client.close() });
    const me = await this.connect(waitForService);
    await this.checkMailboxes(me);
    // One cache of partner names for the process: every mailbox's parcels come from the same partners.
    const partnerNames = new PartnerNames({
      lookup: this.client.partnerName?.bind(this.client),
      configured: configuredPartners(cfg.partners),
      timeoutMs: Math.min(DEFAULTS.partners.lookupTimeoutMs, cfg.api.timeouts.callMs),
      now: this.now,
      logger: this.logger,
    });
    for (const [i, m] of cfg.mailboxes.entries()) {
      const mailboxId = (m.mailboxId ?? me) as number;
      const name = m.name ?? `mb${mailboxId}`;
      const log = this.logger.child({ mailbox: name });
      const gid = this.options.loaded.gids[i];
      const common = {
        client: this.client,
        journal: this.journal,
        stateDir: cfg.stateDir,
        logger: log,
        now: this.now,
        events: this.events,
      };
      const inbound = m.inbox
        ? new InboundPipeline({
            ...common,
            partnerNames,
            mailbox: { mailboxId, name, inbox: { ...m.inbox, ...(gid !== undefined ? { gid } : {}) } },
          })
        : undefined;
      const outbound = m.outbox
        ? new OutboundPipeline({
            ...common,
            mailbox: { mailboxId, name, outbox: m.outbox, configFile: path.resolve(this.options.loaded.file) },
          })
        : undefined;
      try {
        await inbound?.checkPrerequisites();
        await outbound?.checkPrerequisites();
      } catch (err) {
        throw new StartupError('STARTUP_FOLDERS', `mailboxes[${i}] (${name}): ${(err as Error).message}`, { cause: err });
      }
      this.mailboxes.push({
        name,
        mailboxId,
        ...(inbound ? { inbound } : {}),
        ...(outbound ? { outbound } : {}),
        outboundSinceCycle: emptyOutboundResult(),
      });
    }
  }

  /**
   * Every configured mailbox other than the key's own must be reachable with the key: otherwise
   * `once` died on the first list call and `run` sent every outbound file to errorDir.
   */
  private async checkMailboxes(me: number | undefined): Promise<void> {
    for (const [i, m] of this.config.mailboxes.entries()) {
      // The check reads a REST catalog endpoint; other transports meet the mailbox in their cycles.
      if (m.mailboxId === undefined || m.mailboxId === me || !(this.client instanceof GridClient)) continue;
      try {
        // Listing the mailbox's inbox is the check both interfaces offer (REST and SOAP answer 403/404 alike).
        await this.client.pendingInbox(m.mailboxId, { signal: this.abort.signal });
      } catch (err) {
        if (err instanceof GridApiError && (err.httpStatus === 403 || (err.httpStatus === 404 && !err.noSuchEndpoint))) {
          throw new StartupError(
            'STARTUP_MAILBOX_UNREACHABLE',
            `mailboxes[${i}].mailboxId: the API key${me !== undefined ? ` (user of mailbox ${me})` : ''} cannot reach mailbox ${m.mailboxId}: ${err.errorCode ?? err.httpStatus} ${err.serviceMessage}; check the id, or use the key of a user with access to that mailbox`,
          );
        }
        // Anything else (the service wobbling) is not a verdict on the id: the cycles will tell.
        this.logger.warn({ mailboxId: m.mailboxId, ...errorFields(err) }, 'could not check access to the mailbox at start-up');
      }
    }
  }

  /**
   * Checks the credentials and learns the session's mailbox from the session context. 401/403 is
   * fatal. Any other failure, when every mailbox names its mailboxId, is only a warning: syncing
   * starts and each cycle meets the service on its own. Otherwise a network error waits (run) or
   * fails (once); a 404 means the service has no such endpoint.
   */
  private async connect(waitForService: boolean): Promise<number | undefined> {
    const configured = this.config.mailboxes.every((m) => m.mailboxId !== undefined);
    for (let attempt = 1; ; attempt++) {
      try {
        const ctx = await this.client.sessionContext({ signal: this.abort.signal });
        this.metrics.up.set(1);
        this.connectFailures = 0;
        this.lastError = undefined;
        if (ctx.mailboxId === undefined && !configured) {
          throw new StartupError('STARTUP_NO_MAILBOX', "the service did not name the session's mailbox: set mailboxes[].mailboxId");
        }
        return ctx.mailboxId;
      } catch (err) {
        if (err instanceof StartupError) throw err;
        if (err instanceof GridApiError && (err.httpStatus === 401 || err.httpStatus === 403)) {
          throw new StartupError(
            'STARTUP_CREDENTIALS_REJECTED',
            `credentials rejected by the service: ${err.errorCode ?? err.httpStatus} ${err.serviceMessage}`,
          );
        }
        if (this.abort.signal.aborted) throw new StartupError('STARTUP_STOPPED', 'stopped before the service became reachable');
        const why = describeConnectFailure(err);
        if (configured) {
          this.logger.warn({ ...errorFields(err), err: why }, 'cannot read the session context; syncing the configured mailboxes anyway');
          return undefined;
        }
        if (err instanceof GridApiError && err.noSuchEndpoint) {
          throw new StartupError('STARTUP_NO_MAILBOX', `${why}: set mailboxes[].mailboxId, or check api.baseUrl`, { cause: err });
        }
        this.metrics.up.set(0);
        if (!waitForService) throw new StartupError('STARTUP_UNREACHABLE', why, { cause: err });
        this.connectFailures = attempt;
        this.lastError = why;
        const wait = backoffDelay(attempt, 1000);
        this.logger.warn({ err: why, retryInMs: wait }, "cannot learn the session's mailbox yet; retrying");
        this.notifier.extendStart(wait + 60_000);
        try {
          await this.sleep(wait, this.abort.signal);
        } catch {
          throw new StartupError('STARTUP_STOPPED', 'stopped before the service became reachable');
        }
      }
    }
  }

  /**
   * `once` on SIGTERM: the cycle takes no new items; downloads in flight stop (nothing is confirmed
   * before it is placed), uploads in flight finish.
   */
  interrupt(): void {
    this.abort.abort();
  }

  /** `gridsync once`: recovery, then one full cycle of every mailbox, inbound and outbound. */
  async runOnce(): Promise<DrainResult> {
    const started = this.now();
    const deadline = started + this.config.once.drainTimeout;
    const totals: CycleTotals = { inbound: emptyInboundResult(), outbound: emptyOutboundResult() };
    for (let round = 1; ; round++) {
      const cycleErrors: LeftItem[] = [];
      for (const m of this.mailboxes) {
        if (this.abort.signal.aborted) break;
        if (m.inbound) {
          try {
            if (round === 1) add(totals.inbound, await m.inbound.recover());
            this.directionStarted.set(`${m.name}\0in`, this.directionStarted.get(`${m.name}\0in`) ?? this.now());
            add(totals.inbound, await m.inbound.runCycle({ signal: this.abort.signal }));
          } catch (err) {
            if (!this.abort.signal.aborted) cycleErrors.push(cycleError(m.name, 'in', err));
          }
        }
        if (m.outbound) {
          try {
            if (round === 1) add(totals.outbound, await m.outbound.recover());
            this.directionStarted.set(`${m.name}\0out`, this.directionStarted.get(`${m.name}\0out`) ?? this.now());
            add(totals.outbound, await m.outbound.runCycle({ signal: this.abort.signal }));
          } catch (err) {
            if (!this.abort.signal.aborted) cycleErrors.push(cycleError(m.name, 'out', err));
          }
        }
      }
      const left = [...cycleErrors, ...this.leftItems(started)];
      const retryable = left.filter((l) => l.kind === 'pending' || l.kind === 'service');
      const wait = Math.min(backoffDelay(round, 1000), deadline - this.now());
      if (retryable.length === 0 || this.abort.signal.aborted || wait <= 0) {
        const result: DrainResult = {
          totals,
          left,
          rounds: round,
          timedOut: retryable.length > 0 && wait <= 0 && !this.abort.signal.aborted,
        };
        this.recordCycle(totals);
        this.recordOnce(result);
        return result;
      }
      this.logger.info(
        { round, retryable: retryable.length, retryInMs: wait },
        'once: work left after a transient failure; another cycle after a pause',
      );
      await this.sleep(wait, this.abort.signal).catch(() => undefined);
    }
  }

  /**
   * What this run leaves undelivered, each with its reason: journal rows not finished (pending: a
   * later cycle may finish them; deferred: a local condition holds them), rows that failed or went
   * to errorDir during this run, and listed parcels that cannot be acted on.
   */
  private leftItems(since: number): LeftItem[] {
    const out: LeftItem[] = [];
    const inJournal = new InboundJournal(this.journal);
    const outJournal = new OutboundJournal(this.journal);
    for (const [i, m] of this.mailboxes.entries()) {
      if (m.inbound) {
        for (const r of inJournal.inStates(m.mailboxId, ['listed', 'downloading', 'staged', 'placed', 'failed'])) {
          const item = `parcel ${r.parcel_id}${r.file_name ? ` (${r.file_name})` : ''}`;
          if (r.state === 'failed') {
            if (r.updated_at >= since)
              out.push({ mailbox: m.name, direction: 'in', item, kind: 'failed', reason: r.last_error ?? 'failed' });
            continue;
          }
          const held = m.inbound.heldLocally.get(r.parcel_id);
          if (held !== undefined) out.push({ mailbox: m.name, direction: 'in', item, kind: 'deferred', reason: held });
          else out.push({ mailbox: m.name, direction: 'in', item, kind: 'pending', reason: r.last_error ?? `not finished (${r.state})` });
        }
        for (const [id, u] of m.inbound.unreadable) {
          out.push({
            mailbox: m.name,
            direction: 'in',
            item: `parcel ${id}${u.fileName ? ` (${u.fileName})` : ''}`,
            kind: 'unreadable',
            reason: u.reason,
            code: u.code,
          });
        }
      }
      const outboxDir = this.config.mailboxes[i]?.outbox?.dir;
      if (m.outbound && outboxDir) {
        for (const r of outJournal.inStates(m.mailboxId, outboxDir, [
          'claiming',
          'claimed',
          'uploading',
          'uploaded',
          'erroring',
          'in_error',
        ])) {
          if (r.state === 'in_error') {
            if (r.updated_at >= since)
              out.push({
                mailbox: m.name,
                direction: 'out',
                item: r.file_name,
                kind: 'failed',
                reason: r.last_error ?? 'moved to errorDir',
                ...(r.error_code ? { code: r.error_code } : {}),
              });
            continue;
          }
          out.push({
            mailbox: m.name,
            direction: 'out',
            item: r.file_name,
            kind: 'pending',
            reason: r.last_error ?? `not finished (${r.state})`,
          });
        }
      }
    }
    return out;
  }

  private recordOnce(result: DrainResult): void {
    try {
      this.journal.setMeta(
        'lastOnce',
        JSON.stringify({ at: new Date(this.now()).toISOString(), rounds: result.rounds, timedOut: result.timedOut, left: result.left }),
      );
    } catch (err) {
      this.logger.warn({ ...errorFields(err) }, 'cannot record the run in the journal');
    }
  }

  /** Where each mailbox and direction stands (progress lines, summary table); started ones only. */
  progressRows(): ProgressRow[] {
    const rows: ProgressRow[] = [];
    for (const m of this.mailboxes) {
      const inStart = this.directionStarted.get(`${m.name}\0in`);
      const p = m.inbound?.progress;
      if (inStart !== undefined && p) {
        const r = p.result;
        rows.push({
          mailbox: m.name,
          direction: 'in',
          done: r.confirmed + r.failed,
          total: Math.max(p.total, r.confirmed + r.failed),
          failed: r.failed,
          deferred: r.deferred,
          bytes: r.bytes,
          ...(p.totalBytes ? { totalBytes: p.totalBytes } : {}),
          startedAt: inStart,
        });
      }
      const outStart = this.directionStarted.get(`${m.name}\0out`);
      if (outStart !== undefined && m.outbound) {
        const c = m.outbound.counters;
        const done = c.archived + c.rejected + c.failed;
        rows.push({
          mailbox: m.name,
          direction: 'out',
          done,
          total: done + m.outbound.queueDepth,
          failed: c.failed + c.rejected,
          deferred: c.deferred,
          bytes: c.bytes,
          startedAt: outStart,
        });
      }
    }
    return rows;
  }

  private async startHttp(): Promise<void> {
    const cfg = this.config;
    if (!cfg.http.enabled || this.http) return;
    this.http = await startHealthServer(cfg.http.host, cfg.http.port, {
      ready: () => this.readiness(),
      metrics: async () => {
        await this.sampleFreeSpace();
        for (const m of this.mailboxes) if (m.outbound) this.metrics.queueDepth.set({ mailbox: m.name }, m.outbound.queueDepth);
        return { contentType: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
      },
    });
    this.cleanups.push({ name: 'http', fn: () => this.http?.close() });
    this.logger.info({ url: this.http.url }, 'health and metrics endpoint listening');
  }

  /** The URL of /healthz, /readyz and /metrics, when http.enabled. */
  get httpUrl(): string | undefined {
    return this.http?.url;
  }

  /** `gridsync run`: recovery, watchers, schedules, health endpoint. */
  async start(): Promise<void> {
    const cfg = this.config;
    await this.startHttp();
    for (const m of this.mailboxes) {
      await m.inbound?.recover();
      await m.outbound?.recover();
      if (m.outbound && cfg.schedule.outbound === 'continuous') {
        await m.outbound.start();
        this.cleanups.push({ name: `outbound ${m.name}`, fn: () => m.outbound?.stop(cfg.shutdownTimeout) });
      }
    }
    for (const m of this.mailboxes) {
      if (m.inbound) this.directionStarted.set(`${m.name}\0in`, this.now());
      if (m.outbound) this.directionStarted.set(`${m.name}\0out`, this.now());
    }
    const timers = this.options.timers ?? realTimers;
    this.prune();
    const pruneTimer = setInterval(() => this.prune(), 86_400_000);
    pruneTimer.unref();
    this.cleanups.push({ name: 'prune timer', fn: () => clearInterval(pruneTimer) });
    const windows = cfg.schedule.cron?.length ? new CronWindows(cfg.schedule.cron, cfg.schedule.timezone) : undefined;
    if (windows) this.cleanups.push({ name: 'cron windows', fn: () => windows.close() });
    this.scheduler = new CycleScheduler({
      pollMs: cfg.schedule.poll,
      ...(windows ? { windows } : {}),
      cycle: (reason) => this.cycle(reason),
      ...(windows && cfg.schedule.windowFollowUp > 0 ? { windowFollowUpMs: cfg.schedule.windowFollowUp } : {}),
      now: this.now,
      timers,
    });
    if (windows) this.logger.info({ cron: cfg.schedule.cron, timezone: cfg.schedule.timezone ?? 'local' }, 'transfer windows scheduled');
    this.scheduler.start();
    this.notifier.ready();
  }

  /** Runs a cycle now unless one is running (then once more right after it: cycles never overlap). */
  triggerCycle(reason: string): void {
    this.scheduler?.trigger(reason);
  }

  /** The cycle in progress, if any (tests and shutdown wait on it). */
  get cycleInFlight(): Promise<void> | undefined {
    return this.scheduler?.inFlight;
  }

  private async cycle(reason: string): Promise<boolean> {
    const totals: CycleTotals = { inbound: emptyInboundResult(), outbound: emptyOutboundResult() };
    const failuresBefore = this.scheduler?.failures ?? 0;
    try {
      for (const m of this.mailboxes) {
        if (this.stopping) return true;
        if (m.inbound) {
          const end = this.metrics.cycleDuration.startTimer({ mailbox: m.name });
          const r = await m.inbound.runCycle({ signal: this.abort.signal });
          end();
          add(totals.inbound, r);
          this.observe(m.name, 'in', {
            deferred: r.deferred,
            progressed: r.confirmed + r.failed,
            ...(m.inbound.lastDeferReason ? { reason: m.inbound.lastDeferReason } : {}),
          });
        }
        if (m.outbound) {
          // In `windows` mode the cycle sends; in `continuous` mode the outbox was sent between
          // cycles. Either way the events since the last cycle say what was done.
          if (this.config.schedule.outbound === 'windows' && reason !== WINDOW_FOLLOW_UP)
            await m.outbound.runCycle({ signal: this.abort.signal });
          const r = m.outboundSinceCycle;
          m.outboundSinceCycle = emptyOutboundResult();
          add(totals.outbound, r);
          this.observe(m.name, 'out', { deferred: r.deferred, progressed: r.archived + r.rejected + r.failed });
        }
      }
      this.recordCycle(totals);
      if (failuresBefore > 0) this.logger.info({ after: failuresBefore }, 'the service answers again; back to the normal schedule');
      const stuck = this.watch.stuck();
      // A cycle that delivered nothing because of a local condition is not a success: the
      // "no successful cycle" alert must fire for it as for an outage.
      if (stuck.length === 0) {
        this.lastSuccessAt = this.now();
        this.metrics.lastSuccess.set(this.lastSuccessAt / 1000);
      }
      this.lastError = stuck[0] ? describeStuck(stuck[0]) : undefined;
      this.metrics.up.set(1);
      if (totals.inbound.listed || totals.inbound.confirmed || totals.outbound.archived) {
        this.logger.info({ reason, inbound: totals.inbound, outbound: totals.outbound }, 'cycle done');
      }
      return true;
    } catch (err) {
      if (this.stopping) return true;
      this.lastError = (err as Error).message;
      this.metrics.up.set(0);
      const expired = err instanceof GridApiError && err.httpStatus === 401;
      const retryInMs = backoffDelay(failuresBefore + 1, this.config.schedule.poll);
      this.logger.error(
        { err: this.lastError, failures: failuresBefore + 1, retryInMs },
        expired ? 'credentials rejected (expired or revoked?); retrying with backoff' : 'cycle failed; retrying with backoff',
      );
      return false;
    }
  }

  /** Free space of every folder gridsync writes to (the disk-headroom alert). */
  private async sampleFreeSpace(): Promise<void> {
    const folders: [string, string, string | undefined][] = [['', 'stateDir', this.config.stateDir]];
    for (const m of this.config.mailboxes) {
      const name = m.name ?? '';
      folders.push([name, 'inbox', m.inbox?.dir], [name, 'sentDir', m.outbox?.sentDir], [name, 'errorDir', m.outbox?.errorDir]);
    }
    for (const [mailbox, folder, dir] of folders) {
      if (!dir) continue;
      try {
        const st = await fs.promises.statfs(dir);
        this.metrics.freeBytes.set({ mailbox, folder }, st.bavail * st.bsize);
      } catch {
        // A folder that is not there yet is reported by readiness and doctor, not here.
      }
    }
  }

  /** sentRetentionDays / errorRetentionDays: delete old archived and failed files (off by default). */
  pruneFolders(): void {
    for (const m of this.config.mailboxes) {
      const o = m.outbox;
      if (!o) continue;
      const targets: [string | undefined, number | undefined][] = [
        [o.sentDir, o.sentRetentionDays],
        [o.errorDir, o.errorRetentionDays],
      ];
      for (const [dir, days] of targets) {
        if (!dir || !days) continue;
        const removed = pruneFolder(dir, days * 86_400_000, this.now(), (file, err) =>
          this.logger.warn({ file, ...errorFields(err) }, 'retention: cannot delete'),
        );
        if (removed) this.logger.info({ dir, removed, olderThanDays: days }, 'retention: old files deleted');
      }
    }
  }

  /** Feeds one cycle of one direction to the stuck watch; logs and counts the transitions. */
  private observe(mailbox: string, direction: Direction, o: { deferred: number; progressed: number; reason?: string }): void {
    const t = this.watch.observe(mailbox, direction, o);
    this.metrics.stuckCycles.set({ direction, mailbox }, this.watch.cycles(mailbox, direction));
    this.metrics.stuck.set(
      { direction, mailbox },
      this.watch.stuck().some((s) => s.mailbox === mailbox && s.direction === direction) ? 1 : 0,
    );
    if (t?.kind === 'stuck') {
      this.logger.error(
        { mailbox, direction, cycles: t.state.cycles, waiting: t.state.waiting, reason: t.state.reason },
        `deliveries stopped: ${describeStuck(t.state)}`,
      );
    } else if (t?.kind === 'recovered') {
      this.logger.info({ mailbox, direction, afterCycles: t.state.cycles }, 'deliveries moving again');
    }
  }

  /** Directions whose deliveries stopped (readiness, status). */
  get stuckDeliveries(): StuckDirection[] {
    return this.watch.stuck();
  }

  private recordCycle(totals: CycleTotals): void {
    try {
      this.journal.setMeta('lastCycle', JSON.stringify({ at: new Date(this.now()).toISOString(), ...totals }));
    } catch (err) {
      this.logger.warn({ ...errorFields(err) }, 'cannot record the cycle in the journal');
    }
  }

  private prune(): void {
    this.pruneFolders();
    const ms = this.config.retention.journalDays * 86_400_000;
    try {
      const rows = new InboundJournal(this.journal).pruneConfirmed(ms) + new OutboundJournal(this.journal).pruneFinished(ms);
      const events = this.journal.pruneEvents(ms);
      if (rows + events > 0) this.logger.info({ rows, events, olderThanDays: this.config.retention.journalDays }, 'journal pruned');
    } catch (err) {
      this.logger.warn({ ...errorFields(err) }, 'journal pruning failed');
    }
  }

  /**
   * Ready: connected, and the last cycle succeeded recently (with cron windows: the last one did
   * not fail — between windows there is nothing to be fresh about).
   */
  readiness(): { ready: boolean; lastSuccessAt: string | null; lastError: string | null; stuck: StuckDirection[] } {
    const window = Math.max(3 * this.config.schedule.poll, 60_000);
    const fresh = this.lastSuccessAt !== undefined && this.now() - this.lastSuccessAt <= window;
    const failing = (this.scheduler?.failures ?? 0) > 0 || this.connectFailures > 0 || !this.scheduler;
    const stuck = this.watch.stuck();
    const ready = !this.stopping && !failing && stuck.length === 0 && (fresh || Boolean(this.config.schedule.cron?.length));
    return {
      ready,
      lastSuccessAt: this.lastSuccessAt ? new Date(this.lastSuccessAt).toISOString() : null,
      lastError: this.lastError ?? null,
      stuck,
    };
  }

  /** True when close() had to stop with transfers still in flight: the caller should exit the process. */
  get forcedStop(): boolean {
    return this.forced;
  }

  /** Stop taking work, let in-flight transfers finish up to the deadline, close everything. Safe twice. */
  async close(): Promise<void> {
    this.closed ??= (async () => {
      this.stopping = true;
      this.notifier.stopping();
      this.scheduler?.stop();
      const inFlight = this.scheduler?.inFlight;
      const deadline = this.config.shutdownTimeout;
      if (inFlight) {
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          inFlight.then(() => true),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(false), deadline))),
        ]);
        clearTimeout(timer);
        if (!finished) {
          this.logger.warn(
            { deadlineMs: deadline },
            'shutdown deadline reached; aborting in-flight transfers (they resume from the journal at the next start)',
          );
          this.abort.abort();
          await inFlight.catch(() => undefined);
        }
      }
      this.abort.abort();
      // graphile-worker style: every release runs, in reverse order, even when one fails. Each
      // gets what is left of the deadline (at least a short grace); one that overruns (a transfer
      // still holding the client) makes this a forced stop.
      const deadlineAt = Date.now() + deadline;
      for (const c of this.cleanups.reverse()) {
        if (this.forced && c.skipWhenForced) continue;
        try {
          const inTime = await withDeadline(Promise.resolve(c.fn()), Math.max(deadlineAt - Date.now(), CLEANUP_GRACE_MS));
          if (!inTime) {
            this.forced = true;
            this.logger.warn(
              { resource: c.name, deadlineMs: deadline },
              'in-flight transfers did not finish within shutdownTimeout; stopping anyway (they resume from the journal at the next start)',
            );
          }
        } catch (err) {
          this.logger.warn({ resource: c.name, ...errorFields(err) }, 'cleanup failed');
        }
      }
    })();
    return this.closed;
  }
}

const CLEANUP_GRACE_MS = 1000;

/** Resolves true when `p` settles within `ms`, false otherwise (`p` keeps running). */
async function withDeadline(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The journal could not be opened: the path, what it means and what to do. */
export function journalAdvice(file: string, err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  const msg = (err as Error).message;
  const uid = process.geteuid?.() ?? '?';
  if (/NOTADB|CORRUPT/.test(code) || /not a database|malformed/.test(msg)) {
    return `journal ${file} is damaged (${msg}): stop gridsync, move the file aside (mv ${file} ${file}.damaged), then restore the last backup or start with an empty journal — see "When the journal is damaged" in docs/operations.md`;
  }
  if (/CANTOPEN|READONLY|PERM|AUTH/.test(code) || /unable to open|readonly|read-only/.test(msg)) {
    return `journal ${file} cannot be opened for writing (${msg}): stateDir ${path.dirname(file)} must exist and be writable by the user gridsync runs as (uid ${uid}), on a local read-write filesystem`;
  }
  return `journal ${file}: ${msg}`;
}

function describeStuck(s: StuckDirection): string {
  return `${s.mailbox} ${s.direction === 'in' ? 'inbound' : 'outbound'}: ${s.waiting} item(s) waiting, nothing delivered for ${s.cycles} cycles: ${s.reason}`;
}

function add<T extends object>(into: T, from: T): void {
  for (const k of Object.keys(from) as (keyof T)[]) (into[k] as number) += from[k] as number;
}

/** Why the session context could not be read, in the operator's terms: unreachable only when it is. */
function describeConnectFailure(err: unknown): string {
  if (err instanceof GridApiError) {
    if (err.noSuchEndpoint) return `the service has no such endpoint (HTTP 404 on ${err.endpoint})`;
    return `the service answered HTTP ${err.httpStatus}${err.errorCode ? ` ${err.errorCode}` : ''} on ${err.endpoint}${err.serviceMessage ? `: ${err.serviceMessage}` : ''}`;
  }
  if (err instanceof GridTransportError) return `the service is not reachable: ${err.message}`;
  return `the service's answer could not be used: ${(err as Error).message}`;
}

function cycleError(mailbox: string, direction: 'in' | 'out', err: unknown): LeftItem {
  const code = (err as { code?: unknown }).code;
  return {
    mailbox,
    direction,
    item: '(cycle)',
    kind: 'service',
    reason: describeConnectFailure(err),
    ...(typeof code === 'string' ? { code } : {}),
  };
}
