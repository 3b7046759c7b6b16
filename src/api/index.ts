/** The clients of the service (REST v2 and SOAP 4.1 over one core): everything other folders may import from `src/api`. */
export { GridClient, gridsyncVersion } from './client.js';
export type { GridAuth, GridClientOptions, ClientLimits, ClientLogger, ListRow } from './client.js';
export type { CoreOptions } from './core.js';
export { isLoopbackHost, serviceUrlProblem } from './url-policy.js';
export type {
  CallOptions,
  DownloadOptions,
  DownloadResultInfo,
  DownloadTarget,
  MailboxTransport,
  OutboxQuery,
  ParcelSummary,
  PendingInbox,
  UnreadableParcel,
  SessionContext,
  UploadCallOptions,
  UploadOptions,
} from './transport.js';
export * from './errors.js';
export { mayHaveReachedService, RETRY_REASONS } from './retry.js';
export type { RetryReason } from './retry.js';
export type { RetryNotice } from './retry-loop.js';
export { mailboxCalls } from './mailbox-calls.js';
export { waitShared } from './shared-wait.js';
export { searchStart } from './service-clock.js';
export { CallConcurrency } from './call-concurrency.js';
export type { ConcurrencySetting } from './call-concurrency.js';
export { CONFIRMED_STATUS } from './tolerant.js';
export { ALL_ENDPOINTS, catalog, endpointByName, matchEndpoint } from '@gridsync/protocol/catalog';
export type { EndpointDef } from '@gridsync/protocol/catalog';
export * as wire from '@gridsync/protocol/wire';
export { SoapClient, soapUrl } from './soap/client.js';
export type { SoapClientOptions } from './soap/client.js';
export { SoapFaultError } from './soap/errors.js';
