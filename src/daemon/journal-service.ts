/**
 * A journal serves one service (`src/journal/service.ts` says why). At start the configured
 * service is compared with the one the journal recorded: a journal holding rows of another
 * service is refused, since its parcel ids would be taken for the new service's. `gridsync doctor`
 * shows the same verdict and advice, and `gridsync journal set-service` records a new address.
 */
import { holdsRows, JournalServiceChangedError, recordedService, recordService, type JournalStore } from '../journal/index.js';
import type { Logger } from '../log.js';
import { StartupError } from './startup-error.js';

/**
 * The service `api.baseUrl` names, as the journal records it: `embedded`, or the URL's origin
 * (scheme, host and port, lowercased). Not the path — SOAP may be given the full …/GridOS.asmx
 * address on the host REST is served from — and not the protocol: REST and SOAP of one service
 * show the same parcels under the same ids.
 */
export function serviceIdentity(baseUrl: string): string {
  return baseUrl === 'embedded' ? 'embedded' : new URL(baseUrl).origin;
}

/**
 * What the journal says about the configured service: `same`; `unrecorded` (a journal from before
 * the record existed, or a new one); `empty` (another service recorded, but no rows: a journal
 * that carries nothing belongs to nobody); `other` (rows of another service); `held` (no rows, but
 * instances started for the recorded service are live on it, a shared journal: taken over, it
 * would leave them writing rows of their service into a journal that names another).
 */
export type JournalServiceVerdict =
  | { readonly verdict: 'same' | 'unrecorded' }
  | { readonly verdict: 'empty' | 'other'; readonly recorded: string }
  | { readonly verdict: 'held'; readonly recorded: string; readonly live: readonly string[] };

/** What the verdict reads of a journal; claiming it also writes its meta and names it. */
type ServiceJournal = Pick<JournalStore, 'getMeta' | 'get' | 'leases'>;

export async function journalServiceVerdict(journal: ServiceJournal, configured: string): Promise<JournalServiceVerdict> {
  const recorded = await recordedService(journal);
  if (recorded === undefined) return { verdict: 'unrecorded' };
  if (recorded === configured) return { verdict: 'same' };
  if (await holdsRows(journal)) return { verdict: 'other', recorded };
  const live = (await journal.leases.instances()).filter((name) => name !== journal.leases.owner);
  return live.length > 0 ? { verdict: 'held', recorded, live } : { verdict: 'empty', recorded };
}

/** Why a journal that instances of `recorded` are live on is not taken over for `configured`. */
export function serviceHeldAdvice(location: string, recorded: string, live: readonly string[], configured: string): string {
  return (
    `journal ${location} serves service ${recorded}, and instances started for it are running on it (${live.join(', ')}); ` +
    `api.baseUrl names service ${configured}. Give every instance on this journal the same service, or this one a journal of its own (journal.url)`
  );
}

/** Why a journal with rows of `recorded` is not used for `configured`, and the two ways on. */
export function serviceChangedAdvice(location: string, recorded: string, configured: string, configFile: string): string {
  return (
    `journal ${location} holds the work of service ${recorded}, but api.baseUrl names service ${configured}; ` +
    'parcel ids of one service name other parcels on another, so this journal is not used for it. Either keep a separate ' +
    `journal per service: finish the old service's work with \`gridsync once\` against ${recorded}, then give this config its ` +
    `own stateDir (or journal.url); or, if ${configured} is the same service at a new address, record it with ` +
    `\`gridsync journal set-service -c ${configFile}\``
  );
}

/**
 * Refuses (StartupError) a journal with rows of another service than the configured one, as a
 * start does; returns the verdict otherwise and records nothing. `once --dry-run` and `redeliver`
 * use the journal without a start and call this before they ask the service anything: the dry
 * run would read another service's rows against the configured one's lists, and redeliver would
 * have one service reset a parcel and note it in another service's journal.
 */
export async function refuseAnotherService(
  journal: ServiceJournal & Pick<JournalStore, 'location'>,
  config: { readonly baseUrl: string; readonly configFile: string },
): Promise<JournalServiceVerdict> {
  const configured = serviceIdentity(config.baseUrl);
  const found = await journalServiceVerdict(journal, configured);
  if (found.verdict === 'other')
    throw new StartupError(
      'STARTUP_SERVICE_CHANGED',
      serviceChangedAdvice(journal.location, found.recorded, configured, config.configFile),
    );
  if (found.verdict === 'held')
    throw new StartupError('STARTUP_SERVICE_CHANGED', serviceHeldAdvice(journal.location, found.recorded, found.live, configured));
  return found;
}

/**
 * At start, right after the journal opens and before the service is asked anything: records the
 * configured service where the journal has none or holds no rows, refuses (StartupError) a journal
 * with rows of another, or one that live instances of another serve. (Should two start at the same
 * moment, the lease rounds settle it: `serviceRefusal`.)
 */
export async function claimJournal(
  journal: ServiceJournal & Pick<JournalStore, 'setMeta' | 'location'>,
  config: { readonly baseUrl: string; readonly configFile: string },
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  const found = await refuseAnotherService(journal, config);
  if (found.verdict === 'same') return;
  const configured = serviceIdentity(config.baseUrl);
  await recordService(journal, configured);
  if (found.verdict === 'empty')
    logger.info(
      { journal: journal.location, from: found.recorded, to: configured },
      'the journal held no rows: it now serves the configured service',
    );
}

/**
 * Under a shared journal, asked every lease round: the journal records another service now (an
 * instance started for it took the journal over while it held no rows). The lease keeper then
 * hands back every lease, so that none of this instance's writes can land.
 */
export async function serviceRefusal(journal: Pick<JournalStore, 'getMeta'>, configured: string): Promise<Error | undefined> {
  const recorded = await recordedService(journal);
  return recorded === undefined || recorded === configured ? undefined : new JournalServiceChangedError(recorded, configured);
}
