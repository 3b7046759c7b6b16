/**
 * `gridsync once --dry-run`: what a cycle would send, refuse and receive, changing nothing — no
 * journal written (read only when it exists), no folder created, nothing downloaded, confirmed,
 * claimed or moved. The outbox files go through the checks of the real send (outbound's
 * `previewOutbox`). Read-only calls only: the session and each mailbox's pending inbox list.
 * What an earlier run left unfinished in the journal (a file in processing/, a parcel staged but
 * not placed) is listed too, with what a real run does with it first. A journal with rows of
 * another service is refused as a start refuses it.
 */
import type { Config } from '../config/index.js';
import {
  INBOUND_UNFINISHED,
  InboundJournal,
  OUTBOUND_UNFINISHED,
  OutboundJournal,
  openExistingJournal,
  type InboundRow,
} from '../journal/index.js';
import { pendingIds, undownloaded } from '../inbound/index.js';
import { previewOutbox } from '../outbound/index.js';
import { formatBytes } from './progress.js';
import { refuseAnotherService } from '../daemon/index.js';
import { connectService, type ServiceConnection } from '../service/index.js';

export interface DryRunReport {
  readonly mailboxes: {
    readonly name: string;
    readonly mailboxId: number;
    readonly receive?: { parcelId: number; fileName: string | null; bytes: number | null; alreadyInJournal: boolean }[];
    /** Files the checks pass: a real cycle would upload them. */
    readonly send?: { file: string; bytes: number }[];
    /** Files a real cycle would move to errorDir unsent, why, and the code of its error report. */
    readonly refuse?: { file: string; bytes: number | null; reason: string; code: string }[];
    /** Files not ready yet (no readiness marker): a real cycle leaves them in the outbox. */
    readonly wait?: { file: string; reason: string }[];
    /** Work an earlier run left unfinished (journal rows): a real cycle finishes it before anything new. */
    readonly unfinished?: Unfinished[];
  }[];
}

export interface Unfinished {
  readonly direction: 'in' | 'out';
  /** The parcel id (in) or the journal's file id (out). */
  readonly item: number;
  /** Where the content is now (the file in processing/, the staging file, the inbox file) or its name. */
  readonly file: string | null;
  readonly state: string;
  /** What a real run does with it. */
  readonly next: string;
}

/** What a real run does first with a row it finds unfinished, by state. */
/** A download not begun whose parcel a complete pending list no longer shows (src/inbound/taken-elsewhere.ts). */
const OFF_LIST =
  'looked up on the service, as the pending list no longer shows it: ends taken if the service shows it confirmed, else downloaded, placed and confirmed';
/** …and when the list is cut short, it cannot tell. */
const OFF_CUT_LIST = 'not on the pending list, which is cut short: left for a cycle whose list can tell';
const NEXT_IN: Record<(typeof INBOUND_UNFINISHED)[number], string> = {
  listed: OFF_LIST,
  downloading: OFF_LIST,
  staged: 'moved from its staging file into the inbox, then confirmed',
  placed: 'confirmed (it is in the inbox already)',
};
const NEXT_OUT: Record<(typeof OUTBOUND_UNFINISHED)[number], string> = {
  claiming: 'its claim is finished (moved to processing/), then it is checked and sent',
  claimed: 'checked and sent',
  uploading: 'the service is asked whether the last attempt arrived; sent again only if it did not',
  uploaded: 'moved to the sent folder (the service has it)',
  erroring: 'moved to errorDir with its reason',
};

/** What a run does next with an unfinished inbound row the pending list does not show; `cut`: the list is cut short. */
function nextIn(state: keyof typeof NEXT_IN, cut: boolean): string {
  return cut && undownloaded(state) ? OFF_CUT_LIST : NEXT_IN[state];
}

type MailboxReport = DryRunReport['mailboxes'][number];

/** `configFile` is named in the advice of a refusal (a journal of another service). */
export async function dryRun(cfg: Config, configFile: string): Promise<DryRunReport> {
  const journal = await openExistingJournal({ url: cfg.journal.url, stateDir: cfg.stateDir });
  let service: ServiceConnection;
  try {
    if (journal) await refuseAnotherService(journal, { baseUrl: cfg.api.baseUrl, configFile });
    service = await connectService(cfg);
  } catch (err) {
    await journal?.close();
    throw err;
  }
  const client = service.client;
  try {
    const me = (await client.sessionContext()).mailboxId ?? 0;
    const mailboxes: MailboxReport[] = [];
    for (const m of cfg.mailboxes) {
      const mailboxId = m.mailboxId ?? me;
      const entry: { -readonly [K in keyof MailboxReport]: MailboxReport[K] } = { name: m.name ?? `mb${mailboxId}`, mailboxId };
      const unfinished: Unfinished[] = [];
      if (m.inbox) {
        const pending = await client.pendingInbox(mailboxId);
        const inJ = journal ? new InboundJournal(journal) : undefined;
        // One read for the whole list, as the real listing does (a read per parcel is a round trip each on PostgreSQL).
        const known =
          (await inJ?.getMany(
            mailboxId,
            pending.parcels.map((p) => p.parcelId),
          )) ?? new Map<number, InboundRow>();
        // A parcel staged or placed is not downloaded again: it is listed below as unfinished only.
        const downloaded = (id: number): boolean => ['staged', 'placed'].includes(known.get(id)?.state ?? '');
        entry.receive = pending.parcels
          .filter((p) => !downloaded(p.parcelId))
          .map((p) => ({ parcelId: p.parcelId, fileName: p.fileName, bytes: p.bytes ?? null, alreadyInJournal: known.has(p.parcelId) }));
        const listed = new Set(entry.receive.map((p) => p.parcelId));
        const cut = pendingIds(pending).incomplete !== undefined;
        for (const r of (await inJ?.inStates(mailboxId, INBOUND_UNFINISHED)) ?? [])
          if (!listed.has(r.parcel_id))
            unfinished.push({
              direction: 'in',
              item: r.parcel_id,
              file: r.state === 'placed' ? r.final_path : (r.staging_path ?? r.file_name),
              state: r.state,
              next: nextIn(r.state as keyof typeof NEXT_IN, cut),
            });
      }
      if (m.outbox) {
        const outJ = journal ? new OutboundJournal(journal) : undefined;
        const verdicts = await previewOutbox(m.outbox, outJ, Date.now());
        entry.send = verdicts.flatMap((v) => (v.verdict === 'send' ? [{ file: v.file, bytes: v.bytes ?? 0 }] : []));
        entry.refuse = verdicts.flatMap((v) =>
          v.verdict === 'refuse' ? [{ file: v.file, bytes: v.bytes, reason: v.reason ?? '', code: v.code ?? '' }] : [],
        );
        entry.wait = verdicts.flatMap((v) => (v.verdict === 'wait' ? [{ file: v.file, reason: v.reason ?? '' }] : []));
        for (const r of (await outJ?.inStates(mailboxId, m.outbox.dir, OUTBOUND_UNFINISHED)) ?? [])
          unfinished.push({
            direction: 'out',
            item: r.id,
            file: r.processing_path ?? r.source_path,
            state: r.state,
            next: NEXT_OUT[r.state as keyof typeof NEXT_OUT],
          });
      }
      if (unfinished.length > 0) entry.unfinished = unfinished;
      mailboxes.push(entry);
    }
    return { mailboxes };
  } finally {
    await journal?.close();
    await service.close();
  }
}

/** A real cycle would leave something in errorDir: `once` would exit 1, and so does the dry run. */
export const wouldRefuse = (r: DryRunReport): boolean => r.mailboxes.some((m) => (m.refuse?.length ?? 0) > 0);

export function formatDryRun(r: DryRunReport): string {
  const lines: string[] = ['dry run: nothing was downloaded, confirmed, sent or moved'];
  for (const m of r.mailboxes) {
    if (m.unfinished?.length) {
      lines.push(`${m.name}: ${m.unfinished.length} item(s) an earlier run left unfinished (a real run finishes them first)`);
      for (const u of m.unfinished)
        lines.push(
          `  ${u.direction.padEnd(3)}  ${u.direction === 'in' ? `parcel ${u.item}` : `file #${u.item}`}  ${u.file ?? '(no name)'}  [${u.state}]: ${u.next}`,
        );
    }
    if (m.receive) {
      lines.push(`${m.name}: would receive ${m.receive.length} parcel(s)`);
      for (const p of m.receive)
        lines.push(
          `  in   parcel ${p.parcelId}  ${p.fileName ?? '(no name)'}  ${p.bytes === null ? '' : formatBytes(p.bytes)}${p.alreadyInJournal ? '  (in progress in the journal)' : ''}`,
        );
    }
    if (m.send) {
      lines.push(`${m.name}: would send ${m.send.length} file(s) (they pass the checks before sending)`);
      for (const f of m.send) lines.push(`  out  ${f.file}  ${formatBytes(f.bytes)}`);
    }
    if (m.refuse?.length) {
      lines.push(`${m.name}: would refuse ${m.refuse.length} file(s) (moved to errorDir with the reason, not sent)`);
      for (const f of m.refuse)
        lines.push(`  out  ${f.file}${f.bytes === null ? '' : `  ${formatBytes(f.bytes)}`}: ${f.reason} [${f.code}]`);
    }
    if (m.wait?.length) {
      lines.push(`${m.name}: ${m.wait.length} file(s) not ready (left in the outbox)`);
      for (const f of m.wait) lines.push(`  out  ${f.file}: ${f.reason}`);
    }
  }
  return lines.join('\n');
}
