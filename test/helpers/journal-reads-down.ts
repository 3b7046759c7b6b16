// A journal whose reads of one kind of row fail while the test says the database is down, as the
// PostgreSQL journal's do while its server is out of reach (JOURNAL_UNAVAILABLE); every other
// statement goes through to the real store.
import type { JournalStore } from '../../src/journal/index.js';
import { JournalUnavailableError } from '../../src/journal/unavailable-error.js';

export function journalReadsDown<J extends JournalStore>(store: J, reads: RegExp, down: () => boolean): J {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'get' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (sql: string, ...params: unknown[]) =>
        down() && reads.test(sql)
          ? Promise.reject(new JournalUnavailableError('postgres://db/gridsync', 'connection refused', 'ECONNREFUSED'))
          : (value as (sql: string, ...p: unknown[]) => Promise<unknown>).call(target, sql, ...params);
    },
  });
}
