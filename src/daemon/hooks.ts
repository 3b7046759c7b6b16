/**
 * Post-delivery hooks: an operator's command run after each delivered file (to start an ERP
 * import, move a copy, notify someone). The command is an argv — never a shell string, so a file
 * name can never become shell syntax — and learns the item from environment variables. A hook runs
 * after the delivery is final, so whatever it does or fails to do, the file is not lost: a failure,
 * a timeout or a missing program is one log line with its exit code and the first KiB of stderr.
 * The daemon's own GRIDSYNC_* variables (which may carry the API key) are not passed on.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import PQueue from 'p-queue';
import type { DeliveredEvent, EventBus, PipelineEvents } from '../events/index.js';
import type { HookSettings } from '../config/index.js';
import type { Logger } from '../log.js';
import { errorFields } from '../errors/index.js';
import { sanitizeFileName } from '../files/index.js';

/** The hooks section of the config, plus the bound of the queue of runs waiting for a slot. */
export type HookConfig = Readonly<HookSettings> & {
  /** Hook runs waiting for a slot beyond which new ones are dropped (default {@link MAX_QUEUED_HOOKS}). */
  readonly maxQueued?: number;
};

/** Hook runs that may wait for a slot: a hook slower than the deliveries must not queue without bound. */
export const MAX_QUEUED_HOOKS = 1000;
/** The first bytes of a failing hook's stderr that reach the log. */
const STDERR_KEPT = 1024;
/** How long a hook's stderr is still read after it exited (a background process may keep it open). */
const STDERR_GRACE_MS = 200;

export type HookKind = 'received' | 'sent';

/**
 * A value as an environment variable can carry it: the service chooses file names and partner
 * descriptions, and a NUL in one would make the hook impossible to start (the kernel's
 * environment is NUL-terminated).
 */
const envSafe = (value: string): string => value.replaceAll('\0', '\uFFFD');

/** The environment a hook sees: the daemon's, less its own GRIDSYNC_* settings, plus the item. */
export function hookEnvironment(base: NodeJS.ProcessEnv, kind: HookKind, e: DeliveredEvent): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith('GRIDSYNC_') && !k.startsWith('CREDENTIALS_DIRECTORY')) env[k] = v;
  const item = e.item;
  env.GRIDSYNC_HOOK_EVENT = kind;
  env.GRIDSYNC_HOOK_MAILBOX = envSafe(e.mailbox);
  env.GRIDSYNC_HOOK_BYTES = String(e.bytes);
  if (item) {
    env.GRIDSYNC_HOOK_PARCEL_ID = String(item.parcelId);
    env.GRIDSYNC_HOOK_FILE_NAME = envSafe(item.fileName ?? '');
    env.GRIDSYNC_HOOK_SAFE_FILE_NAME = sanitizeFileName(item.fileName, `parcel-${item.parcelId}`);
    env.GRIDSYNC_HOOK_PATH = envSafe(item.path ?? '');
    env.GRIDSYNC_HOOK_PARTNER = item.partner === null ? '' : String(item.partner);
    env.GRIDSYNC_HOOK_PARTNER_NAME = envSafe(item.partnerName ?? '');
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
    const maxQueued = this.config.maxQueued ?? MAX_QUEUED_HOOKS;
    if (this.queue.size >= maxQueued) {
      // The file is delivered either way; a hook run that would wait behind this many is dropped.
      this.logger.warn(
        { hook: kind, mailbox: e.mailbox, parcelId: e.item.parcelId, path: e.item.path, queued: this.queue.size, maxQueued },
        'post-delivery hook not run: too many hooks waiting; the file is delivered',
      );
      return;
    }
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
      let finished = false;
      const couldNotStart = (err: unknown): void => {
        this.logger.warn({ ...errorFields(err), ...context }, 'post-delivery hook could not start; the file is delivered');
        resolve();
      };
      let child: ChildProcessByStdio<null, null, Readable>;
      try {
        // Its own process group: the timeout kills whatever the hook started, not only the hook.
        child = spawn(command, args, { env: hookEnvironment(this.env, kind, e), stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      } catch (err) {
        // spawn refuses some arguments synchronously: one log line, as for a missing program.
        couldNotStart(err);
        return;
      }
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < STDERR_KEPT) stderr += chunk.slice(0, STDERR_KEPT - stderr.length);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid);
      }, this.config.timeout);
      const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
        child.stderr.destroy();
        if (code === 0) this.logger.debug(context, 'post-delivery hook done');
        else
          this.logger.warn(
            { ...context, exitCode: code, signal, timedOut, stderr: stderr.trim() || undefined },
            timedOut
              ? 'post-delivery hook timed out and was killed with its process group; the file is delivered'
              : 'post-delivery hook failed; the file is delivered',
          );
        resolve();
      };
      child.on('error', (err) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        couldNotStart(err);
      });
      // Done when the hook exits, not when its stderr closes: a process it left in the background
      // may hold that pipe for hours. What it wrote before exiting is read for a moment more.
      child.on('exit', (code, signal) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        const grace = setTimeout(() => finish(code, signal), STDERR_GRACE_MS);
        child.stderr.once('close', () => {
          clearTimeout(grace);
          finish(code, signal);
        });
      });
    });
  }
}

/** SIGKILL to a hook's whole process group (it may have exited meanwhile). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left to kill.
  }
}
