/** `gridsync run`: the daemon, until SIGTERM/SIGINT. */
import { Daemon, StartupError } from '../daemon/index.js';
import { pausePoint } from '../journal/index.js';
import { parseCommand, runCommand, untilSignal } from './args.js';
import { CONFIG_OPTION, loadConfigOrThrow, loggerFor } from './common.js';
import { describeForOperator, exitCodeFor } from './exit-codes.js';
import { printError } from './print.js';
import { progressLogFields, ProgressView } from './progress.js';

const USAGE = `usage: gridsync run [-c FILE] [--log-level L] [--quiet]

Runs until SIGTERM/SIGINT: polls the inboxes on schedule, watches the outboxes, serves /healthz,
/readyz and /metrics when http.enabled. The first signal drains in-flight transfers (up to
shutdownTimeout), a second one exits at once. SIGHUP is ignored (restart to reload the config).
Exit codes: 0 clean stop · 2 config, credentials, folders or journal lock, or the shared journal
found damaged while running (a table or column missing: a start would refuse it too).`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, CONFIG_OPTION);
    if (!args) return 0;
    const loaded = loadConfigOrThrow(args.values.config);
    const logger = loggerFor(loaded);
    process.on('SIGHUP', () =>
      logger.warn({}, 'SIGHUP ignored: gridsync does not reload its config; restart the service to apply changes'),
    );
    const stopped = untilSignal();
    const stopWaiting = new AbortController();
    void stopped.then(() => stopWaiting.abort());
    let daemon: Daemon;
    try {
      daemon = await Daemon.open({ loaded, logger, waitForService: true, serveHttp: true, signal: stopWaiting.signal });
    } catch (err) {
      // A refusal is said once, on stderr with its code, by the command's caller.
      logger.flush();
      if (err instanceof StartupError && stopWaiting.signal.aborted) return 0;
      throw err;
    }
    logger.info({ config: loaded.file, mailboxes: loaded.config.mailboxes.length, stateDir: loaded.config.stateDir }, 'gridsync started');
    pausePoint('run.opened');
    try {
      await daemon.start();
    } catch (err) {
      // The open daemon already serves /healthz and holds the journal: a start that fails half-way
      // (the shared journal found damaged or gone under it) must close them, or the process would
      // stay up with its error printed, neither working nor exiting for systemd to restart it.
      await daemon.close();
      logger.flush();
      exitEvenIfHeld(exitCodeFor(err), daemon);
      throw err;
    }
    // Progress as a log line at most every 10 s while something moves (journald, a terminal alike).
    const view = new ProgressView({
      tty: false,
      out: process.stderr,
      log: (rows) => logger.info({ progress: progressLogFields(rows, Date.now()) }, 'progress'),
    });
    const ticker = setInterval(() => view.tick(daemon.progressRows()), 1000);
    ticker.unref();
    const sig = await Promise.race([stopped, daemon.fatal.stopped.then(() => undefined)]);
    clearInterval(ticker);
    logger.info({ signal: sig ?? null }, 'stopping: finishing in-flight transfers');
    await daemon.close();
    logger.info({ forced: daemon.forcedStop }, 'gridsync stopped');
    logger.flush();
    const fatal = daemon.fatal.error;
    // The same line and exit code a start refused for this would give (the log has it already).
    if (fatal) printError(`gridsync: ${describeForOperator(fatal)}\n`);
    const code = fatal ? exitCodeFor(fatal) : 0;
    // A forced stop leaves a transfer holding the event loop: exit now, the journal resumes it.
    if (daemon.forcedStop) process.exit(code);
    exitEvenIfHeld(code, daemon);
    return code;
  });
}

/**
 * After the daemon is closed: should a library still hold a handle, do not hang systemd's stop job
 * on it, nor go past the stop's bound (shutdownTimeout and its grace).
 */
function exitEvenIfHeld(code: number, daemon: Daemon): void {
  setTimeout(() => process.exit(code), Math.min(2000, daemon.stopLeftMs)).unref();
}
