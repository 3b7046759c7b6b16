/** `gridsync status`: the journal's view — counts per state, last cycle, recent failures. */
import fs from 'node:fs';
import type { Config } from '../config/index.js';
import {
  describeJournal,
  INBOUND_UNFINISHED,
  InboundJournal,
  isPostgresUrl,
  Journal,
  JournalLockedError,
  OUTBOUND_UNFINISHED,
  OutboundJournal,
  openExistingJournal,
  type JournalStore,
} from '../journal/index.js';
import { journalAdvice } from '../daemon/index.js';
import { parseCommand, runCommand, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigWarning, refuseStateDirNotFolder } from './common.js';
import { print } from './print.js';
import { leaseLine, mailboxLease } from './status-leases.js';

const USAGE = `usage: gridsync status [-c FILE] [--json]

Reads the journal (also while the daemon runs): whether a daemon is running, per mailbox who holds
it (owner, fencing token, lease expiry on the database's clock), what is in flight and what waits (inbound parcels listed but not yet downloaded; outbox files not yet
claimed; files in errorDir), counts per state, the last cycle, recent failures.`;

/** The pid of the gridsync holding the journal's lock, or null when none runs. */
function runningDaemon(file: string): { running: boolean; pid: number | null } {
  try {
    // Nothing was written: close() is done before it returns.
    void Journal.open(file).close();
    return { running: false, pid: null };
  } catch (err) {
    if (err instanceof JournalLockedError) return { running: true, pid: err.holderPid ?? null };
    return { running: false, pid: null };
  }
}

const countFiles = (dir: string | undefined, skip: (name: string) => boolean = () => false): number | null => {
  if (!dir) return null;
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && !skip(e.name)).length;
  } catch {
    return null;
  }
};

/** Unfinished rows past their first sight (`listed` is shown as waiting). */
const IN_FLIGHT_IN = INBOUND_UNFINISHED.filter((s) => s !== 'listed');

async function perMailbox(cfg: Config, journal: JournalStore, sqliteDaemon: { running: boolean; pid: number | null } | null) {
  const inJ = new InboundJournal(journal);
  const outJ = new OutboundJournal(journal);
  const leases = await journal.leases.list();
  const rows = cfg.mailboxes.map(async (m) => {
    const id = m.mailboxId;
    const lease = mailboxLease(id, leases, sqliteDaemon);
    const inbound = m.inbox
      ? id === undefined
        ? { note: "the key user's own mailbox (id learned at start-up): see the totals below" }
        : { inFlight: (await inJ.inStates(id, IN_FLIGHT_IN)).length, waiting: (await inJ.inStates(id, ['listed'])).length }
      : undefined;
    const outbound = m.outbox
      ? {
          ...(id === undefined ? {} : { inFlight: (await outJ.inStates(id, m.outbox.dir, OUTBOUND_UNFINISHED)).length }),
          waitingInOutbox: countFiles(
            m.outbox.dir,
            (n) => n.startsWith('.') || n.endsWith('.tmp') || n.endsWith('.part') || n.endsWith(m.outbox?.markerSuffix ?? '.done'),
          ),
          inErrorDir: countFiles(m.outbox.errorDir, (n) => n.endsWith('.error.json')),
        }
      : undefined;
    return { name: m.name ?? String(id), mailboxId: id ?? null, lease, ...(inbound ? { inbound } : {}), ...(outbound ? { outbound } : {}) };
  });
  return Promise.all(rows);
}

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, { ...CONFIG_OPTION, json: { type: 'boolean' } });
    if (!args) return 0;
    const loaded = loadConfigWarning(args.values.config);
    refuseStateDirNotFolder(loaded.config);
    const where = { url: loaded.config.journal.url, stateDir: loaded.config.stateDir };
    const file = describeJournal(where);
    let journal: JournalStore | undefined;
    try {
      journal = await openExistingJournal(where);
    } catch (err) {
      throw new UsageError(`cannot read the journal: ${journalAdvice(file, err)}`);
    }
    if (!journal) {
      const stateDir = isPostgresUrl(where.url) ? '' : ` (stateDir ${where.stateDir})`;
      throw new UsageError(`no journal at ${file} yet: gridsync has not run with this config${stateDir}`);
    }
    // PostgreSQL: instances show as the owners of live leases, not as a lock on this host.
    const daemon = isPostgresUrl(where.url) ? { running: null, pid: null } : runningDaemon(file);
    try {
      const mailboxes = await perMailbox(loaded.config, journal, daemon.running === null ? null : daemon);
      const inbound = await new InboundJournal(journal).summary();
      const outbound = await new OutboundJournal(journal).summary();
      const lastCycle = await journal.getMeta('lastCycle');
      const lastOnceText = await journal.getMeta('lastOnce');
      const lastOnce = lastOnceText
        ? (JSON.parse(lastOnceText) as {
            at: string;
            left: { mailbox: string; direction: string; item: string; kind: string; reason: string; code?: string }[];
          })
        : null;
      const report = {
        journal: file,
        daemon,
        mailboxes,
        lastCycle: lastCycle ? (JSON.parse(lastCycle) as unknown) : null,
        lastOnce,
        inbound: {
          counts: inbound.counts,
          recentFailures: inbound.recentFailures.map((r) => ({
            mailboxId: r.mailbox_id,
            parcelId: r.parcel_id,
            fileName: r.file_name,
            attempts: r.attempts,
            reason: r.last_error,
            at: new Date(r.updated_at).toISOString(),
          })),
        },
        outbound: {
          counts: outbound.counts,
          recentFailures: outbound.recentFailures.map((r) => ({
            mailboxId: r.mailbox_id,
            file: r.file_name,
            state: r.state,
            errorCode: r.error_code,
            httpStatus: r.http_status,
            reason: r.last_error,
            errorFile: r.final_path,
            at: new Date(r.updated_at).toISOString(),
          })),
        },
      };
      if (args.values.json) {
        print(`${JSON.stringify(report, null, 2)}\n`);
        return 0;
      }
      const table = (title: string, counts: Record<string, number>): string =>
        `${title}\n${
          Object.keys(counts).length === 0
            ? '  (nothing yet)'
            : Object.entries(counts)
                .map(([k, v]) => `  ${k.padEnd(12)} ${String(v).padStart(8)}`)
                .join('\n')
        }`;
      const n = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));
      const lines = [
        `daemon      ${daemon.running === null ? 'see the leases (shared journal)' : daemon.running ? `running (pid ${daemon.pid ?? '?'})` : 'not running'}`,
        `journal     ${file}`,
        `last cycle  ${lastCycle ? (JSON.parse(lastCycle) as { at: string }).at : 'never'}`,
        '',
        'mailbox        in: in flight  waiting   out: in flight  waiting  errorDir',
        ...mailboxes.map((m) => {
          const i = m.inbound && 'inFlight' in m.inbound ? m.inbound : undefined;
          const o = m.outbound;
          return `  ${m.name.padEnd(14)} ${m.inbound ? `${n(i?.inFlight).padStart(9)}  ${n(i?.waiting).padStart(7)}` : `${'-'.padStart(9)}  ${'-'.padStart(7)}`}   ${o ? `${n(o.inFlight).padStart(13)}  ${n(o.waitingInOutbox).padStart(7)}  ${n(o.inErrorDir).padStart(8)}` : ''}`.trimEnd();
        }),
        '',
        'lease          owner                                    token  expires',
        ...mailboxes.map((m) => leaseLine(m.name, m.lease)),
        '',
        table('inbound parcels', inbound.counts),
        '',
        table('outbound files', outbound.counts),
      ];
      if (lastOnce?.left.length) {
        lines.push('', `left undelivered by the last \`once\` (${lastOnce.at})`);
        for (const l of lastOnce.left)
          lines.push(
            `  ${l.direction === 'in' ? 'in ' : 'out'}  ${l.mailbox} ${l.item}: ${l.kind}: ${l.reason}${l.code ? ` [${l.code}]` : ''}`,
          );
      }
      if (report.inbound.recentFailures.length || report.outbound.recentFailures.length) {
        lines.push('', 'recent failures');
        for (const f of report.inbound.recentFailures)
          lines.push(`  in   parcel ${f.parcelId} ${f.fileName ?? ''}: ${f.reason ?? ''} (${f.at})`);
        for (const f of report.outbound.recentFailures)
          lines.push(`  out  ${f.file}: ${f.reason ?? ''}${f.errorFile ? ` → ${f.errorFile}` : ''} (${f.at})`);
      }
      // Reasons come from the journal (one written before scrubbing may still hold secrets): print masks them.
      print(`${lines.join('\n')}\n`);
      return 0;
    } finally {
      await journal.close();
    }
  });
}
