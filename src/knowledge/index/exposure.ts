/**
 * Exposure counts (impressions). Bumped for every result a search returns
 * (unless it is a read-only probe), for audit and reporting. Search never
 * reads them: the exploration slot is seeded (exploration.ts), so what use
 * changes can never change a page.
 */
import type Database from 'better-sqlite3';

const statements = new WeakMap<Database.Database, Database.Statement>();

export function bumpExposure(db: Database.Database, ids: string[], now: number): void {
  if (ids.length === 0) return;
  try {
    let stmt = statements.get(db);
    if (!stmt) {
      stmt = db.prepare('INSERT INTO exposure (id, hits, last_hit_at) VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET hits = hits + 1, last_hit_at = excluded.last_hit_at');
      statements.set(db, stmt);
    }
    const s = stmt;
    db.transaction(() => {
      for (const id of ids) s.run(id, now);
    })();
  } catch {
    // Counting is best effort: a locked or broken table must never fail a search.
  }
}
