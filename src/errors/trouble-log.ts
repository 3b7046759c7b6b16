/**
 * A failure that repeats at every rescan or lease round while its cause lasts (the journal's
 * database down for an hour) is told when it starts, with its stable code, and when it ends, with
 * how long it lasted and how many repetitions were not told — at debug only in between, where an
 * operator's warnings and errors were one line per repetition. Another code is another trouble. The decisions
 * are `troubleStep`; TroubleLog is the shell that writes the lines.
 */
import { codeOf, errorFields } from './log-fields.js';

/** What a TroubleLog writes its lines to: any Logger (log.ts, a layer beside this one). */
export interface TroubleLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A trouble under way: its code, since when (the clock TroubleLog is given), how often it came again. */
export interface Trouble {
  readonly code: string;
  readonly since: number;
  readonly repeats: number;
}

export type TroubleLine =
  | { readonly kind: 'started'; readonly code: string }
  | { readonly kind: 'repeated'; readonly code: string; readonly repeats: number }
  | { readonly kind: 'ended'; readonly code: string; readonly durationMs: number; readonly suppressed: number };

/** What a failure (its code) or a success (undefined) means for the trouble under way, and the lines to write. */
export function troubleStep(
  trouble: Trouble | undefined,
  failure: string | undefined,
  now: number,
): { trouble: Trouble | undefined; lines: TroubleLine[] } {
  if (failure === undefined) {
    if (!trouble) return { trouble, lines: [] };
    return {
      trouble: undefined,
      lines: [{ kind: 'ended', code: trouble.code, durationMs: now - trouble.since, suppressed: trouble.repeats }],
    };
  }
  if (trouble?.code === failure) {
    const repeats = trouble.repeats + 1;
    return { trouble: { ...trouble, repeats }, lines: [{ kind: 'repeated', code: failure, repeats }] };
  }
  const ended = trouble ? troubleStep(trouble, undefined, now).lines : [];
  return { trouble: { code: failure, since: now, repeats: 0 }, lines: [...ended, { kind: 'started', code: failure }] };
}

export interface TroubleLogOptions {
  readonly logger: TroubleLogger;
  /** The level of the line that tells a trouble has started. */
  readonly level: 'warn' | 'error';
  /** That line's message (the one the failure was always logged with). */
  readonly started: string;
  /** The message of the line that tells it is over. */
  readonly ended: string;
  /** Milliseconds on a monotonic clock; default `performance.now`. */
  readonly now?: () => number;
}

export class TroubleLog {
  private trouble: Trouble | undefined;
  private readonly now: () => number;

  constructor(private readonly o: TroubleLogOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /** The step failed again, or for the first time; `fields` go on the lines about it. */
  failed(err: unknown, fields: Record<string, unknown> = {}): void {
    this.step(codeOf(err), { ...fields, ...errorFields(err) });
  }

  /** The step got through: a trouble under way has ended; `fields` go on the line that says so. */
  ok(fields?: Record<string, unknown>): void {
    // Called after every drive and claim that gets through: nothing to read or allocate then.
    if (this.trouble) this.step(undefined, fields ?? {});
  }

  private step(failure: string | undefined, fields: Record<string, unknown>): void {
    const { trouble, lines } = troubleStep(this.trouble, failure, this.now());
    this.trouble = trouble;
    const { logger } = this.o;
    for (const line of lines) {
      if (line.kind === 'started') logger[this.o.level](fields, this.o.started);
      else if (line.kind === 'repeated') logger.debug({ ...fields, repeats: line.repeats }, this.o.started);
      else
        logger.info(
          // A trouble ended by another code's start: the new failure's fields are not about it.
          {
            ...(failure === undefined ? fields : {}),
            code: line.code,
            durationMs: Math.round(line.durationMs),
            suppressed: line.suppressed,
          },
          this.o.ended,
        );
    }
  }
}
