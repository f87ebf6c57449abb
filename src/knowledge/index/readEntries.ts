/**
 * Reads of indexed entries as the parser produced them (the `data` JSON):
 * one by id, all of them (of one kind), and their count.
 */
import type Database from 'better-sqlite3';
import type { KnowledgeEntry } from '../format/entry.js';

export type EntryStatus = 'active' | 'deprecated';

export function entryById(db: Database.Database, id: string): { entry: KnowledgeEntry; status: EntryStatus } | undefined {
  const row = db.prepare('SELECT data, status FROM entries WHERE id = ?').get(id) as { data: string; status: EntryStatus } | undefined;
  return row && { entry: JSON.parse(row.data) as KnowledgeEntry, status: row.status };
}

export function allEntries(db: Database.Database, kinds?: Array<KnowledgeEntry['kind']>): KnowledgeEntry[] {
  const rows = (kinds ? db.prepare(`SELECT data FROM entries WHERE kind IN (${kinds.map(() => '?').join(', ')})`).pluck().all(...kinds) : db.prepare('SELECT data FROM entries').pluck().all()) as string[];
  return rows.map((d) => JSON.parse(d) as KnowledgeEntry);
}

/** Changes when another connection commits to the index file (SQLite's PRAGMA data_version); this connection's own commits do not. */
export function dataVersion(db: Database.Database): number {
  return db.pragma('data_version', { simple: true }) as number;
}

export function countEntries(db: Database.Database): number {
  return db.prepare('SELECT count(*) FROM entries').pluck().get() as number;
}

/** Every kind (spec, knowhow, wiki) and type (tip, recipe, context…) the indexed entries have, sorted: what `--type` takes. */
export function entryTypes(db: Database.Database): string[] {
  return db.prepare('SELECT kind FROM entries UNION SELECT type FROM entries WHERE type IS NOT NULL ORDER BY 1').pluck().all() as string[];
}
