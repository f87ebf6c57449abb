/**
 * Every id a `load` could name — entries, then code symbols (capped: a huge
 * code graph must not make an unknown-id error slow) — for the "nearest known
 * ids" hint.
 */
import type Database from 'better-sqlite3';

const MAX_CODE_IDS = 20_000;

export function knownIds(db: Database.Database): string[] {
  const entries = db.prepare('SELECT DISTINCT id FROM entries').pluck().all() as string[];
  const code = db.prepare('SELECT id FROM code_symbols LIMIT ?').pluck().all(MAX_CODE_IDS) as string[];
  return [...entries, ...code];
}
