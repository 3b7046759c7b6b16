/**
 * Defaults and limits that are not config keys of their own (the schema holds those), in one place.
 */

/** Consecutive cycles with work left over and nothing delivered before a direction counts as stuck. */
export const STUCK_AFTER_CYCLES = 3;
