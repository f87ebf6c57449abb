/**
 * The `vectors` table (vectors/embeddings.ts): one unit vector per entry id,
 * stamped with the model and the hash of the embedded text, so only new or
 * changed entries are embedded again. Created on first use: an index that
 * never had an embedder has no such table.
 */
import type Database from 'better-sqlite3';
import { buildWhere, type SearchFilters } from './query.js';

export function ensureVectorTable(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL)');
}

export interface EntryVectorState {
  id: string;
  /** The entry's stored JSON. */
  data: string;
  /** Hash and model of its stored vector; null when it has none. */
  vhash: string | null;
  vmodel: string | null;
}

/** Every entry with the hash and model of its stored vector, if any. */
export function entryVectorStates(db: Database.Database): EntryVectorState[] {
  ensureVectorTable(db);
  return db.prepare('SELECT e.id, e.data, v.hash AS vhash, v.model AS vmodel FROM entries e LEFT JOIN vectors v ON v.id = e.id').all() as EntryVectorState[];
}

/** Stores (or replaces) these entries' vectors in one transaction. */
export function storeVectors(db: Database.Database, model: string, rows: Array<{ id: string; hash: string; vec: Float32Array }>): void {
  ensureVectorTable(db);
  const put = db.prepare('INSERT OR REPLACE INTO vectors (id, model, hash, vec) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (const r of rows) put.run(r.id, model, r.hash, Buffer.from(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength));
  })();
}

/** The stored vectors of this model whose entries pass the filters (filters in SQL, before any cut). */
export function filteredVectors(db: Database.Database, model: string, filters: SearchFilters): Array<{ rowid: number; vec: Float32Array }> {
  ensureVectorTable(db);
  const where = buildWhere(filters);
  const rows = db.prepare(`SELECT e.rowid AS rowid, v.vec AS vec FROM vectors v JOIN entries e ON e.id = v.id WHERE v.model = ?${where.sql}`).all(model, ...where.params) as Array<{ rowid: number; vec: Buffer }>;
  return rows.map((r) => ({ rowid: r.rowid, vec: new Float32Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength / 4) }));
}
