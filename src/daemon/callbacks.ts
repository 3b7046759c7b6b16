/**
 * `run` with callbacks: the receiver on its own port, the registrations made sure of (retried in the
 * background while the service does not answer: polling goes on meanwhile), verified calls turned
 * into cycles, and parcels that polls find unannounced counted as missed.
 */
import fs from 'node:fs';
import { GridClient, type MailboxTransport, type SoapClient } from '../api/index.js';
import {
  Announcements,
  CallbackSetupError,
  CallbackTrigger,
  ensureRegistration,
  isTestCall,
  loadCallbackCredentials,
  REFUSALS,
  restRegistry,
  splitListen,
  startReceiver,
  type CallbackCredentials,
  type CallbackHealth,
  type CallbackRegistry,
} from '../callbacks/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { errorFields } from '../errors/index.js';
import type { EventBus, PipelineEvents } from '../events/index.js';
import type { Logger } from '../log.js';
import { restBeside } from '../service/index.js';
import type { DaemonMetrics } from './metrics.js';
import type { DaemonConfig, MailboxRuntime } from './runtime.js';
import type { Timers } from './scheduler.js';
import { StartupError } from './startup-error.js';

export interface CallbackDeps {
  readonly config: DaemonConfig;
  readonly client: MailboxTransport;
  readonly mailboxes: readonly MailboxRuntime[];
  readonly events: EventBus<PipelineEvents>;
  readonly metrics: DaemonMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  readonly timers: Timers;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly signal: AbortSignal;
  /** Asks the scheduler for a cycle of one mailbox now (merged with one running). */
  readonly requestCycle: (reason: string, mailboxId: number) => void;
}

export interface CallbackRuntime {
  readonly url: string;
  health(): CallbackHealth & { warning: string | null };
  close(): Promise<void>;
}

/** The readiness detail when polls keep finding parcels no callback announced (null when fine). */
export function missedWarning(h: CallbackHealth): string | null {
  if (h.missedInARow < DEFAULTS.callbacks.missedBeforeWarning) return null;
  return `polls found ${h.missedInARow} parcels in a row that no callback announced: are the service's calls reaching the receiver (firewall, proxy)?`;
}

export async function startCallbacks(d: CallbackDeps): Promise<CallbackRuntime | undefined> {
  const cfg = d.config.callbacks;
  if (!cfg) return undefined;
  const log = d.logger.child({ component: 'callbacks' });
  const inbound = d.mailboxes.filter((m) => m.inbound);
  const byId = new Map(inbound.map((m) => [m.mailboxId, m.name]));
  const { callbackCalls: calls, callbackRefused: refused, callbackMissed: missed } = d.metrics;
  for (const m of inbound) {
    calls.inc({ mailbox: m.name }, 0);
    missed.inc({ mailbox: m.name }, 0);
  }
  for (const reason of REFUSALS) refused.inc({ reason }, 0);

  try {
    const creds = loadCallbackCredentials({
      stateDir: d.config.stateDir,
      auth: cfg.auth,
      username: cfg.username,
      passwordFile: cfg.passwordFile,
      credentialsDir: process.env.CREDENTIALS_DIRECTORY,
      mailboxIds: inbound.map((m) => m.mailboxId),
    });
    const { host, port } = splitListen(cfg.listen);
    const tls = cfg.tls ? { cert: fs.readFileSync(cfg.tls.certFile), key: fs.readFileSync(cfg.tls.keyFile) } : undefined;
    // Over SOAP, through REST with the same account: SOAP publishes no callback operations. Made
    // first, so that a REST root the client refuses stops the start like any other config error.
    const rest =
      d.client instanceof GridClient
        ? d.client
        : restBeside(d.config, d.client as SoapClient, cfg.restUrl, {
            logger: d.logger.child({ component: 'client' }),
            ...d.metrics.clientHooks,
          });
    const announcements = new Announcements(d.now, DEFAULTS.callbacks.announceGraceMs);
    const nameOf = (id: number): string => byId.get(id) ?? `mb${id}`;
    const trigger = new CallbackTrigger((id) => d.requestCycle('callback', id), DEFAULTS.callbacks.minTriggerGapMs, d.now, d.timers);
    d.events.on('inbound:received', (e) => {
      const id = inbound.find((m) => m.name === e.mailbox)?.mailboxId;
      if (id !== undefined && e.item) announcements.placed(id, e.item.parcelId);
    });
    const receiver = await startReceiver({
      host,
      port,
      tls,
      credentials: creds,
      onCall: (mailboxId, body) => {
        const name = byId.get(mailboxId);
        if (name === undefined) return;
        calls.inc({ mailbox: name });
        announcements.heard(mailboxId, body);
        // A test call (`gridsync callbacks test`) proves the path; it announces no parcel.
        if (!isTestCall(body)) trigger.poke(mailboxId);
      },
      onRefused: (reason) => refused.inc({ reason }),
    });
    log.info({ url: receiver.url, publicUrl: cfg.publicUrl }, 'callback receiver listening');
    const sweep = setInterval(() => {
      for (const id of announcements.sweep()) missed.inc({ mailbox: nameOf(id) });
    }, DEFAULTS.callbacks.announceGraceMs / 2);
    sweep.unref();
    const runtime: CallbackRuntime = {
      url: receiver.url,
      health: () => {
        const h = announcements.health();
        return { ...h, warning: missedWarning(h) };
      },
      close: async () => {
        trigger.close();
        clearInterval(sweep);
        await receiver.close();
      },
    };
    void registerAll(d, restRegistry(rest), creds, log)
      .finally(() => rest !== d.client && rest.close())
      .catch((err: unknown) => log.warn({ ...errorFields(err) }, 'callback registration stopped'));
    return runtime;
  } catch (err) {
    if (err instanceof CallbackSetupError) throw err; // its own code: doctor checks the same
    throw new StartupError('STARTUP_CONFIG', `callbacks: ${(err as Error).message}`, { cause: err });
  }
}

/** Registers every inbound mailbox; retries a mailbox the service did not accept, until the daemon stops. */
async function registerAll(d: CallbackDeps, registry: CallbackRegistry, creds: CallbackCredentials, log: Logger): Promise<void> {
  const cfg = d.config.callbacks;
  if (!cfg) return;
  let todo = d.mailboxes.filter((m) => m.inbound);
  for (let attempt = 0; todo.length && !d.signal.aborted; attempt++) {
    const failed: MailboxRuntime[] = [];
    for (const m of todo) {
      try {
        const r = await ensureRegistration(registry, creds, cfg.publicUrl, m.mailboxId);
        log.info({ mailbox: m.name, callbackId: r.callbackId, action: r.action, removed: r.removed }, 'callback registered');
      } catch (err) {
        failed.push(m);
        log.warn({ mailbox: m.name, ...errorFields(err) }, 'cannot register the callback; polling goes on, retrying');
      }
    }
    todo = failed;
    if (todo.length) await d.sleep(Math.min(d.config.schedule.poll, 60_000) * Math.min(2 ** attempt, 8), d.signal).catch(() => undefined);
  }
}
