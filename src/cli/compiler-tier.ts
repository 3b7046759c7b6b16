/**
 * Which of V8's compilers a short-lived command uses. A cold `gridsync once` (what cron starts
 * every night) compiles its hot code with the optimizing compiler (TurboFan) while it works, on
 * the same cores: over 2,000 items of 5 KB that compilation was about a third of its user CPU,
 * more than the optimized code then saved. So `once` stays on the baseline compiler (Sparkplug)
 * for its whole run (V8 cannot be given TurboFan back once it has been capped at run time). The
 * daemon keeps V8's defaults: it runs for months.
 */
import v8 from 'node:v8';

/** V8's tiers: 0 = interpreter, 1 = Sparkplug (baseline), 2 = Maglev, 3 = TurboFan. */
const BASELINE_TIER = '--max-opt=1';

/** Flags an operator may have given node that already decide the tiers: then nothing is changed. */
const OPERATOR_TIER_FLAGS = /^--(max-opt|jitless|no-opt|turbofan|no-turbofan|maglev|sparkplug|no-sparkplug)\b/;

/** From now on, code is compiled by the baseline compiler at most, unless node's own flags decide. */
export function baselineCompilerOnly(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => OPERATOR_TIER_FLAGS.test(a))) return;
  v8.setFlagsFromString(BASELINE_TIER);
}
