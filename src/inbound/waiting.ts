/**
 * How long the oldest parcel has waited on the service. The service drops a parcel left in the
 * inbox past its `InBoxTimeout` (hours; typically at most 240): the age, exported as a gauge, lets
 * an alert fire long before that. `created` is stamped by the service, so the age is taken on the
 * service's clock.
 */

/** Seconds since the oldest of `created` (ISO 8601, the service's time) at `serviceNow`; 0 when none is readable. */
export function oldestWaitingSeconds(created: readonly (string | undefined)[], serviceNow: number): number {
  let oldest = Infinity;
  for (const c of created) {
    const at = c === undefined ? NaN : Date.parse(c);
    if (Number.isFinite(at) && at < oldest) oldest = at;
  }
  return oldest === Infinity ? 0 : Math.max(0, Math.floor((serviceNow - oldest) / 1000));
}
