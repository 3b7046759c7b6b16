/**
 * Names of downloads in the staging folder: `<mailbox>-<parcel>.part`, and under a shared journal
 * `<mailbox>-<parcel>.t<token>.part` — the lease's fencing token in the name, so that a stale holder
 * still writing its download never writes into the file a new holder verified and is about to place.
 */

/** The staging file name of a parcel's download (token: the lease's, under a shared journal). */
export function stagingName(mailboxId: number, parcelId: number, token: number | undefined): string {
  return `${mailboxId}-${parcelId}${token === undefined ? '' : `.t${token}`}.part`;
}

/**
 * The downloads earlier holders of the mailbox's lease left behind (names under an older token) that
 * no journal row still points at: a holding that ended mid-download never journals `staged`, so
 * nothing would ever rename or remove its file. A file a row points at is the new holder's to place.
 */
export function orphanedStaging(names: readonly string[], mailboxId: number, token: number, referenced: ReadonlySet<string>): string[] {
  const own = new RegExp(`^${mailboxId}-\\d+\\.t(\\d+)\\.part$`);
  return names.filter((name) => {
    const m = own.exec(name);
    return m !== null && Number(m[1]) < token && !referenced.has(name);
  });
}
