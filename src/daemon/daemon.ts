/**
 * The daemon's composition: wires config, journal, client (or the embedded emulator), and the
 * pipelines of every mailbox; then either drains once (drain.ts) or runs on a schedule (interval
 * or cron windows, cycles never overlap: cycle.ts, scheduler.ts) with /healthz, /readyz and
 * /metrics; shuts down within a deadline (cleanups.ts). Progress, metrics and readiness are fed by
 * the pipelines' events (progress.ts, metrics-bridge.ts, readiness.ts).
 */
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { GridConfigError, mailboxCalls, type MailboxTransport } from '../api/index.js';
import { connectService } from '../service/index.js';
import { workDirOf, type LoadedConfig } from '../config/index.js';
import { errorFields, isGridsyncError } from '../errors/index.js';
import { EventBus, type PipelineEvents } from '../events/index.js';
import { configuredPartners, InboundPipeline, PartnerNames } from '../inbound/index.js';
import { openJournal, type JournalStore } from '../journal/index.js';
import type { Logger } from '../log.js';
import { OutboundPipeline } from '../outbound/index.js';
import { gridsyncVersion } from '../version.js';
import { startHealthServer, type HealthServer } from './http.js';
import { DEFAULTS, STUCK_AFTER_CYCLES } from '../config/defaults.js';
import { startCallbacks, type CallbackRuntime } from './callbacks.js';
import { Cleanups } from './cleanups.js';
import { StopDeadline, stopTransfers } from './stop-deadline.js';
import { checkMailboxes, connect, type ConnectDeps } from './connect.js';
import { RunCycle } from './cycle.js';
import { drain, unfinished, type DrainResult } from './drain.js';
import { HookRunner } from './hooks.js';
import { DaemonMetrics } from './metrics.js';
import { logEventsAtDebug } from './debug-log.js';
import { feedMetrics, sampleFreeSpace } from './metrics-bridge.js';
import { SystemdNotifier } from './notify.js';
import { ProgressTracker } from './progress.js';
import type { ProgressRow } from './progress-row.js';
import { watchCycleActivity } from './cycle-activity.js';
import { HealthState, type Readiness } from './readiness.js';
import { PREFLIGHT_CHECKS } from './preflight.js';
import { retentionPass, scheduleRetention } from './retention-pass.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { daemonLeases, firstNames } from './leases.js';
import type { DaemonConfig, DaemonRuntime, MailboxLeases, MailboxRuntime } from './runtime.js';
import { CronWindows, CycleScheduler, realTimers, type Timers } from './scheduler.js';
import { journalAdvice, StartupError } from './startup-error.js';
import { DeliveryWatch } from './stuck.js';
import { claimJournal, serviceIdentity, serviceRefusal } from './journal-service.js';
import { FailingMailboxes } from './failing-mailboxes.js';
import { reportOrphanedWork } from './orphans.js';
import { FatalStop } from './fatal-stop.js';

export interface DaemonOptions {
  readonly loaded: LoadedConfig;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly timers?: Timers;
  /** The clock /readyz measures freshness on (performance.now); tests step it. */
  readonly monotonic?: () => number;
  /** Aborts the wait for an unreachable service during open() (the first SIGTERM). */
  readonly signal?: AbortSignal;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});

export class Daemon {
  readonly metrics = new DaemonMetrics();
  readonly fatal = new FatalStop();
  /** Progress of every pipeline (`inbound:*`, `outbound:*`); metrics, progress and hooks subscribe. */
  readonly events: EventBus<PipelineEvents>;
  private readonly cleanups = new Cleanups();
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly notifier: SystemdNotifier;
  private journal!: JournalStore;
  private client!: MailboxTransport;
  private mailboxes: MailboxRuntime[] = [];
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private scheduler: CycleScheduler | undefined;
  private stopping = false;
  private readonly health: HealthState;
  private readonly abort = new AbortController();
  /** Aborted as soon as close() begins (`abort` only at the shutdown deadline). */
  private readonly stopped = new AbortController();
  private readonly watch = new DeliveryWatch(STUCK_AFTER_CYCLES);
  private readonly failing: FailingMailboxes;
  private readonly progress: ProgressTracker;
  private http: HealthServer | undefined;
  private callbacks: CallbackRuntime | undefined;
  /** Why the service did not answer the session check at open, when it did not. */
  private unreachableAtStart: string | undefined;
  private closed: Promise<void> | undefined;
  private stopDeadline: StopDeadline | undefined;
  /** The mailbox leases, with a shared journal only. */
  private keeper: LeaseKeeper | undefined;
  private leaseView: MailboxLeases | undefined;

  private constructor(private readonly options: DaemonOptions) {
    this.now = options.now ?? Date.now;
    this.health = new HealthState(options.monotonic);
    this.sleep = options.sleep ?? realSleep;
    this.failing = new FailingMailboxes(options.loaded.config.schedule.poll);
    this.logger = options.logger;
    this.notifier = new SystemdNotifier(this.logger);
    this.events = new EventBus<PipelineEvents>((err, name) =>
      this.logger.error({ event: name, ...errorFields(err) }, 'an event listener failed'),
    );
    feedMetrics(this.events, this.metrics);
    logEventsAtDebug(this.events, this.logger);
    watchCycleActivity(this.events, () => this.health.moved(this.now()));
    this.progress = new ProgressTracker(this.events, this.now, (mailbox, direction, waiting) => {
      if (direction === 'out') this.metrics.queueDepth.set({ mailbox }, waiting);
    });
  }

  get config(): DaemonConfig {
    return this.options.loaded.config;
  }

  /** What the drain, the cycles and retention work on, once the daemon is wired. */
  private get runtime(): DaemonRuntime {
    return {
      config: this.config,
      logger: this.logger,
      journal: this.journal,
      mailboxes: this.mailboxes,
      signal: this.abort.signal,
      now: this.now,
      sleep: this.sleep,
      ...(this.leaseView ? { leases: this.leaseView } : {}),
    };
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
    for (const check of PREFLIGHT_CHECKS) {
      const refusal = check.refusal(cfg);
      if (refusal) throw refusal;
    }
    const journalFile = path.join(cfg.stateDir, 'journal.sqlite');
    try {
      this.journal = await openJournal({ url: cfg.journal.url, stateDir: cfg.stateDir }, { owner: cfg.instance.name });
    } catch (err) {
      if (isGridsyncError(err)) throw err; // the lock: its own code and message
      throw new StartupError('STARTUP_JOURNAL', journalAdvice(journalFile, err), { cause: err });
    }
    // After a forced stop a transfer may still write to the journal: leave it to process exit,
    // which the journal survives like a SIGKILL (WAL, synchronous=FULL, the lock dies with the pid).
    this.cleanups.push({ name: 'journal', fn: () => this.journal.close(), skipWhenForced: true });
    this.fatal.watch(this.journal, this.logger);
    await claimJournal(this.journal, { baseUrl: cfg.api.baseUrl, configFile: path.resolve(this.options.loaded.file) }, this.logger);
    if (cfg.hooks.afterReceive || cfg.hooks.afterSend) {
      const hooks = new HookRunner(cfg.hooks, this.logger.child({ component: 'hooks' }));
      hooks.subscribe(this.events);
      this.cleanups.push({ name: 'hooks', fn: () => hooks.close() });
    }
    try {
      const service = await connectService(cfg, {
        emulatorPort: cfg.emulator.port,
        logger: this.logger.child({ component: 'client' }),
        ...this.metrics.clientHooks,
        // An emulator fault is logged and answered with a 500; it never ends the daemon.
        onEmulatorError: (err, context) => this.logger.error({ context, ...errorFields(err) }, 'embedded emulator error'),
      });
      this.client = service.client;
      this.cleanups.push({ name: 'service', fn: () => service.close() });
      if (service.emulator) this.logger.info(service.emulator, 'embedded emulator started');
    } catch (err) {
      if (err instanceof GridConfigError) throw new StartupError('STARTUP_CONFIG', `api.baseUrl: ${err.message}`);
      throw err;
    }
    const connection: ConnectDeps = {
      config: cfg,
      client: this.client,
      logger: this.logger,
      signal: this.abort.signal,
      sleep: this.sleep,
      health: this.health,
      reachable: (up) => this.metrics.up.set(up),
      extendStart: (ms) => this.notifier.extendStart(ms),
    };
    const { mailboxId: me, unreachable } = await connect(connection, waitForService);
    if (unreachable !== undefined) this.unreachableAtStart = unreachable;
    await checkMailboxes(connection, me);
    // One cache of partner names for the process: every mailbox's parcels come from the same partners.
    const partnerNames = new PartnerNames({
      lookup: this.client.partnerName?.bind(this.client),
      configured: configuredPartners(cfg.partners),
      timeoutMs: Math.min(DEFAULTS.partners.lookupTimeoutMs, cfg.api.timeouts.callMs),
      now: this.now,
      logger: this.logger,
      signal: this.abort.signal,
    });
    const ids = cfg.mailboxes.map((m) => (m.mailboxId ?? me) as number);
    // A shared journal: this instance serves the mailboxes whose lease it holds (its fair share).
    if (this.journal.backend === 'postgres') {
      const leases = daemonLeases({
        leases: this.journal.leases,
        ttlMs: cfg.journal.lease,
        renewMs: cfg.journal.renew,
        names: firstNames(ids, cfg.mailboxes),
        logger: this.logger,
        metrics: this.metrics.leases,
        onTaken: () => this.triggerCycle('lease taken'),
        check: () => serviceRefusal(this.journal, serviceIdentity(cfg.api.baseUrl)),
      });
      this.keeper = leases.keeper;
      this.leaseView = leases.view;
    }
    for (const [i, m] of cfg.mailboxes.entries()) {
      const mailboxId = ids[i] as number;
      const lease = this.keeper ? { lease: this.keeper.handle(mailboxId) } : {};
      const name = m.name ?? `mb${mailboxId}`;
      const log = this.logger.child({ mailbox: name });
      const gid = this.options.loaded.gids[i];
      const common = {
        client: mailboxCalls(this.client, name),
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
            ...lease,
            mailbox: {
              mailboxId,
              name,
              inbox: {
                ...m.inbox,
                stagingDir: workDirOf(cfg, 'staging', m.inbox.dir, m.inbox.stagingDir),
                ...(gid !== undefined ? { gid } : {}),
              },
            },
          })
        : undefined;
      const outbound = m.outbox
        ? new OutboundPipeline({
            ...common,
            ...lease,
            longestUploadMs: cfg.api.timeouts.callMs,
            mailbox: {
              mailboxId,
              name,
              outbox: { ...m.outbox, processingDir: workDirOf(cfg, 'processing', m.outbox.dir, m.outbox.processingDir) },
              configFile: path.resolve(this.options.loaded.file),
            },
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
        ...(outbound && m.outbox ? { outbound, outboxDir: m.outbox.dir } : {}),
      });
    }
    this.metrics.declare(
      this.mailboxes.map((m) => ({ name: m.name, inbound: m.inbound !== undefined, outbound: m.outbound !== undefined })),
      { version: gridsyncVersion(), protocol: cfg.api.protocol, journal: this.journal.backend },
      Boolean(cfg.schedule.cron?.length),
    );
  }

  /**
   * `once` on SIGTERM: the cycle takes no new items; downloads in flight stop (nothing is confirmed
   * before it is placed), uploads in flight finish.
   */
  interrupt(): void {
    this.abort.abort();
  }

  /** `gridsync once`: recovery, then cycles of every mailbox until nothing deliverable is left. */
  async runOnce(): Promise<DrainResult> {
    await this.keeper?.start();
    return drain(this.runtime, this.progress, this.unreachableAtStart !== undefined ? { unreachable: this.unreachableAtStart } : {});
  }

  /** `gridsync once` after its drain: the retention pass, when due; never throws (retention-pass.ts). */
  retain(): Promise<void> {
    return retentionPass(this.runtime, this.client);
  }

  /** Where each mailbox and direction stands (progress lines, summary table); started ones only. */
  progressRows(): ProgressRow[] {
    return this.progress.rows();
  }

  private async startHttp(): Promise<void> {
    const cfg = this.config;
    if (!cfg.http.enabled || this.http) return;
    this.http = await startHealthServer(cfg.http.host, cfg.http.port, {
      ready: () => this.readiness(),
      metrics: async () => {
        await sampleFreeSpace(this.runtime, this.metrics);
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
    const rt = this.runtime;
    await this.startHttp();
    for (const m of this.mailboxes) {
      if (m.inbound) this.progress.begin(m.name, 'in', await unfinished(rt, m, 'in'));
      if (m.outbound) this.progress.begin(m.name, 'out', await unfinished(rt, m, 'out'));
    }
    await this.keeper?.start();
    await reportOrphanedWork(rt);
    for (const m of this.mailboxes) {
      // Under leases a mailbox recovers when its lease is taken (its first cycle), not here.
      if (!this.keeper) {
        await m.inbound?.recover();
        await m.outbound?.recover();
      }
      if (m.outbound && cfg.schedule.outbound === 'continuous') {
        await m.outbound.start();
        this.cleanups.push({ name: `outbound ${m.name}`, fn: () => m.outbound?.stop(cfg.shutdownTimeout) });
      }
    }
    const timers = this.options.timers ?? realTimers;
    const retention = scheduleRetention(rt, this.client);
    this.cleanups.push({ name: 'retention', fn: () => retention.stop() });
    const windows = cfg.schedule.cron?.length ? new CronWindows(cfg.schedule.cron, cfg.schedule.timezone) : undefined;
    if (windows) this.cleanups.push({ name: 'cron windows', fn: () => windows.close() });
    const cycle = new RunCycle({
      rt,
      events: this.events,
      metrics: this.metrics,
      health: this.health,
      watch: this.watch,
      failing: this.failing,
      progress: this.progress,
      stopping: () => this.stopping || this.fatal.error !== undefined, // a damaged journal is told once, by the fatal stop
      stopSignal: this.stopped.signal,
      failures: () => this.scheduler?.failures ?? 0,
    });
    try {
      this.callbacks = await startCallbacks({
        ...rt,
        client: this.client,
        events: this.events,
        metrics: this.metrics,
        timers,
        requestCycle: (why, mailboxId) => this.scheduler?.trigger(why, mailboxId),
      });
    } catch (err) {
      await this.close();
      throw err;
    }
    if (this.callbacks) this.cleanups.push({ name: 'callbacks', fn: () => this.callbacks?.close() });
    this.scheduler = new CycleScheduler({
      pollMs: cfg.schedule.poll,
      ...(windows ? { windows } : {}),
      cycle: (reason, only) => cycle.run(reason, only),
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

  readiness(): Readiness {
    const callbacks = this.callbacks?.health();
    const r = this.health.readiness({
      pollMs: this.config.schedule.poll,
      windows: Boolean(this.config.schedule.cron?.length),
      stopping: this.stopping,
      scheduled: this.scheduler !== undefined,
      cycleFailures: this.scheduler?.failures ?? 0,
      stuck: this.watch.stuck(),
      failing: this.failing.list(this.now()),
    });
    return callbacks ? { ...r, callbacks } : r;
  }

  /** True when close() had to stop with transfers still in flight: the caller should exit the process. */
  get forcedStop(): boolean {
    return this.cleanups.forced;
  }

  /** What is left of the stop's bound (stop-deadline.ts) once close() has begun. */
  get stopLeftMs(): number {
    return this.stopDeadline?.leftMs() ?? 0;
  }

  /** Stop taking work, let in-flight transfers finish up to the deadline, close everything. Safe twice. */
  async close(): Promise<void> {
    this.closed ??= (async () => {
      this.stopping = true;
      this.stopped.abort();
      this.notifier.stopping();
      this.scheduler?.stop();
      // One deadline for the whole stop, on the monotonic clock (stop-deadline.ts); the leases
      // handed back (the journal refuses this instance's writes from then on), the transfers finished.
      const deadline = (this.stopDeadline = new StopDeadline(this.config.shutdownTimeout));
      await stopTransfers(deadline, this.config.shutdownTimeout, {
        ...(this.keeper ? { leases: this.keeper } : {}),
        inFlight: () => this.scheduler?.inFlight,
        abort: () => this.abort.abort(),
        logger: this.logger,
      });
      await this.cleanups.runAll(deadline, this.logger);
    })();
    return this.closed;
  }
}
