/**
 * `gridsync once --dry-run`: what a cycle would send and receive, changing nothing — no journal
 * (read only when it exists), no folder created, nothing downloaded, confirmed, claimed or moved.
 * Read-only calls only: the session and each mailbox's pending inbox list.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { InboundJournal, Journal } from '../journal/index.js';
import { ignoreMatcher } from '../outbound/index.js';
import { formatBytes } from './progress.js';
import { connectService } from '../service/index.js';

export interface DryRunReport {
  readonly mailboxes: {
    readonly name: string;
    readonly mailboxId: number;
    readonly receive?: { parcelId: number; fileName: string | null; bytes: number | null; alreadyInJournal: boolean }[];
    readonly send?: { file: string; bytes: number }[];
  }[];
}

export async function dryRun(cfg: Config): Promise<DryRunReport> {
  const service = await connectService(cfg);
  const client = service.client;
  const journalFile = path.join(cfg.stateDir, 'journal.sqlite');
  const journal = fs.existsSync(journalFile) ? Journal.open(journalFile, { readonly: true }) : undefined;
  try {
    const me = (await client.sessionContext()).mailboxId ?? 0;
    const mailboxes: DryRunReport['mailboxes'][number][] = [];
    for (const m of cfg.mailboxes) {
      const mailboxId = m.mailboxId ?? me;
      const entry: {
        name: string;
        mailboxId: number;
        receive?: NonNullable<DryRunReport['mailboxes'][number]['receive']>;
        send?: NonNullable<DryRunReport['mailboxes'][number]['send']>;
      } = { name: m.name ?? `mb${mailboxId}`, mailboxId };
      if (m.inbox) {
        const pending = await client.pendingInbox(mailboxId);
        const inJ = journal ? new InboundJournal(journal) : undefined;
        entry.receive = await Promise.all(
          pending.parcels.map(async (p) => ({
            parcelId: p.parcelId,
            fileName: p.fileName,
            bytes: p.bytes ?? null,
            alreadyInJournal: (await inJ?.get(mailboxId, p.parcelId)) !== undefined,
          })),
        );
      }
      if (m.outbox) {
        const ignored = ignoreMatcher(m.outbox.ignore);
        let names: fs.Dirent[] = [];
        try {
          names = fs.readdirSync(m.outbox.dir, { withFileTypes: true });
        } catch {
          // No outbox yet: nothing to send.
        }
        const marker = m.outbox.readiness === 'marker' ? m.outbox.markerSuffix : undefined;
        entry.send = names
          .filter((e) => e.isFile() && !ignored(e.name) && !(marker && e.name.endsWith(marker)))
          .filter((e) => !marker || fs.existsSync(path.join(m.outbox?.dir ?? '', e.name + marker)))
          .map((e) => ({ file: e.name, bytes: fs.statSync(path.join(m.outbox?.dir ?? '', e.name)).size }))
          .sort((a, b) => a.file.localeCompare(b.file));
      }
      mailboxes.push(entry);
    }
    return { mailboxes };
  } finally {
    await journal?.close();
    await service.close();
  }
}

export function formatDryRun(r: DryRunReport): string {
  const lines: string[] = ['dry run: nothing was downloaded, confirmed, sent or moved'];
  for (const m of r.mailboxes) {
    if (m.receive) {
      lines.push(`${m.name}: would receive ${m.receive.length} parcel(s)`);
      for (const p of m.receive)
        lines.push(
          `  in   parcel ${p.parcelId}  ${p.fileName ?? '(no name)'}  ${p.bytes === null ? '' : formatBytes(p.bytes)}${p.alreadyInJournal ? '  (in progress in the journal)' : ''}`,
        );
    }
    if (m.send) {
      lines.push(`${m.name}: would send ${m.send.length} file(s) (after the checks: envelope, duplicates, size)`);
      for (const f of m.send) lines.push(`  out  ${f.file}  ${formatBytes(f.bytes)}`);
    }
  }
  return lines.join('\n');
}
