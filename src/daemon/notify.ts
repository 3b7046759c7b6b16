/**
 * systemd readiness and watchdog. Node cannot write to the notify socket itself (a datagram unix
 * socket), so the `systemd-notify` tool is spawned; it needs `NotifyAccess=all` in the unit.
 * Outside systemd (no NOTIFY_SOCKET) everything here is a no-op.
 */
import { spawn } from 'node:child_process';
import type { Logger } from '../log.js';
import { errorFields } from '../errors/index.js';

export class SystemdNotifier {
  private watchdog: NodeJS.Timeout | undefined;
  private readonly enabled: boolean;

  constructor(
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.enabled = Boolean(env.NOTIFY_SOCKET);
  }

  private send(...args: string[]): void {
    if (!this.enabled) return;
    const child = spawn('systemd-notify', args, { stdio: 'ignore', env: this.env });
    child.on('error', (err) => this.logger.warn({ ...errorFields(err) }, 'systemd-notify failed'));
  }

  ready(): void {
    this.send('--ready', `--pid=${process.pid}`);
    const usec = Number(this.env.WATCHDOG_USEC ?? 0);
    if (this.enabled && usec > 0) {
      this.watchdog = setInterval(() => this.send(`--pid=${process.pid}`, 'WATCHDOG=1'), Math.max(1000, usec / 2000));
      this.watchdog.unref();
    }
  }

  /**
   * While start-up waits for an unreachable service, asks systemd for more time instead of being
   * killed by TimeoutStartSec and restarted into the same wait.
   */
  extendStart(ms: number): void {
    this.send(`--pid=${process.pid}`, `EXTEND_TIMEOUT_USEC=${Math.ceil(ms * 1000)}`, '--status=waiting for the service');
  }

  stopping(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.send(`--pid=${process.pid}`, 'STOPPING=1');
  }
}
