/** `gridsync requeue`: put files from an errorDir back into their outbox (the journal keeps the history). */
import fs from 'node:fs';
import path from 'node:path';
import { UnsafeFileError } from '../files/index.js';
import { IllegalOutboundTransitionError, OutboundJournal, type OutboundRow } from '../journal/index.js';
import { moveBackToOutbox, requeueName } from '../outbound/index.js';
import { output, parseCommand, runCommand, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigWarning, operatorJournal } from './common.js';
import { describeForOperator, EXIT_INCOMPLETE, EXIT_OK, EXIT_OPERATOR } from './exit-codes.js';
import { print, printError } from './print.js';

const USAGE = `usage: gridsync requeue [-c FILE] [--force] (FILE… | --all)

Moves files from an errorDir back into the outbox they came from and removes their .error.json.
FILE is a path (or a name inside an errorDir). Works while the daemon runs. Exit 1 when a file
could not be requeued; 2 when a FILE is in no errorDir (the others are requeued all the same).

--force: send these files even if the same content was sent before (the duplicate check is
skipped for the next copy of each; a copy dropped after that is checked again).`;

/** A file in errorDir without its in_error row: retention drops the row only while the file is away from errorDir. */
const NO_RECORD =
  'the journal holds no record of this file (retention dropped it while the file was away from errorDir, or the file comes from another journal)';
const WITHOUT_FORCE =
  'Requeue it without --force: it is checked as a new file, and should the duplicate check refuse it again, its new record lets --force send it';

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, { ...CONFIG_OPTION, all: { type: 'boolean' }, force: { type: 'boolean' } }, true);
    if (!args) return 0;
    if (!args.values.all && args.positionals.length === 0) throw new UsageError(`name files to requeue, or --all\n\n${USAGE}`);
    const cfg = loadConfigWarning(args.values.config).config;
    const outboxes = cfg.mailboxes.flatMap((m) => (m.outbox ? [m.outbox] : []));
    if (outboxes.length === 0) throw new UsageError('no mailbox has an outbox');
    const targets: { file: string; outbox: string; marker?: string }[] = [];
    for (const o of outboxes) {
      const inError = fs.existsSync(o.errorDir) ? fs.readdirSync(o.errorDir).filter((n) => !n.endsWith('.error.json')) : [];
      for (const name of inError) {
        const file = path.join(o.errorDir, name);
        const wanted = args.values.all || args.positionals.some((p) => path.resolve(p) === file || p === name);
        if (wanted) targets.push({ file, outbox: o.dir, ...(o.readiness === 'marker' ? { marker: o.markerSuffix } : {}) });
      }
    }
    if (args.values.all && targets.length === 0 && !output.quiet)
      print(`nothing to requeue: no file in ${outboxes.map((o) => o.errorDir).join(', ')}\n`);
    const missing = args.positionals.filter((p) => !targets.some((t) => path.resolve(p) === t.file || path.basename(t.file) === p));
    if (missing.length) printError(`not found in any errorDir: ${missing.join(', ')}\n`);
    // A name no errorDir holds is the operator's to correct (a typo, another config's folder): no
    // later run finds it, so it exits as a usage mistake does, whatever else was requeued.
    const exit = (skipped: number): number => (missing.length ? EXIT_OPERATOR : skipped ? EXIT_INCOMPLETE : EXIT_OK);
    // Nothing to move: leave the stateDir alone (opening the journal would create it).
    if (targets.length === 0) return exit(0);
    const journal = await operatorJournal(cfg);
    const rows = new OutboundJournal(journal);
    const force = args.values.force === true;
    let skipped = 0;
    try {
      for (const t of targets) {
        // Looked up before the move: --force is a mark on the file's record, and without a record
        // it would be a promise the next claim does not keep (the duplicate check refuses it again).
        const found = await rows.inErrorAt(t.file);
        if (found.length === 0 && force) {
          printError(`not requeued ${t.file}: ${NO_RECORD}, and --force marks that record. ${WITHOUT_FORCE}\n`);
          skipped++;
          continue;
        }
        let name: string;
        try {
          name = await requeueName(t.file);
        } catch (err) {
          // A report someone replaced with a link, FIFO or device (requeue often runs as root).
          if (!(err instanceof UnsafeFileError)) throw err;
          printError(`skipped ${t.file}: ${err.message}\n`);
          skipped++;
          continue;
        }
        // Journalled before the move: a daemon may claim the file the moment it is in the outbox
        // (stableMs 0, a marker that follows it), and without the force mark it is refused again.
        const marked = await markRequeued(rows, found, force);
        if (marked === 0 && force) {
          printError(
            `not requeued ${t.file}: its record left the journal meanwhile (retention), and --force marks that record. ${WITHOUT_FORCE}\n`,
          );
          skipped++;
          continue;
        }
        let dest: string;
        try {
          dest = await moveBackToOutbox(t.file, t.outbox, name, Date.now, t.marker);
        } catch (err) {
          printError(`${unfinished(t, force, err)}\n`);
          skipped++;
          continue;
        }
        if (!output.quiet)
          print(
            `requeued ${t.file} → ${dest}${marked === 0 ? ` (${NO_RECORD}: it is checked and sent as a new file)` : force ? ' (sent even if a duplicate)' : ''}\n`,
          );
      }
    } finally {
      await journal.close();
    }
    return exit(skipped);
  });
}

/**
 * Why a file whose row is requeued already did not go back, or did not finish going back. The
 * journal's mark (with --force: send it even if a duplicate) holds however the file reaches the
 * outbox, so requeuing it again, or moving it by hand, completes it.
 */
function unfinished(t: { file: string; outbox: string; marker?: string }, force: boolean, err: unknown): string {
  const why = describeForOperator(err);
  if (fs.existsSync(t.file))
    return (
      `not moved back: ${t.file} — ${why}. The journal has it as requeued already` +
      (force ? `, marked to be sent even if a duplicate; that holds however it reaches ${t.outbox}: ` : ': ') +
      `fix the cause and requeue it again, or move it into ${t.outbox} by hand`
    );
  return (
    `moved back into ${t.outbox}, but not finished: ${t.file} — ${why}. Its report may be left in errorDir` +
    (t.marker ? `, and its marker (*${t.marker}) missing: without it the file is not sent` : '')
  );
}

/**
 * Marks the file's rows requeued; returns how many. A row that left in_error since it was looked up
 * (retention pruned it, another requeue marked it) is passed over.
 */
async function markRequeued(rows: OutboundJournal, found: readonly OutboundRow[], force: boolean): Promise<number> {
  let marked = 0;
  for (const r of found) {
    try {
      await rows.markRequeued(r.id, force);
      marked++;
    } catch (err) {
      if (!(err instanceof IllegalOutboundTransitionError)) throw err;
    }
  }
  return marked;
}
