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
import { sleepSync } from './sleepSync.js';

/** better-sqlite3, loaded when a lock is first taken: a run worker that takes none does not load it. */
let Database: typeof BetterSqlite3 | undefined;

/**
 * Takes the lock of `path` (created with its folder if missing), retrying until `deadline` (epoch ms);
 * returns its release, or throws `busy()` once the deadline has passed.
 */
export function acquireKernelLock(path: string, deadline: number, busy: () => Error): () => void {
  mkdirSync(dirname(path), { recursive: true });
  Database ??= createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(path, { timeout: 0 });
  // Our own short, jittered retries instead of SQLite's busy handler, whose
  // back-off grows to 100 ms and lets late waiters starve behind early ones.
  for (;;) {
    try {
      db.exec('BEGIN EXCLUSIVE');
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') {
        db.close();
        throw err;
      }
      if (Date.now() > deadline) {
        db.close();
        throw busy();
      }
      sleepSync(1 + Math.floor(Math.random() * 4));
    }
  }
  return () => {
    try {
      db.exec('COMMIT');
    } finally {
      db.close();
    }
  };
}
