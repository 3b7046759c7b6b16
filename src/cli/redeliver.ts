/**
 * `gridsync redeliver PARCELID…`: have the service deliver an inbound parcel again (reset it to the
 * inbox on the service) and note it in the journal. The next cycle sees the parcel listed again
 * after its confirmation and places it once more under a name of its own (inbox.redelivery:
 * deliver) — the ERP's first copy is never overwritten.
 */
import path from 'node:path';
import { catalog, GridResponseError } from '../api/index.js';
import { refuseAnotherService } from '../daemon/index.js';
import { InboundJournal } from '../journal/index.js';
import { output, parseCommand, runCommand, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigOrThrow, operatorJournal } from './common.js';
import { connectService, type ServiceConnection } from '../service/index.js';
import { print, printError, serviceRefusal } from './print.js';

const USAGE = `usage: gridsync redeliver [-c FILE] PARCELID…

Asks the service to put each parcel back into the inbox (POST /v2/parcels/reset-to-inbox/ID) and
notes it in the journal; the daemon (or the next once) delivers it again under a new name.
Works while the daemon runs. Exit 0 all reset · 1 the service refused one (reason printed) ·
2 usage, config, or a journal that holds the work of another service (as run and once refuse it).`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, CONFIG_OPTION, true);
    if (!args) return 0;
    if (args.positionals.length === 0) throw new UsageError(`name the parcel ids to deliver again\n\n${USAGE}`);
    const ids = args.positionals.map((p) => {
      if (!/^\d+$/.test(p)) throw new UsageError(`not a parcel id: ${p}`);
      return Number(p);
    });
    const loaded = loadConfigOrThrow(args.values.config);
    const cfg = loaded.config;
    // Opened before anything is reset: a reset the journal did not note is taken for a confirm that never took.
    const journal = await operatorJournal(cfg);
    try {
      await refuseAnotherService(journal, { baseUrl: cfg.api.baseUrl, configFile: path.resolve(loaded.file) });
      const service = await connectService(cfg);
      try {
        return (await redeliverAll(ids, service, new InboundJournal(journal))) ? 1 : 0;
      } finally {
        await service.close();
      }
    } finally {
      await journal.close();
    }
  });
}

/** Resets each parcel and notes it; returns how many the service refused. */
async function redeliverAll(ids: readonly number[], service: ServiceConnection, journal: InboundJournal): Promise<number> {
  let failed = 0;
  for (const id of ids) {
    try {
      await reset(service, id);
      // Noted once the reset took: listed ready again, the parcel is this reset, also if its confirm was not yet seen to take.
      await journal.markResetRequested(id);
      if (!output.quiet) print(`parcel ${id}: reset on the service; the next cycle delivers it again under a new name\n`);
    } catch (err) {
      failed++;
      printError(`parcel ${id}: not reset — ${serviceRefusal(err)}\n`);
    }
  }
  return failed;
}

/** Reset to the inbox over the configured interface (SOAP: ParcelDownloadReset). */
async function reset(service: ServiceConnection, parcelId: number): Promise<void> {
  if (service.rest) return void (await service.rest.call(catalog.parcels.resetToInbox, { parcelId }));
  if ((await service.soap?.call('ParcelDownloadReset', { ParcelID: String(parcelId) })) !== true)
    throw new GridResponseError('ParcelDownloadReset', 200, 'ParcelDownloadResetResult', 'the service answered false');
}
