/**
 * `gridsync redeliver PARCELID…`: note in the journal that an inbound parcel is to be delivered
 * again, then have the service reset it to the inbox. The next cycle sees the parcel listed again
 * after its confirmation and places it once more under a name of its own (inbox.redelivery:
 * deliver) — the ERP's first copy is never overwritten.
 */
import path from 'node:path';
import { catalog, GridResponseError } from '../api/index.js';
import { refuseAnotherService } from '../daemon/index.js';
import { InboundJournal } from '../journal/index.js';
import { output, parseCommand, runCommand, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigWarning, operatorJournal } from './common.js';
import { lookUpOwners, receivingMailboxes } from './parcel-owner.js';
import { connectService, type ServiceConnection } from '../service/index.js';
import { print, printError, serviceRefusal } from './print.js';

const USAGE = `usage: gridsync redeliver [-c FILE] PARCELID…

Notes each parcel in the journal, then asks the service to put it back into the inbox (POST
/v2/parcels/reset-to-inbox/ID); the daemon (or the next once) delivers it again under a new name.
A parcel that failed (maxAttempts) is tried anew the same way, once its cause is fixed.
Each parcel is looked up first: one in the inbox of a mailbox this configuration does not receive
for (another system's) stops the command before anything is reset; one that cannot be looked up,
or whose record names no mailbox, is not reset. Works while the daemon runs.
Exit 0 each parcel is ready again on the service · 1 one is not, or its status or mailbox is not
known (reason printed) · 2 usage, config, a parcel of another mailbox, or a journal that holds the work
of another service (as run and once refuse it).`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, CONFIG_OPTION, true);
    if (!args) return 0;
    if (args.positionals.length === 0) throw new UsageError(`name the parcel ids to deliver again\n\n${USAGE}`);
    const ids = args.positionals.map((p) => {
      // Ids start at 1, and past 2^53 Number() would round: a request noted for another parcel.
      if (!/^[1-9]\d*$/.test(p) || !Number.isSafeInteger(Number(p))) throw new UsageError(`not a parcel id: ${p}`);
      return Number(p);
    });
    const loaded = loadConfigWarning(args.values.config);
    const cfg = loaded.config;
    const journal = await operatorJournal(cfg);
    try {
      await refuseAnotherService(journal, { baseUrl: cfg.api.baseUrl, configFile: path.resolve(loaded.file) });
      const service = await connectService(cfg);
      try {
        const unknown = await lookUpOwners(ids, service.client, await receivingMailboxes(cfg, service.client));
        for (const [id, reason] of unknown)
          printError(`parcel ${id}: not reset — it could not be looked up to see whose it is: ${reason}\n`);
        const known = ids.filter((id) => !unknown.has(id));
        return unknown.size + (await redeliverAll(known, service, new InboundJournal(journal))) > 0 ? 1 : 0;
      } finally {
        await service.close();
      }
    } finally {
      await journal.close();
    }
  });
}

/**
 * Notes each parcel's redelivery in the journal, then has the service reset it; returns how many
 * will not be delivered again, or may not be.
 *
 * The note comes first: once reset, the parcel is listed ready again, and a daemon that lists it
 * before the note reads a confirm not yet seen to take as one that never took — it confirms the
 * parcel again and the redelivery is lost. A note made after the reset would be missing whenever
 * this command died, or lost the service's answer, in between. A note whose reset failed changes
 * nothing while the parcel is not ready on the service; what it is there decides what the
 * operator is told.
 */
async function redeliverAll(ids: readonly number[], service: ServiceConnection, journal: InboundJournal): Promise<number> {
  let failed = 0;
  for (const id of ids) {
    await journal.markResetRequested(id);
    try {
      await reset(service, id);
    } catch (err) {
      const ready = await readyOnService(service, id);
      if (ready === true) {
        if (!output.quiet)
          print(
            `parcel ${id}: the reset was answered with an error (${serviceRefusal(err)}), but the service shows the parcel ready: the next cycle delivers it again under a new name\n`,
          );
        continue;
      }
      failed++;
      printError(
        `parcel ${id}: not reset — ${serviceRefusal(err)}` +
          (ready === false
            ? '; the service does not show it ready, so it is not delivered again (the journal notes the request, which changes nothing while the parcel is not ready)\n'
            : ` (its status could not be read either: ${ready.reason}); if the service did reset it, the next cycle delivers it again: the journal notes the request\n`),
      );
      continue;
    }
    if (!output.quiet) print(`parcel ${id}: reset on the service; the next cycle delivers it again under a new name\n`);
  }
  return failed;
}

/** After a failed reset: whether the service shows the parcel ready to be delivered (it may have acted all the same). */
async function readyOnService(service: ServiceConnection, parcelId: number): Promise<boolean | { reason: string }> {
  try {
    return (await service.client.parcel(parcelId)).status === 'InBoxReady';
  } catch (err) {
    return { reason: serviceRefusal(err) };
  }
}

/** Reset to the inbox over the configured interface (SOAP: ParcelDownloadReset). */
async function reset(service: ServiceConnection, parcelId: number): Promise<void> {
  if (service.rest) return void (await service.rest.call(catalog.parcels.resetToInbox, { parcelId }));
  if ((await service.soap?.call('ParcelDownloadReset', { ParcelID: String(parcelId) })) !== true)
    throw new GridResponseError('ParcelDownloadReset', 200, 'ParcelDownloadResetResult', 'the service answered false');
}
