import { scrubHeld } from '../errors/index.js';

/**
 * The `, col = ?…` part of a transition's UPDATE and its values, for both journals' rows. A
 * `last_error` is scrubbed of held secrets on the way in. Plain loops over Object.keys/values
 * rather than closures mapped over `set`: the transitions pass objects of different shapes, and
 * code specialised to the first ones was thrown away and compiled again for each new one (five
 * times per cold run).
 */
export function setClause(set: Record<string, unknown>): { sql: string; values: unknown[] } {
  const cols = Object.keys(set);
  const values = Object.values(set);
  let sql = '';
  for (let i = 0; i < cols.length; i++) {
    sql += `, ${cols[i]} = ?`;
    const v = values[i];
    if (cols[i] === 'last_error' && typeof v === 'string') values[i] = scrubHeld(v);
  }
  return { sql, values };
}
