/**
 * The names the SOAP endpoint answers to beyond the 4.1 definition — aliases some callers use
 * (accepted, never advertised in the WSDL) and names it refuses with a reason — and the name each
 * operation has for fault injection.
 */
import { SOAP_NS, operationByName, type OperationDef } from '@gridsync/protocol/soap';
import { OPERATIONS, type OpContext, type OpResult, type Operation } from './operations/index.js';

/** Fault-injection names: the REST catalog name where the operation is the same step of the workflow. */
const FAULT_NAMES: Record<string, string> = {
  Login: 'auth.login',
  Logout: 'auth.logout',
  Version: 'auth.version',
  WhoAmI: 'users.me',
  ParcelInBox: 'parcels.pendingInboxList',
  ParcelInBoxEx: 'parcels.pendingInboxList',
  ParcelDownload: 'parcels.download',
  ParcelDownloadA: 'parcels.download',
  ParcelDownloadNoUpdate: 'parcels.download',
  ParcelDownloadNoUpdateA: 'parcels.download',
  ParcelDownloadConfirm: 'parcels.confirm',
  ParcelDownloadReset: 'parcels.resetToInbox',
  ParcelInfo: 'parcels.get',
  ParcelUpload: 'parcels.upload',
  ParcelUploadA: 'parcels.upload',
  ParcelUploadEx: 'parcels.upload',
  ParcelUploadExA: 'parcels.upload',
  ParcelUploadMft: 'parcels.upload',
  ParcelUploadMftA: 'parcels.upload',
  ParcelOutBoxInProcessEx: 'parcels.outboxList',
  ParcelOutBoxArchiveEx: 'parcels.outboxList',
  ParcelOutBoxErrorEx: 'parcels.outboxList',
};
export const faultNameOf = (op: string): string => FAULT_NAMES[op] ?? `soap.${op}`;

const PARCEL_OUTBOX: OperationDef = {
  name: 'ParcelOutBox',
  action: `${SOAP_NS}ParcelOutBox`,
  session: true,
  doc: '',
  params: [
    { name: 'SessionID', type: 'string', min: 0 },
    { name: 'BeginDate', type: 'dateTime', min: 1 },
    { name: 'EndDate', type: 'dateTime', min: 1 },
  ],
  result: { name: 'ParcelOutBoxResult', type: 'ParcelIDInfoCollection', min: 0 },
};

/** The union of the three outbox lists for the compatibility name ParcelOutBox. */
function parcelOutBox(ctx: OpContext): OpResult {
  const lists = ['ParcelOutBoxInProcessEx', 'ParcelOutBoxArchiveEx', 'ParcelOutBoxErrorEx'].map((name) => {
    const op = operationByName(name) as OperationDef;
    const r = (OPERATIONS[name] as (c: OpContext) => { result: unknown })({
      ...ctx,
      op,
      params: { ...ctx.params, NetworkID: 0, MailboxID: 0 },
    }).result as { ParcelIDInfoList?: unknown[] };
    return r.ParcelIDInfoList ?? [];
  });
  const all = lists.flat();
  return {
    result: {
      PageSize: all.length,
      PageNumber: 1,
      Count: all.length,
      TotalRecords: all.length,
      TotalPages: 1,
      ...(all.length ? { ParcelIDInfoList: all } : {}),
    },
  };
}

const aliasOf = (def: string): { def: OperationDef; run: Operation } => ({
  def: operationByName(def) as OperationDef,
  run: OPERATIONS[def] as Operation,
});

/** Each alias answers as the operation it stands for, under its own element names. */
export const ALIASES: Record<string, { def: OperationDef; run: Operation } | { refuse: string }> = {
  SessionInfo: aliasOf('WhoAmI'),
  UserGenerateAPIKey: aliasOf('GenerateAPIKey'),
  InterconnectList: aliasOf('InterconnectListByGridID'),
  ParcelOutBox: { def: PARCEL_OUTBOX, run: parcelOutBox },
  NetworkAdd: { refuse: 'NetworkAdd does not exist in 4.1: networks are created by the operator' },
  ParcelCancel: { refuse: 'ParcelCancel does not exist in 4.1: cancel interchanges with InterchangeCancel' },
};

export const known = (name: string): boolean => operationByName(name) !== undefined || name in ALIASES;

/** The operation a name stands for (undefined for the refused names). */
export function definitionOf(name: string): OperationDef | undefined {
  const alias = ALIASES[name];
  if (!alias) return operationByName(name);
  return 'def' in alias ? alias.def : undefined;
}
