/** `gridsync once`: one full cycle of every mailbox, then exit with a status code for schedulers. */
import path from 'node:path';
import { DEFAULTS } from '../config/defaults.js';
import { Daemon, ONCE_MAILBOX_CONCURRENCY } from '../daemon/index.js';
import { output, parseCommand, runCommand, untilSignal, usageProblem } from './args.js';
import { dryRun, formatDryRun, wouldRefuse } from './dry-run.js';
import { progressLogFields, ProgressView } from './progress.js';
import { gridsyncVersion } from '../version.js';
import { CONFIG_OPTION, loadConfigOrThrow, loadConfigWarning, loggerFor } from './common.js';
import { print, printError } from './print.js';

const USAGE = `usage: gridsync once [-c FILE] [--dry-run [--json]] [--log-level L] [--quiet]

--dry-run: what a cycle would do, changing nothing — no journal write, no folder, no download,
confirmation, upload or move. Lists the pending parcels it would receive, and each outbox file
with the verdict of the checks before sending (the real ones, read-only): would send, would refuse
(with the reason and the code its error report would carry: empty file, too large, invalid
interchange, duplicate content, a symlink or FIFO, …), or not ready; and first what an earlier
run left unfinished (a parcel staged, a file in processing/), which a real run finishes first.
Exit 1 when a file would be refused (as once would), 2 when the journal holds the work of another
service (once refuses it too), else 0; --json prints the same as a JSON object.

On a terminal: a live line per mailbox and direction (items done/total, bytes, rate, ETA), then a
summary table; elsewhere a "once started" log line, then a progress log line (with rate and ETA)
at most every 10 s.

Recovers what a previous run left unfinished, drains every inbox and outbox (up to ${ONCE_MAILBOX_CONCURRENCY} mailboxes
at a time), and exits. After a transient failure (the service wobbling, an item still pending) it
runs further cycles, with pauses, for at most once.drainTimeout (default ${DEFAULTS.once.drainTimeoutMs / 60_000}m; env
GRIDSYNC_ONCE_DRAIN_TIMEOUT); a service that cannot be reached at all from the start ends the run
at once (exit 1). Then, when the last one is a day old, the retention pass of run (never with
--dry-run). Exit codes:
  0 all done · 1 some item failed (details logged, files in errorDir), some item could not be
  delivered (inbox not writable, disk full — the reasons are printed), the service was unreachable,
  or a signal interrupted the cycle · 2 config, credentials, folders or journal lock (another
  gridsync is running), or the shared journal found damaged during the run (a table missing).
  SIGTERM/SIGINT: no new items, in-flight transfers get shutdownTimeout, then exit 1 (the
  journal resumes the rest next time); a second signal exits at once.`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, { ...CONFIG_OPTION, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } });
    if (!args) return 0;
    // Taken alone, --json would start a real run where the operator asked for a report.
    if (args.values.json && !args.values['dry-run']) throw usageProblem('--json goes with --dry-run: a real run reports in its log', USAGE);
    // A real run logs the config's warnings (loggerFor); a dry run has no log.
    const loaded = args.values['dry-run'] ? loadConfigWarning(args.values.config) : loadConfigOrThrow(args.values.config);
    if (args.values['dry-run']) {
      const report = await dryRun(loaded.config, path.resolve(loaded.file));
      print(`${args.values.json ? JSON.stringify(report, null, 2) : formatDryRun(report)}\n`);
      return wouldRefuse(report) ? 1 : 0;
    }
    const tty = process.stderr.isTTY === true && !output.quiet;
    // On a terminal the progress lines replace the per-item info lines (--log-level brings them back).
    const logger = loggerFor(loaded, tty ? 'warn' : undefined);
    // The first line of a cron job's log: which config, how many mailboxes, how long it may take.
    logger.info(
      {
        version: gridsyncVersion(),
        config: loaded.file,
        mailboxes: loaded.config.mailboxes.length,
        drainTimeoutMs: loaded.config.once.drainTimeout,
      },
      'once started',
    );
    const interrupted = new AbortController();
    void untilSignal().then((signal) => {
      interrupted.abort();
      const deadlineMs = loaded.config.shutdownTimeout;
      logger.warn({ signal, deadlineMs }, 'once: interrupted; no new items, finishing in-flight transfers');
      // Past the deadline the process ends like a crash, which the journal is built to resume.
      setTimeout(() => {
        logger.warn({ deadlineMs }, 'once: shutdown deadline reached; exiting (the journal resumes the rest next time)');
        logger.flush();
        process.exit(1);
      }, deadlineMs).unref();
    });
    // A refusal (StartupError) is said once, on stderr with its code, by the command's caller.
    const daemon = await Daemon.open({ loaded, logger, waitForService: false, signal: interrupted.signal }).finally(() => logger.flush());
    interrupted.signal.addEventListener('abort', () => daemon.interrupt(), { once: true });
    void daemon.fatal.stopped.then(() => daemon.interrupt());
    const view = new ProgressView({
      tty,
      out: process.stderr,
      log: (rows) => {
        if (!output.quiet) logger.info({ progress: progressLogFields(rows, Date.now()) }, 'once: progress');
      },
    });
    const ticker = setInterval(() => view.tick(daemon.progressRows()), tty ? 250 : 1000);
    try {
      const { totals: t, left, rounds, timedOut, unreachable } = await daemon.runOnce();
      clearInterval(ticker);
      // Said once on stderr by the command's caller, as a start refused for it (exit 2).
      if (daemon.fatal.error) throw daemon.fatal.error;
      view.finish(daemon.progressRows());
      logger.info({ inbound: t.inbound, outbound: t.outbound, rounds, interrupted: interrupted.signal.aborted }, 'once: done');
      // Exit 0 only when nothing deliverable is left: a scheduler running `once` must see every
      // parcel or file this run could not deliver, each named with its reason.
      if (left.length) {
        logger.error({ left, timedOut, unreachable }, unreachable ? 'once: the service is not reachable' : 'once: items left undelivered');
        const lines = left.map(
          (l) =>
            `  ${l.mailbox} ${l.direction === 'in' ? 'inbound ' : 'outbound'} ${l.item}: ${l.kind}: ${l.reason}${l.code ? ` [${l.code}]` : ''}`,
        );
        const head = unreachable
          ? 'gridsync once: the service is not reachable — nothing was exchanged; the next run picks everything up [STARTUP_UNREACHABLE]:'
          : timedOut
            ? `gridsync once: items left undelivered (once.drainTimeout reached after ${rounds} cycles):`
            : 'gridsync once: items left undelivered:';
        printError(`${head}\n${lines.join('\n')}\n`);
      }
      const code = left.length > 0 || interrupted.signal.aborted ? 1 : 0;
      // After the transfers and their summary, and with their exit code settled: retention neither
      // delays them nor changes the code (a signal during the pass stops it, the code stays).
      await daemon.retain();
      return code;
    } finally {
      clearInterval(ticker);
      await daemon.close();
      logger.flush();
    }
  });
}
