/**
 * SQLite through better-sqlite3 (12.x; 13 crashes on Node 20). WAL, so readers
 * never block the writer; a busy timeout, so a writer waits for another
 * process's write instead of failing; BEGIN IMMEDIATE for every write
 * transaction, so two processes never both read-then-write and deadlock on the
 * upgrade. better-sqlite3 is synchronous: one async mutex per handle keeps a
 * caller's statements out of another caller's open transaction.
 */
import { chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MaestroError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';
import { sleepSync } from '../lib/sleepSync.js';
import type { DBAdapter, Queryable, SqlValue } from './db.js';
import { rethrowSqlite } from './sqliteFaults.js';

export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

/**
 * `$1 … $n` → `?` in order of appearance, with the parameter order to bind
 * (a `$n` may appear twice). better-sqlite3 binds `?NNN` only by name. Our SQL
 * has no `$` inside string literals.
 */
function toSqlite(sql: string): { text: string; order: number[] } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { text, order };
}

export interface SqliteOptions {
  readonly?: boolean;
  /** Told of every damaged-file, full-disk or read-only error (the daemon's health conditions). */
  onFault?: (fault: MaestroError) => void;
}

type Guard = <T>(fn: () => T) => T;

/** Every statement's SQLite fault names the file (and is told to `onFault`). */
function faultGuard(path: string, onFault: SqliteOptions['onFault']): Guard {
  return <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      return rethrowSqlite(err, path, onFault);
    }
  };
}

/**
 * Switching a file to WAL needs it to itself for a moment. With several processes opening a fresh
 * file at once, SQLite may answer SQLITE_BUSY at once instead of waiting (it skips the busy handler
 * where waiting could deadlock): seen once in CI, one of ten processes migrating a new database
 * failed here. Tried again, briefly, until the busy timeout.
 */
function setWal(db: Database.Database): void {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (let waitMs = 5; ; waitMs = Math.min(waitMs * 2, 100)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      sleepSync(waitMs);
    }
  }
}

/** Opens the file and sets its pragmas: a garbage file fails here, at the first pragma. */
function openHandle(path: string, options: SqliteOptions, guard: Guard): Database.Database {
  let db: Database.Database;
  const creates = !options.readonly && path !== ':memory:' && !existsSync(path);
  try {
    db = new Database(path, { readonly: options.readonly ?? false, timeout: SQLITE_BUSY_TIMEOUT_MS });
    // A file made here is its owner's alone (the umask gave 0644 outside the 0700 home); SQLite gives its -wal and -shm
    // the database's mode. One the person made keeps theirs.
    if (creates) chmodSync(path, 0o600);
  } catch (err) {
    throw new MaestroError('DATABASE_UNREACHABLE', `Cannot open SQLite database ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    guard(() => {
      db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      if (!options.readonly) {
        setWal(db);
        // NORMAL in WAL mode: durable across process crashes, a power loss may lose the last commits.
        db.pragma('synchronous = NORMAL');
      }
      db.pragma('foreign_keys = ON');
    });
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Statements run on the handle at once, prepared once per SQL text: what a transaction's callback gets (no mutex). */
function directQueryable(db: Database.Database, guard: Guard): Queryable {
  const cache = new Map<string, { stmt: Database.Statement; order: number[] }>();
  const prepare = (sql: string, params: readonly SqlValue[]) => {
    let entry = cache.get(sql);
    if (!entry) {
      const { text, order } = toSqlite(sql);
      entry = { stmt: db.prepare(text), order };
      cache.set(sql, entry);
    }
    return { stmt: entry.stmt, args: entry.order.map((i) => params[i] ?? null) };
  };
  return {
    dialect: 'sqlite',
    async all<T>(sql: string, params: readonly SqlValue[] = []) {
      return guard(() => {
        const { stmt, args } = prepare(sql, params);
        if (!stmt.reader) {
          stmt.run(...args);
          return [] as T[];
        }
        return stmt.all(...args) as T[];
      });
    },
    async one<T>(sql: string, params: readonly SqlValue[] = []) {
      return guard(() => {
        const { stmt, args } = prepare(sql, params);
        return (stmt.reader ? stmt.get(...args) : (stmt.run(...args), undefined)) as T | undefined;
      });
    },
    async run(sql: string, params: readonly SqlValue[] = []) {
      return guard(() => {
        const { stmt, args } = prepare(sql, params);
        if (stmt.reader) return stmt.all(...args).length;
        return stmt.run(...args).changes;
      });
    },
  };
}

export function openSqlite(path: string, options: SqliteOptions = {}): DBAdapter {
  const guard = faultGuard(path, options.onFault);
  const db = openHandle(path, options, guard);
  const direct = directQueryable(db, guard);

  // The mutex: a promise chain every operation waits its turn on.
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = tail.then(fn, fn);
    tail = result.catch(() => undefined);
    return result;
  };

  let closed = false;
  const untrack = trackResource('database', `sqlite ${path}`, () => adapter.close());
  const adapter: DBAdapter = {
    dialect: 'sqlite',
    name: `sqlite:${path}`,
    all: (sql, params) => exclusive(() => direct.all(sql, params)),
    one: (sql, params) => exclusive(() => direct.one(sql, params)),
    run: (sql, params) => exclusive(() => direct.run(sql, params)),
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return exclusive(async () => {
        guard(() => db.exec('BEGIN IMMEDIATE'));
        try {
          const result = await fn(direct);
          guard(() => db.exec('COMMIT'));
          return result;
        } catch (err) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw err;
        }
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await tail;
      untrack();
      db.close();
    },
  };
  return adapter;
}
