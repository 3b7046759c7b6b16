/** How the SOAP endpoint answers: a whole body (cut halfway when a fault plan says so), or a download streamed. */
import type { ServerResponse } from 'node:http';
import { STREAM_SLOT, type SoapVersion } from '@gridsync/protocol/soap';
import { sendBase64Body } from '../content.js';
import { sendPlanned, type FaultPlan } from '../faults.js';
import type { ParcelRow } from '../store.js';
import type { OpEnv } from './operations/index.js';
import { standardOfContent } from './operations/index.js';

export const contentType = (v: SoapVersion): string => (v === '1.1' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8');

export function send(res: ServerResponse, status: number, type: string, body: string, plan?: FaultPlan): void {
  sendPlanned(res, status, { 'content-type': type }, body, plan);
}

/** FileInfo with the content base64-encoded while it is sent (`render` writes the XML around it); Content-Length exact. */
export function sendFileInfo(
  res: ServerResponse,
  env: OpEnv,
  download: { readonly parcel: ParcelRow; readonly asString: boolean },
  render: (info: Record<string, unknown>) => string,
  type: string,
  plan?: FaultPlan,
): Promise<void> {
  const p = download.parcel;
  const info = {
    ParcelID: env.ids.out(p.parcel_id),
    FileName: p.file_name,
    FileDate: p.created,
    Bytes: plan?.wrongBytes ? p.bytes + 1 : p.bytes,
    Standard: standardOfContent(env.world, p),
    [download.asString ? 'ContentBase64String' : 'Content']: STREAM_SLOT,
    routerArchive: false,
  };
  const [prefix, suffix] = render(info).split(STREAM_SLOT) as [string, string];
  return sendBase64Body(res, { type, prefix, suffix, file: env.world.store.contentPath(p.content), bytes: p.bytes }, plan);
}
