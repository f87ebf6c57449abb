/**
 * Exposure counts (impressions). Bumped for every result a search returns,
 * read only to pick the exploration slot (seed 000 §4.2). Never part of the
 * relevance score. Missing or corrupt counts switch exploration off and
 * change nothing else; a read-only probe never bumps.
 */
import type Database from 'better-sqlite3';

export type ExposureRead = { ok: true; hits: Map<string, number> } | { ok: false; reason: string };

const statements = new WeakMap<Database.Database, { any: Database.Statement; many: Database.Statement; bump: Database.Statement }>();
function stmts(db: Database.Database) {
  let s = statements.get(db);
  if (!s) {
    s = {
      any: db.prepare('SELECT 1 FROM exposure LIMIT 1'),
      many: db.prepare('SELECT x.id AS id, x.hits AS hits FROM json_each(?) j CROSS JOIN exposure x ON x.id = j.value'),
      bump: db.prepare('INSERT INTO exposure (id, hits, last_hit_at) VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET hits = hits + 1, last_hit_at = excluded.last_hit_at'),
    };
    statements.set(db, s);
  }
  return s;
}

export function readExposure(db: Database.Database, ids: string[]): ExposureRead {
  try {
    const { any, many } = stmts(db);
    if (!any.get()) return { ok: false, reason: 'no-counts' };
    const hits = new Map<string, number>();
    for (const row of many.all(JSON.stringify(ids)) as Array<{ id: string; hits: unknown }>) {
      if (typeof row.hits !== 'number' || !Number.isInteger(row.hits) || row.hits < 0) return { ok: false, reason: 'corrupt-counts' };
      hits.set(row.id, row.hits);
    }
    return { ok: true, hits };
  } catch (err) {
    return { ok: false, reason: `unreadable-counts: ${(err as Error).message}` };
  }
}

export function bumpExposure(db: Database.Database, ids: string[], now: number): void {
  if (ids.length === 0) return;
  try {
    const stmt = stmts(db).bump;
    db.transaction(() => {
      for (const id of ids) stmt.run(id, now);
    })();
  } catch {
    // Counting is best effort: a locked or broken table must never fail a search.
  }
}
