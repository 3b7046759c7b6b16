/**
 * Deliveries that stopped: a direction of a mailbox that has items waiting and delivers nothing,
 * cycle after cycle (an unwritable inbox, a full disk, an errorDir that cannot be written). Each
 * cycle defers the same items with a warning, and without this watch the service still looks
 * healthy: /readyz 200, no failure counted, the last-success time advancing. Pure bookkeeping; the
 * daemon turns it into readiness, a metric and an error-level log line.
 */
export type Direction = 'in' | 'out';

export interface CycleObservation {
  /** Items this cycle left for a later one. */
  readonly deferred: number;
  /** Items that reached a final state this cycle (delivered, sent, rejected or failed). */
  readonly progressed: number;
  /** Why the last item was deferred, when known. */
  readonly reason?: string;
}

export interface StuckDirection {
  readonly mailbox: string;
  readonly direction: Direction;
  readonly cycles: number;
  readonly waiting: number;
  readonly reason: string;
}

export type Transition = { kind: 'stuck' | 'recovered'; state: StuckDirection } | undefined;

export class DeliveryWatch {
  private readonly state = new Map<string, { cycles: number; waiting: number; reason: string; stuck: boolean }>();

  constructor(private readonly afterCycles: number) {}

  /** Records one cycle of one direction; returns the transition into or out of stuck, if any. */
  observe(mailbox: string, direction: Direction, o: CycleObservation): Transition {
    const key = `${mailbox}\0${direction}`;
    const s = this.state.get(key) ?? { cycles: 0, waiting: 0, reason: '', stuck: false };
    this.state.set(key, s);
    if (o.deferred > 0 && o.progressed === 0) {
      s.cycles++;
      s.waiting = o.deferred;
      s.reason = o.reason ?? s.reason ?? '';
      if (!s.stuck && s.cycles >= this.afterCycles) {
        s.stuck = true;
        return { kind: 'stuck', state: this.view(mailbox, direction, s) };
      }
      return undefined;
    }
    const was = s.stuck;
    const before = this.view(mailbox, direction, s);
    s.cycles = 0;
    s.waiting = 0;
    s.stuck = false;
    return was ? { kind: 'recovered', state: before } : undefined;
  }

  /** Directions stuck right now. */
  stuck(): StuckDirection[] {
    return [...this.state.entries()]
      .filter(([, s]) => s.stuck)
      .map(([k, s]) => {
        const [mailbox, direction] = k.split('\0') as [string, Direction];
        return this.view(mailbox, direction, s);
      });
  }

  /** Whether this mailbox (either direction, or the one given) is stuck: per mailbox and cycle, so no walk over all of them. */
  isStuck(mailbox: string, direction?: Direction): boolean {
    const stuck = (d: Direction): boolean => this.state.get(`${mailbox}\0${d}`)?.stuck === true;
    return direction ? stuck(direction) : stuck('in') || stuck('out');
  }

  /** Consecutive cycles without a delivery while items wait (0 when moving). */
  cycles(mailbox: string, direction: Direction): number {
    return this.state.get(`${mailbox}\0${direction}`)?.cycles ?? 0;
  }

  private view(mailbox: string, direction: Direction, s: { cycles: number; waiting: number; reason: string }): StuckDirection {
    return {
      mailbox,
      direction,
      cycles: s.cycles,
      waiting: s.waiting,
      reason: s.reason || `${s.waiting} item(s) deferred every cycle (see the log)`,
    };
  }
}
