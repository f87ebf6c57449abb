/**
 * Whether the code graph was ever built for this index (`code_synced_at` in
 * meta) and whether it holds any symbol: a mixed search says which
 * (FORMATS §5.3 `codeIndex`).
 */
import type Database from 'better-sqlite3';

export function codeGraphBuilt(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM meta WHERE key = 'code_synced_at'").get() !== undefined;
}

export function hasCodeSymbols(db: Database.Database): boolean {
  return db.prepare('SELECT 1 FROM code_symbols LIMIT 1').get() !== undefined;
}
