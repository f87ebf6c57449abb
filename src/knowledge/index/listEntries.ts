/**
 * `maestro spec list` / `knowhow list`: entries matching the search filters
 * (query.ts `buildWhere`) and an optional keyword — a tag, or a word of the
 * title — in file order.
 */
import type Database from 'better-sqlite3';
import type { KnowledgeEntry } from '../format/entry.js';
import { buildWhere, type SearchFilters } from './query.js';
import type { EntryStatus } from './readEntries.js';

export interface ListFilters extends SearchFilters {
  keyword?: string | undefined;
  limit?: number | undefined;
}

const DEFAULT_LIMIT = 1000;

export function listEntries(db: Database.Database, filters: ListFilters = {}): Array<KnowledgeEntry & { status: EntryStatus }> {
  const where = buildWhere(filters);
  const keyword = filters.keyword?.toLowerCase();
  // The title is matched inside the stored JSON; LIKE wildcards and quotes in the keyword are dropped, not escaped.
  const kw = keyword ? ' AND (e.rowid IN (SELECT entry_rowid FROM entry_tags WHERE tag = ?) OR lower(e.data) LIKE ?)' : '';
  const params = keyword ? [keyword, `%"title":"%${keyword.replace(/[%_"\\]/g, '')}%`] : [];
  const rows = db
    .prepare(`SELECT e.data, e.status FROM entries e WHERE 1=1${where.sql}${kw} ORDER BY e.kind, e.file, e.id LIMIT ?`)
    .all(...where.params, ...params, Math.max(1, filters.limit ?? DEFAULT_LIMIT)) as Array<{ data: string; status: EntryStatus }>;
  return rows.map((r) => ({ ...(JSON.parse(r.data) as KnowledgeEntry), status: r.status }));
}
