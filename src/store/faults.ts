/**
 * A fault-injection seam for the crash suites, never used in production: a
 * test passes `faults` to createStore and is told before every statement the
 * store sends (writes outside a transaction; every statement inside one) and
 * before every COMMIT. Killing the process there shows what a crash between
 * two statements leaves behind. Without `faults` the adapter is not wrapped.
 *
 * A point is named `<label>#<n> <statement head>` (the n-th statement of the
 * transaction labelled `label`, counted from 0) or `<label>#commit`; a write
 * outside any transaction is `direct <statement head>`.
 */
import type { DBAdapter, Queryable, QueryOptions, SqlValue, TransactionOptions } from './db.js';

export interface StoreFaults {
  /** Called synchronously before the statement or commit named `at`; may end the process. */
  point(at: string): void;
}

/** "UPDATE tasks", "INSERT INTO events", "SELECT * FROM": enough to tell statements apart. */
export function statementHead(sql: string): string {
  return sql.trim().split(/\s+/).slice(0, 3).join(' ').replace(/\($/, '');
}

const isRead = (sql: string) => /^\s*SELECT\b/i.test(sql) && !/pg_notify/i.test(sql);

function seamed(inner: Queryable, before: (sql: string) => void): Queryable {
  return {
    dialect: inner.dialect,
    all: <T>(sql: string, params?: readonly SqlValue[], options?: QueryOptions) => (before(sql), inner.all<T>(sql, params, options)),
    one: <T>(sql: string, params?: readonly SqlValue[]) => (before(sql), inner.one<T>(sql, params)),
    run: (sql: string, params?: readonly SqlValue[]) => (before(sql), inner.run(sql, params)),
  };
}

export function withFaults(raw: DBAdapter, faults: StoreFaults): DBAdapter {
  const direct = seamed(raw, (sql) => {
    if (!isRead(sql)) faults.point(`direct ${statementHead(sql)}`);
  });
  return {
    ...direct,
    name: raw.name,
    close: () => raw.close(),
    // A one-statement transaction has the same points: before its statement, and after it (its commit).
    transaction<T>(fn: (tx: Queryable) => Promise<T>, label = 'tx', options?: TransactionOptions): Promise<T> {
      return raw.transaction(async (q) => {
        let n = 0;
        const result = await fn(seamed(q, (sql) => faults.point(`${label}#${n++} ${statementHead(sql)}`)));
        faults.point(`${label}#commit`);
        return result;
      }, label, options);
    },
  };
}
