/**
 * One mailbox's view of the shared client: every call made through it carries the mailbox's name
 * (CallOptions.mailbox), so its retries are counted under that mailbox while the pipelines build
 * their call options as before. Connections, session and rate gate stay the shared client's.
 */
import type { CallOptions, MailboxTransport } from './transport.js';

export function mailboxCalls(client: MailboxTransport, mailbox: string): MailboxTransport {
  const named = <O extends CallOptions>(options: O | undefined): O => ({ ...options, mailbox }) as O;
  const { partnerName, serviceClockOffsetMs, overloadAnswers } = client;
  return {
    sessionContext: (options) => client.sessionContext(named(options)),
    pendingInbox: (mailboxId, options) => client.pendingInbox(mailboxId, named(options)),
    parcel: (parcelId, options) => client.parcel(parcelId, named(options)),
    downloadParcel: (parcelId, target, options) => client.downloadParcel(parcelId, target, named(options)),
    confirmParcel: (parcelId, options) => client.confirmParcel(parcelId, named(options)),
    uploadParcel: (filePath, upload, options) => client.uploadParcel(filePath, upload, named(options)),
    outboxParcels: (query, options) => client.outboxParcels(query, named(options)),
    ...(partnerName ? { partnerName: (gridId, options) => partnerName.call(client, gridId, named(options)) } : {}),
    ...(serviceClockOffsetMs ? { serviceClockOffsetMs: () => serviceClockOffsetMs.call(client) } : {}),
    ...(overloadAnswers ? { overloadAnswers: () => overloadAnswers.call(client) } : {}),
    // The shared client is its owner's to close, once, after every mailbox has stopped.
    close: () => Promise.resolve(),
  };
}
