/**
 * The entries a query names by id or alias (issue 16 item 2: exact id matches
 * win). Ids are not in the text index — to FTS5, `S-20260922-0acd2a63ab4f9f01`
 * is three meaningless tokens — so the query's id-shaped words are looked up
 * in the alias table (resolveAlias.ts: as written, then lower-cased), and the
 * entries they name are returned in query order, each once, if they pass the
 * same filters as the candidates (query.ts `buildWhere`: kind or type,
 * status, scope…). A filtered-out entry stays out; a word that names nothing
 * is only a word.
 *
 * Only id-shaped words are looked up: a digit or one of `: / _ . -` inside
 * (`S-20260922-…`, `tip-…`, `KH-…`, `wiki:C001`, `C001`, `knowhow/x.md`). A
 * wiki file may declare a plain word as an alias (`aliases: [vite]`); looking
 * those up would pin that entry to the top of every query holding the word.
 */
import type Database from 'better-sqlite3';
import { buildWhere, fetchByRowids, type Candidate, type SearchFilters } from './query.js';
import { resolveAlias } from './resolveAlias.js';

/** Words looked up per query (a query may be 4096 characters; an id list longer than this is not a lookup). */
const MAX_LOOKUPS = 32;
/** Quotes, brackets and sentence punctuation around a word are not part of the id it names. */
const EDGE_PUNCTUATION = /^[\s"'`([{<]+|[\s"'`)\]}>,;!?.:]+$/g;

/** The query's words that look like ids, without surrounding punctuation, in query order. */
export function idShapedWords(query: string): string[] {
  const out: string[] = [];
  for (const raw of query.split(/\s+/)) {
    const word = raw.replace(EDGE_PUNCTUATION, '');
    if (word.length >= 2 && /[\p{L}\p{N}]/u.test(word) && /[\p{N}:/_.-]/u.test(word) && !out.includes(word)) out.push(word);
    if (out.length >= MAX_LOOKUPS) break;
  }
  return out;
}

/** The entries the query names, in query order, that pass `filters`. */
export function namedEntries(db: Database.Database, query: string, filters: SearchFilters): Candidate[] {
  const ids: string[] = [];
  for (const word of idShapedWords(query)) {
    const id = resolveAlias(db, word);
    if (id && !ids.includes(id)) ids.push(id);
  }
  if (ids.length === 0) return [];
  const where = buildWhere(filters);
  const pass = db.prepare(`SELECT e.rowid FROM entries e WHERE e.id = ?${where.sql}`).pluck();
  const rowids = ids.map((id) => pass.get(id, ...where.params) as number | undefined).filter((r): r is number => r !== undefined);
  const byRow = new Map(fetchByRowids(db, rowids).map((c) => [c.rowid, c]));
  return rowids.map((r) => byRow.get(r)!);
}
