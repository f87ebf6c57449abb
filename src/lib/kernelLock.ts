/**
 * A lock the kernel releases when its holder dies: an exclusive transaction
 * on a tiny SQLite file (the corpus lock's first layer, knowledge/format/lock.ts).
 * There is no stale state to reclaim, so mutual exclusion among processes
 * never depends on timing. This is not a database: nothing is stored in the
 * file, SQLite is only the portable way to hold a file lock from Node.
 *
 * Two holders in one process would each open their own connection and wait
 * on each other, so callers keep their own re-entrancy count.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { takenSync, type LockTry } from './lockTry.js';

/** better-sqlite3, loaded when a lock is first taken: a run worker that takes none does not load it. */
let Database: typeof BetterSqlite3 | undefined;

/**
 * Tries for the lock of `path` (created with its folder if missing) on one connection, kept across tries. A failed
 * `BEGIN EXCLUSIVE` holds nothing, so a waiting connection never keeps another connection from the lock.
 * Each try gives the release, or the pause before the next: our own short, jittered retries instead of SQLite's
 * busy handler, whose back-off grows to 100 ms and lets late waiters starve behind early ones. Once `deadline`
 * (epoch ms) has passed it throws `busy()`.
 */
export function kernelLockTry(path: string, deadline: number, busy: () => Error): LockTry {
  mkdirSync(dirname(path), { recursive: true });
  Database ??= createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(path, { timeout: 0 });
  const release = () => {
    try {
      db.exec('COMMIT');
    } finally {
      db.close();
    }
  };
  const next = () => {
    try {
      db.exec('BEGIN EXCLUSIVE');
      return release;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') {
        db.close();
        throw err;
      }
      if (Date.now() > deadline) {
        db.close();
        throw busy();
      }
      return 1 + Math.floor(Math.random() * 4);
    }
  };
  return { next, abandon: () => db.close() };
}

/** Takes the lock of `path`, waiting (the thread blocked) until `deadline`; returns its release, or throws `busy()`. */
export function acquireKernelLock(path: string, deadline: number, busy: () => Error): () => void {
  return takenSync(kernelLockTry(path, deadline, busy));
}
