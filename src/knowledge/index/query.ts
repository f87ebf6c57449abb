/**
 * Candidate retrieval: one FTS5 query with every filter in its WHERE clause,
 * so filters apply before the candidate cut (seed 000 §4.1, G-C3). The user's
 * text never reaches the MATCH expression as syntax: it is reduced to word
 * tokens and each is quoted, so FTS operators, quotes and regex characters in
 * a query are plain text.
 */
import type Database from 'better-sqlite3';
import type { KnowledgeEntry } from '../format/entry.js';
import type { FieldLengths } from './fieldLengths.js';
import { queryTerms } from '../format/text.js';

/** FORMATS §5.1 field boosts: title 5, summary 1.5, tags 3, body 0.5. */
export const FIELD_WEIGHTS = { title: 5, summary: 1.5, tags: 3, body: 0.5 } as const;

/** Dropped from queries that have other words: they only add noise to an OR query. */
const STOP_WORDS = new Set(
  'a an and are as at be been but by can do does for from has have how i if in into is it its of on or over such that the their then there these this to was what when where which while who why will with would should could must about under than so not no'.split(' '),
);

export interface SearchFilters {
  /** spec | knowhow | wiki, or a knowhow/wiki type (tip, recipe, context…). */
  type?: string | undefined;
  category?: string | undefined;
  tag?: string | undefined;
  /** A linked workspace name, or `local` for the root's own knowledge. */
  workspace?: string | undefined;
  /** active (default) | deprecated | all. */
  status?: 'active' | 'deprecated' | 'all' | undefined;
  includeDeprecated?: boolean | undefined;
  /**
   * The current project's slug: wiki entries tagged for another project (`proj:<other>`, and not
   * global: `scope:global`, `scope:shared`, `proj:global`) stay out. Unset (`--all-projects`): all.
   */
  project?: string | undefined;
}

export interface Candidate {
  rowid: number;
  entry: KnowledgeEntry;
  status: 'active' | 'deprecated';
  /** Relevance, higher is better: FTS5 bm25 negated here; search.ts replaces it with its BM25F re-score. */
  bm25: number;
  sortDate: number;
  /** Token counts of the indexed fields (bm25f.ts). */
  lens: FieldLengths;
}

interface EntryRow {
  rowid: number;
  data: string;
  status: 'active' | 'deprecated';
  sortDate: number;
  lt: number;
  ls: number;
  lg: number;
  lb: number;
}

const ROW_SQL = 'SELECT e.rowid AS rowid, e.data AS data, e.status AS status, e.sort_date AS sortDate, e.len_title AS lt, e.len_summary AS ls, e.len_tags AS lg, e.len_body AS lb FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value';

function candidateOf(r: EntryRow, bm25: number): Candidate {
  return { rowid: r.rowid, entry: JSON.parse(r.data) as KnowledgeEntry, status: r.status, bm25, sortDate: r.sortDate, lens: { title: r.lt, summary: r.ls, tags: r.lg, body: r.lb } };
}

/** The words a query searches for: tokens minus stop words (unless that leaves none), at most 64. */
export function contentTerms(query: string): string[] {
  const terms = queryTerms(query).slice(0, 64);
  const content = terms.filter((t) => !STOP_WORDS.has(t));
  return content.length > 0 ? content : terms;
}

export function matchExpression(query: string): string | null {
  const terms = contentTerms(query);
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
}

const KINDS = new Set(['spec', 'knowhow', 'wiki']);

export function buildWhere(filters: SearchFilters): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filters.type) {
    if (KINDS.has(filters.type)) clauses.push('e.kind = ?');
    else clauses.push('e.type = ?');
    params.push(filters.type);
  }
  if (filters.category) {
    clauses.push('e.category = ?');
    params.push(filters.category);
  }
  if (filters.tag) {
    clauses.push('e.rowid IN (SELECT entry_rowid FROM entry_tags WHERE tag = ?)');
    params.push(filters.tag.toLowerCase());
  }
  if (filters.workspace) {
    if (filters.workspace === 'local') clauses.push('e.workspace IS NULL');
    else {
      clauses.push('e.workspace = ?');
      params.push(filters.workspace);
    }
  }
  if (filters.project) {
    clauses.push(
      "NOT (e.kind = 'wiki' AND EXISTS (SELECT 1 FROM entry_tags t WHERE t.entry_rowid = e.rowid AND t.tag LIKE 'proj:%') AND NOT EXISTS (SELECT 1 FROM entry_tags t WHERE t.entry_rowid = e.rowid AND t.tag IN ('scope:global', 'scope:shared', 'proj:global', ?)))",
    );
    params.push(`proj:${filters.project.toLowerCase()}`);
  }
  const status = filters.status ?? (filters.includeDeprecated ? 'all' : 'active');
  if (status !== 'all') {
    clauses.push('e.status = ?');
    params.push(status);
  }
  return { sql: clauses.length ? ` AND ${clauses.join(' AND ')}` : '', params };
}

const stmtCache = new WeakMap<Database.Database, Map<string, Database.Statement>>();
function prepared(db: Database.Database, sql: string): Database.Statement {
  let m = stmtCache.get(db);
  if (!m) stmtCache.set(db, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = db.prepare(sql)));
  return s;
}

/**
 * Candidates in BM25F order with every filter applied before the cut. FTS5
 * cannot stop early once a joined filter is in the WHERE clause, so the common
 * case runs in two steps: take the best `n` matches from the FTS table alone,
 * keep those that pass the filters, and if fewer than `limit` survive while
 * more matches exist, widen `n` (×4) and repeat — which returns exactly what
 * filter-then-limit would, without joining every match every time.
 */
export function fetchCandidates(db: Database.Database, query: string, filters: SearchFilters, limit: number): Candidate[] {
  const match = matchExpression(query);
  if (!match) return [];
  const where = buildWhere(filters);
  const w = FIELD_WEIGHTS;
  const rank = `bm25(entries_fts, ${w.title}, ${w.summary}, ${w.tags}, ${w.body})`;
  const top = prepared(db, `SELECT rowid, ${rank} AS rank FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rank LIMIT ?`);
  const plan = planPruning(db, contentTerms(query));
  let n = Math.max(limit * 2, 64);
  for (;;) {
    const hits = (plan && prunedTop(db, rank, match, plan, n)) || (top.all(match, n) as Array<{ rowid: number; rank: number }>);
    const exhausted = hits.length < n;
    if (hits.length === 0) return [];
    const rankOf = new Map(hits.map((h) => [h.rowid, h.rank]));
    // Which of the window pass the filters (no text fetched yet). json_each is
    // scanned first (CROSS JOIN fixes the order) and rows are looked up by rowid.
    const pass = prepared(db, `SELECT e.rowid AS rowid FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value WHERE 1 = 1${where.sql}`)
      .pluck()
      .all(JSON.stringify(hits.map((h) => h.rowid)), ...where.params) as number[];
    if (pass.length >= limit || exhausted) {
      const chosen = pass.sort((a, b) => rankOf.get(a)! - rankOf.get(b)! || a - b).slice(0, limit);
      const rows = prepared(db, ROW_SQL).all(JSON.stringify(chosen)) as EntryRow[];
      const byRow = new Map(rows.map((r) => [r.rowid, r]));
      return chosen.map((id) => candidateOf(byRow.get(id)!, -rankOf.get(id)!));
    }
    n *= 4;
  }
}

/*
 * Skipping the matches that cannot reach the window (MaxScore). FTS5's bm25
 * adds, per query word, idf × f·(k1+1) / (f + k1·(1 − b + b·len/avglen)),
 * with f the column-weighted frequency: always below idf × (k1 + 1). A
 * document that contains only the most common words of a query therefore
 * scores below the sum of those words' bounds. When the best `n` among the
 * documents that contain a rarer word all score above that sum, they are the
 * best `n` overall: the common-word-only documents are never ranked. The
 * window is ranked by the very same expression, so ranks are identical; when
 * the check fails the whole match set is ranked as before. Words in more than
 * half the documents (FTS5 gives them an idf of 1e-6) are the usual case.
 */
const BM25_K1 = 1.2;
/** Below this many (summed) matches, ranking all of them is cheaper than planning. */
const PRUNE_MIN_MATCHES = 2000;

interface PrunePlan {
  /** MATCH expression of the rarer words: the documents ranked. */
  essential: string;
  /** At most this many documents contain a rarer word (the sum of their counts). */
  essentialMax: number;
  /** Upper bound of the score of a document with none of the rarer words. */
  bound: number;
}

function phrase(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/**
 * Row count and per-word document counts, kept while the index is unchanged
 * (SQLite's data_version moves when another connection commits,
 * total_changes when this one writes): a warm process counts a common word once.
 */
const counts = new WeakMap<Database.Database, { key: string; rows: number; df: Map<string, number>; avg?: FieldLengths }>();
const MAX_CACHED_WORDS = 4096;
function indexCounts(db: Database.Database) {
  const key = `${String(prepared(db, 'PRAGMA data_version').pluck().get())}:${String(prepared(db, 'SELECT total_changes()').pluck().get())}`;
  let c = counts.get(db);
  if (c?.key !== key) {
    c = { key, rows: prepared(db, 'SELECT count(*) FROM entries').pluck().get() as number, df: new Map() };
    counts.set(db, c);
  }
  return c;
}

/** The number of entries and each field's average length in tokens (read from the covering index entries_lens, kept while the index is unchanged). */
export function corpusStats(db: Database.Database): { rows: number; avg: FieldLengths } {
  const c = indexCounts(db);
  c.avg ??= prepared(db, 'SELECT coalesce(avg(len_title), 0) AS title, coalesce(avg(len_summary), 0) AS summary, coalesce(avg(len_tags), 0) AS tags, coalesce(avg(len_body), 0) AS body FROM entries').get() as FieldLengths;
  return { rows: c.rows, avg: c.avg };
}

function planPruning(db: Database.Database, terms: string[]): PrunePlan | null {
  if (terms.length < 2) return null;
  const c = indexCounts(db);
  const count = prepared(db, 'SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck();
  const df = terms.map((t) => {
    let n = c.df.get(t);
    if (n === undefined) {
      n = count.get(phrase(t)) as number;
      if (c.df.size >= MAX_CACHED_WORDS) c.df.clear();
      c.df.set(t, n);
    }
    return { t, df: n };
  });
  const total = df.reduce((a, d) => a + d.df, 0);
  if (total < PRUNE_MIN_MATCHES) return null;
  const rows = c.rows;
  // FTS5's idf (fts5_aux.c): log((N − n + 0.5) / (n + 0.5)), floored at 1e-6. A 5 % margin covers rounding.
  const bound = (n: number) => 1.05 * (BM25_K1 + 1) * Math.max(1e-6, Math.log((rows - n + 0.5) / (n + 0.5)));
  const byRarity = [...df].sort((a, b) => a.df - b.df);
  const rarest = bound(byRarity[0]!.df);
  // Most common first into the skipped set, while their bounds stay small beside the rarest word's.
  let skipped = 0;
  let k = byRarity.length;
  while (k > 1 && skipped + bound(byRarity[k - 1]!.df) < 0.25 * rarest) skipped += bound(byRarity[--k]!.df);
  if (k === byRarity.length) return null;
  const kept = byRarity.slice(0, k);
  if (kept.reduce((a, d) => a + d.df, 0) > 0.5 * total) return null;
  return { essential: kept.map((d) => phrase(d.t)).join(' OR '), essentialMax: kept.reduce((a, d) => a + d.df, 0), bound: skipped };
}

/** The best `n` by the full expression among the documents with a rarer word, or null when they cannot be shown to be the best overall. */
function prunedTop(db: Database.Database, rank: string, match: string, plan: PrunePlan, n: number): Array<{ rowid: number; rank: number }> | null {
  // Too few documents have a rarer word to fill the window: the check would fail, skip the attempt.
  if (plan.essentialMax < n) return null;
  // `+rowid` keeps FTS5 from seeking per rowid: the full match is walked once and only the kept rows are ranked.
  const hits = prepared(
    db,
    `SELECT rowid, ${rank} AS rank FROM entries_fts WHERE entries_fts MATCH ? AND +rowid IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?) ORDER BY rank LIMIT ?`,
  ).all(match, plan.essential, n) as Array<{ rowid: number; rank: number }>;
  if (hits.length < n) return null;
  // rank is bm25 negated: the n-th best score must beat anything the skipped words alone can add up to.
  return -hits[hits.length - 1]!.rank > plan.bound ? hits : null;
}

/** Rows by rowid (vector-only hits of a hybrid search), already filtered by the caller's SQL. */
export function fetchByRowids(db: Database.Database, rowids: number[]): Candidate[] {
  if (rowids.length === 0) return [];
  return (prepared(db, ROW_SQL).all(JSON.stringify(rowids)) as EntryRow[]).map((r) => candidateOf(r, 0));
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** True when every word of the query is a stop word (or there is none): such a query matches nothing. */
export function onlyStopWords(query: string): boolean {
  return queryTerms(query).every((t) => STOP_WORDS.has(t));
}

/**
 * Each term's weight for the minimum match (search.ts): FORMATS §5.1's idf,
 * ln(1 + (N − df + 0.5)/(df + 0.5)), with df counted in the index (cached while it is unchanged).
 * A word no entry holds weighs the most: a query of such words around one common word is noise.
 */
export function termWeights(db: Database.Database, terms: string[]): Map<string, { weight: number; df: number }> {
  const c = indexCounts(db);
  const count = prepared(db, 'SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck();
  const out = new Map<string, { weight: number; df: number }>();
  for (const t of terms) {
    let n = c.df.get(t);
    if (n === undefined) {
      n = count.get(phrase(t)) as number;
      if (c.df.size >= MAX_CACHED_WORDS) c.df.clear();
      c.df.set(t, n);
    }
    out.set(t, { weight: Math.log(1 + (c.rows - n + 0.5) / (n + 0.5)), df: n });
  }
  return out;
}
