/**
 * Post-delivery hooks: an operator's command run after each delivered file (to start an ERP
 * import, move a copy, notify someone). The command is an argv — never a shell string, so a file
 * name can never become shell syntax — and learns the item from environment variables. A hook runs
 * after the delivery is final, so whatever it does or fails to do, the file is not lost: a failure,
 * a timeout or a missing program is one log line with its exit code and the first KiB of stderr.
 * The daemon's own GRIDSYNC_* variables (which may carry the API key) are not passed on.
 */
import { spawn } from 'node:child_process';
import PQueue from 'p-queue';
import type { DeliveredEvent, EventBus, PipelineEvents } from '../events/index.js';
import type { HookSettings } from '../config/index.js';
import type { Logger } from '../log.js';
import { errorFields } from '../errors/index.js';

export type HookConfig = Readonly<HookSettings>;

export type HookKind = 'received' | 'sent';

/** The environment a hook sees: the daemon's, less its own GRIDSYNC_* settings, plus the item. */
export function hookEnvironment(base: NodeJS.ProcessEnv, kind: HookKind, e: DeliveredEvent): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith('GRIDSYNC_') && !k.startsWith('CREDENTIALS_DIRECTORY')) env[k] = v;
  const item = e.item;
  env.GRIDSYNC_HOOK_EVENT = kind;
  env.GRIDSYNC_HOOK_MAILBOX = e.mailbox;
  env.GRIDSYNC_HOOK_BYTES = String(e.bytes);
  if (item) {
    env.GRIDSYNC_HOOK_PARCEL_ID = String(item.parcelId);
    env.GRIDSYNC_HOOK_FILE_NAME = item.fileName ?? '';
    env.GRIDSYNC_HOOK_PATH = item.path ?? '';
    env.GRIDSYNC_HOOK_PARTNER = item.partner === null ? '' : String(item.partner);
    env.GRIDSYNC_HOOK_PARTNER_NAME = item.partnerName ?? '';
  }
  return env;
}

export class HookRunner {
  private readonly queue: PQueue;

  constructor(
    private readonly config: HookConfig,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.queue = new PQueue({ concurrency: config.concurrency });
  }

  /** Subscribes to the deliveries of every pipeline on the bus. */
  subscribe(events: EventBus<PipelineEvents>): void {
    const { afterReceive, afterSend } = this.config;
    if (afterReceive) events.on('inbound:received', (e) => this.enqueue(afterReceive, 'received', e));
    if (afterSend) events.on('outbound:sent', (e) => this.enqueue(afterSend, 'sent', e));
  }

  private enqueue(argv: readonly string[], kind: HookKind, e: DeliveredEvent): void {
    if (!e.item) return;
    void this.queue.add(() => this.run(argv, kind, e));
  }

  /** Waits for the hooks already started (bounded by their timeout); drops those not yet started. */
  async close(): Promise<void> {
    this.queue.clear();
    await this.queue.onIdle();
  }

  private run(argv: readonly string[], kind: HookKind, e: DeliveredEvent): Promise<void> {
    const [command, ...args] = argv as [string, ...string[]];
    const context = { hook: kind, command, mailbox: e.mailbox, parcelId: e.item?.parcelId, path: e.item?.path };
    return new Promise((resolve) => {
      let stderr = '';
      let timedOut = false;
      const child = spawn(command, args, { env: hookEnvironment(this.env, kind, e), stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < 1024) stderr += chunk.slice(0, 1024 - stderr.length);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.config.timeout);
      child.on('error', (err) => {
        clearTimeout(timer);
        this.logger.warn({ ...context, ...errorFields(err) }, 'post-delivery hook could not start; the file is delivered');
        resolve();
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) this.logger.debug(context, 'post-delivery hook done');
        else
          this.logger.warn(
            { ...context, exitCode: code, signal, timedOut, stderr: stderr.trim() || undefined },
            timedOut
              ? 'post-delivery hook timed out and was killed; the file is delivered'
              : 'post-delivery hook failed; the file is delivered',
          );
        resolve();
      });
    });
  }
}
