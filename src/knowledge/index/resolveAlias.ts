/**
 * The canonical id an id or alias names (FORMATS §2: ids are matched as
 * written, then lowercased); an exact id wins over an alias that equals it.
 */
import type Database from 'better-sqlite3';

export function resolveAlias(db: Database.Database, ref: string): string | null {
  const q = db.prepare('SELECT id FROM aliases WHERE alias = ? ORDER BY (alias = id) DESC, id LIMIT 1').pluck();
  return (q.get(ref) as string | undefined) ?? (q.get(ref.toLowerCase()) as string | undefined) ?? null;
}
