/**
 * Exposure counts (impressions). Bumped for every result a search returns,
 * read only to pick the exploration slot (seed 000 §4.2). Never part of the
 * relevance score. Missing or corrupt counts switch exploration off and
 * change nothing else; a read-only probe never bumps.
 */
import type Database from 'better-sqlite3';

export type ExposureRead = { ok: true; hits: Map<string, number> } | { ok: false; reason: string };

export function readExposure(db: Database.Database, ids: string[]): ExposureRead {
  try {
    const total = db.prepare('SELECT count(*) FROM exposure').pluck().get() as number;
    if (total === 0) return { ok: false, reason: 'no-counts' };
    const hits = new Map<string, number>();
    const stmt = db.prepare('SELECT hits FROM exposure WHERE id = ?');
    for (const id of ids) {
      const row = stmt.get(id) as { hits: unknown } | undefined;
      if (!row) continue;
      if (typeof row.hits !== 'number' || !Number.isInteger(row.hits) || row.hits < 0) return { ok: false, reason: 'corrupt-counts' };
      hits.set(id, row.hits);
    }
    return { ok: true, hits };
  } catch (err) {
    return { ok: false, reason: `unreadable-counts: ${(err as Error).message}` };
  }
}

export function bumpExposure(db: Database.Database, ids: string[], now: number): void {
  if (ids.length === 0) return;
  try {
    const stmt = db.prepare('INSERT INTO exposure (id, hits, last_hit_at) VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET hits = hits + 1, last_hit_at = excluded.last_hit_at');
    db.transaction(() => {
      for (const id of ids) stmt.run(id, now);
    })();
  } catch {
    // Counting is best effort: a locked or broken table must never fail a search.
  }
}
