/**
 * Fault injection: the emulator misbehaves on demand, reproducibly (seeded PRNG), per endpoint
 * name or for all (`*`). Set by `startEmulator({ faults })`, `emu.setFaults()` or
 * `POST /_emulator/faults`; counters of what was injected are in `GET /_emulator/faults`.
 * Outgoing callback deliveries are planned under the name `callbacks.deliver`: latency delays a
 * delivery (a range reorders them), and they can be dropped or sent twice — what webhooks do.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';

const rate = z.number().min(0).max(1).default(0);

export const FaultRule = z
  .object({
    /** Catalog name (`parcels.download`) or `*`. */
    endpoint: z.string().default('*'),
    /** 429 RateLimitExceeded with Retry-After: retryAfterSeconds (or an HTTP-date when retryAfterDate). */
    rate429: rate,
    retryAfterSeconds: z.number().int().nonnegative().default(1),
    retryAfterDate: z.boolean().default(false),
    rate500: rate,
    rate503: rate,
    /** Added latency: a fixed number of ms or a [min, max] range. */
    latencyMs: z.union([z.number().nonnegative(), z.tuple([z.number().nonnegative(), z.number().nonnegative()])]).default(0),
    /** Connection reset before the handler ran: nothing happened on the service. */
    resetBeforeRate: rate,
    /** Connection reset after the handler ran: the effect happened, the client saw a reset. */
    resetAfterRate: rate,
    /** Reset in the middle of the response body. */
    resetDuringBodyRate: rate,
    /** The response body ends early while the headers announced more. */
    truncateRate: rate,
    /** Download only: the declared `bytes` is one more than the content. */
    wrongBytesRate: rate,
    /** Callback deliveries only: never sent, yet recorded as delivered (a proxy that swallowed it). */
    dropRate: rate,
    /** Callback deliveries only: sent twice. */
    duplicateRate: rate,
  })
  .strict();
export type FaultRule = z.output<typeof FaultRule>;

export const FaultConfig = z
  .object({
    seed: z.number().int().default(1),
    rules: z.array(FaultRule).default([]),
  })
  .strict();
export type FaultConfigInput = z.input<typeof FaultConfig>;

/** The fault-rule name of an outgoing callback delivery. */
export const CALLBACK_DELIVERY = 'callbacks.deliver';

export type FaultKind =
  '429' | '500' | '503' | 'latency' | 'resetBefore' | 'resetAfter' | 'resetDuringBody' | 'truncate' | 'wrongBytes' | 'drop' | 'duplicate';

/** What to do to one request, decided once when it arrives. */
export interface FaultPlan {
  latencyMs: number;
  status?: 429 | 500 | 503;
  retryAfter?: string;
  resetBefore: boolean;
  resetAfter: boolean;
  resetDuringBody: boolean;
  truncate: boolean;
  wrongBytes: boolean;
  drop: boolean;
  duplicate: boolean;
}

/** mulberry32: tiny, seedable, good enough for reproducible fault schedules. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sends a whole answer with its Content-Length, or under a `truncate`/`resetDuringBody` plan its
 * first half and then a closed or reset connection — the same cut for the REST and the SOAP front.
 */
export function sendPlanned(res: ServerResponse, status: number, headers: Record<string, string>, body: string, plan?: FaultPlan): void {
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  if (plan && (plan.truncate || plan.resetDuringBody)) {
    res.write(body.slice(0, Math.floor(body.length / 2)));
    if (plan.resetDuringBody) res.socket?.resetAndDestroy();
    else res.socket?.destroySoon();
    return;
  }
  res.end(body);
}

export class FaultInjector {
  private config = FaultConfig.parse({});
  private random = mulberry32(1);
  readonly injected: Record<FaultKind, number> = {
    '429': 0,
    '500': 0,
    '503': 0,
    latency: 0,
    resetBefore: 0,
    resetAfter: 0,
    resetDuringBody: 0,
    truncate: 0,
    wrongBytes: 0,
    drop: 0,
    duplicate: 0,
  };

  constructor(private readonly now: () => number) {}

  set(input: unknown): void {
    this.config = FaultConfig.parse(input ?? {});
    this.random = mulberry32(this.config.seed);
  }

  get current(): z.output<typeof FaultConfig> {
    return this.config;
  }

  plan(endpoint: string): FaultPlan {
    const plan: FaultPlan = {
      latencyMs: 0,
      resetBefore: false,
      resetAfter: false,
      resetDuringBody: false,
      truncate: false,
      wrongBytes: false,
      drop: false,
      duplicate: false,
    };
    for (const r of this.config.rules) {
      if (r.endpoint !== '*' && r.endpoint !== endpoint) continue;
      const roll = (p: number, kind: FaultKind): boolean => {
        if (p <= 0 || this.random() >= p) return false;
        this.injected[kind]++;
        return true;
      };
      const lat = typeof r.latencyMs === 'number' ? r.latencyMs : r.latencyMs[0] + this.random() * (r.latencyMs[1] - r.latencyMs[0]);
      if (lat > 0) {
        plan.latencyMs += lat;
        this.injected.latency++;
      }
      if (endpoint === CALLBACK_DELIVERY) {
        // A delivery has no HTTP answer of ours to break: only latency, drop and duplicate apply.
        if (!plan.drop && !plan.duplicate) {
          if (roll(r.dropRate, 'drop')) plan.drop = true;
          else if (roll(r.duplicateRate, 'duplicate')) plan.duplicate = true;
        }
        continue;
      }
      if (plan.status === undefined && !plan.resetBefore) {
        if (roll(r.rate429, '429')) {
          plan.status = 429;
          plan.retryAfter = r.retryAfterDate
            ? new Date(this.now() + r.retryAfterSeconds * 1000).toUTCString()
            : String(r.retryAfterSeconds);
        } else if (roll(r.rate500, '500')) plan.status = 500;
        else if (roll(r.rate503, '503')) plan.status = 503;
        else if (roll(r.resetBeforeRate, 'resetBefore')) plan.resetBefore = true;
        else if (roll(r.resetAfterRate, 'resetAfter')) plan.resetAfter = true;
        else if (roll(r.resetDuringBodyRate, 'resetDuringBody')) plan.resetDuringBody = true;
        else if (roll(r.truncateRate, 'truncate')) plan.truncate = true;
        else if (endpoint === 'parcels.download' && roll(r.wrongBytesRate, 'wrongBytes')) plan.wrongBytes = true;
      }
    }
    return plan;
  }
}
