// A scripted service across a WAN: every request answers `latencyMs` later, and, with
// `overloadAbove`, a request that arrives while more than that many of the watched requests are in
// flight is answered 429 or 503 (after the same latency: a refusal costs the round trip too). It
// records how many watched requests were in flight at each arrival, to see what the client did.
import type { ScriptedService } from './scripted-service.js';

export interface WanOptions {
  readonly latencyMs: number;
  /** The requests counted and refused: those whose path ends with this (e.g. `/parcels/download`). */
  readonly watch: string;
  readonly overloadAbove?: number;
  readonly overloadStatus?: 429 | 503;
}

export interface WanRecord {
  /** For each watched request, in order of arrival: the watched requests in flight then, itself included. */
  readonly inFlightAtArrival: number[];
  /** Watched requests refused with overloadStatus, by arrival index. */
  readonly refused: Set<number>;
}

export function acrossWan(svc: ScriptedService, o: WanOptions): WanRecord {
  const record: WanRecord = { inFlightAtArrival: [], refused: new Set() };
  let inFlight = 0;
  svc.variants.fault = async (req, res) => {
    const watched = req.path.endsWith(o.watch);
    if (watched) {
      inFlight++;
      res.once('close', () => inFlight--);
      record.inFlightAtArrival.push(inFlight);
    }
    const refuse = watched && o.overloadAbove !== undefined && inFlight > o.overloadAbove;
    if (refuse) record.refused.add(record.inFlightAtArrival.length - 1);
    await new Promise((r) => setTimeout(r, o.latencyMs));
    if (!refuse) return false;
    const status = o.overloadStatus ?? 429;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ success: false, data: null, errorCode: status === 429 ? 'RateLimitExceeded' : 'InternalError', message: 'busy' }),
    );
    return true;
  };
  return record;
}

/** The most watched requests in flight at any arrival among those from index `from` on. */
export const peakFrom = (r: WanRecord, from = 0): number => Math.max(0, ...r.inFlightAtArrival.slice(from));

/** Share of the watched requests from index `from` on that were refused. */
export function refusedShareFrom(r: WanRecord, from: number): number {
  const n = r.inFlightAtArrival.length - from;
  let refused = 0;
  for (const i of r.refused) if (i >= from) refused++;
  return n > 0 ? refused / n : 0;
}
