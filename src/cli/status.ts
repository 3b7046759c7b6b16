/** `gridsync status`: the journal's view — counts per state, last cycle, recent failures. */
import path from 'node:path';
import { InboundJournal, Journal, OutboundJournal } from '../journal/index.js';
import { parseCommand, runCommand, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigOrThrow } from './common.js';

const USAGE = `usage: gridsync status [-c FILE] [--json]

Reads the journal (also while the daemon runs): counts per state, the last cycle, recent failures.`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, { ...CONFIG_OPTION, json: { type: 'boolean' } });
    if (!args) return 0;
    const loaded = loadConfigOrThrow(args.values.config);
    const file = path.join(loaded.config.stateDir, 'journal.sqlite');
    let journal: Journal;
    try {
      journal = Journal.open(file, { readonly: true });
    } catch (err) {
      throw new UsageError(`cannot read the journal ${file}: ${(err as Error).message} (has gridsync run yet?)`);
    }
    try {
      const inbound = new InboundJournal(journal).summary();
      const outbound = new OutboundJournal(journal).summary();
      const lastCycle = journal.getMeta('lastCycle');
      const report = {
        journal: file,
        lastCycle: lastCycle ? (JSON.parse(lastCycle) as unknown) : null,
        inbound: { counts: inbound.counts, recentFailures: inbound.recentFailures.map((r) => ({ mailboxId: r.mailbox_id, parcelId: r.parcel_id, fileName: r.file_name, attempts: r.attempts, reason: r.last_error, at: new Date(r.updated_at).toISOString() })) },
        outbound: { counts: outbound.counts, recentFailures: outbound.recentFailures.map((r) => ({ mailboxId: r.mailbox_id, file: r.file_name, state: r.state, errorCode: r.error_code, httpStatus: r.http_status, reason: r.last_error, errorFile: r.final_path, at: new Date(r.updated_at).toISOString() })) },
      };
      if (args.values.json) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return 0;
      }
      const table = (title: string, counts: Record<string, number>): string =>
        `${title}\n${Object.keys(counts).length === 0 ? '  (nothing yet)' : Object.entries(counts).map(([k, v]) => `  ${k.padEnd(12)} ${String(v).padStart(8)}`).join('\n')}`;
      const lines = [
        `journal     ${file}`,
        `last cycle  ${lastCycle ? (JSON.parse(lastCycle) as { at: string }).at : 'never'}`,
        '',
        table('inbound parcels', inbound.counts),
        '',
        table('outbound files', outbound.counts),
      ];
      if (report.inbound.recentFailures.length || report.outbound.recentFailures.length) {
        lines.push('', 'recent failures');
        for (const f of report.inbound.recentFailures) lines.push(`  in   parcel ${f.parcelId} ${f.fileName ?? ''}: ${f.reason ?? ''} (${f.at})`);
        for (const f of report.outbound.recentFailures) lines.push(`  out  ${f.file}: ${f.reason ?? ''}${f.errorFile ? ` → ${f.errorFile}` : ''} (${f.at})`);
      }
      process.stdout.write(`${lines.join('\n')}\n`);
      return 0;
    } finally {
      journal.close();
    }
  });
}
