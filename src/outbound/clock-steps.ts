/**
 * Forward steps of the wall clock, seen against the monotonic clock. An outbox file's age comes
 * from its times, which are wall-clock readings: a clock stepped forward after the file was
 * written (NTP correcting a clock that ran slow, a VM resumed from a suspend) makes the file look
 * older by the step, and a writer paused in the middle of it look finished. The two clocks move
 * apart only by such a step, so each reading compares their difference with the previous one.
 */

/** Below this, two readings differ by how the clocks were read, not by a step. */
const TOLERANCE_MS = 100;

export class WallClockSteps {
  private offset: number;
  /** Monotonic time of the reading that last saw the wall clock stepped forward. */
  private steppedAt = -Infinity;

  constructor(
    private readonly wall: () => number,
    private readonly monotonic: () => number,
  ) {
    this.offset = wall() - monotonic();
  }

  /**
   * How far back from now a wall-clock age can be trusted: since the last forward step seen
   * (Infinity while none was). A step before this process started is not seen.
   */
  trustedSpanMs(): number {
    const mono = this.monotonic();
    const offset = this.wall() - mono;
    if (offset - this.offset > TOLERANCE_MS) this.steppedAt = mono;
    this.offset = offset;
    return mono - this.steppedAt;
  }
}
