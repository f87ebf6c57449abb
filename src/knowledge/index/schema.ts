/**
 * The search index: a derived projection of the `.workflow/` files, kept in
 * its own SQLite file `<workflow root>/.maestro-index.db` (not in the
 * orchestrator's store). It lives inside the root so `--workflow-root` keeps
 * every read and write within that root, and two projects never share one;
 * deleting it loses nothing: it is rebuilt from the files on the next open.
 *
 * FTS5 gives per-column BM25 weights and applies `WHERE` filters before
 * `LIMIT`, which is what "filters before the cut" needs. Text is expanded by
 * text.ts `indexText` (CJK bigrams, camelCase) before it reaches the porter
 * unicode61 tokenizer.
 */
import type Database from 'better-sqlite3';

/**
 * Bump when the layout, the tokenization or what the parsers report changes: an older index is dropped and
 * rebuilt. 7: frontmatter findings (unfinished lists and maps, keys of the wrong type) are stored per file, and
 * an unchanged file is never read again, so an index of 6 would keep saying nothing about them.
 */
export const INDEX_SCHEMA_VERSION = 7;

export function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS files (
      path TEXT PRIMARY KEY, source TEXT NOT NULL, mtime_ms REAL NOT NULL, size INTEGER NOT NULL, findings TEXT NOT NULL DEFAULT '[]'
    );
    CREATE TABLE IF NOT EXISTS entries (
      rowid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      graph_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      type TEXT NOT NULL,
      scope TEXT NOT NULL,
      workspace TEXT,
      category TEXT,
      declared_status TEXT NOT NULL,
      status TEXT NOT NULL,
      family TEXT NOT NULL,
      file TEXT NOT NULL,
      sort_date REAL,
      -- Token counts of the indexed fields, for BM25F's per-field length normalisation (bm25f.ts); before data so reading them skips it.
      len_title INTEGER NOT NULL DEFAULT 0,
      len_summary INTEGER NOT NULL DEFAULT 0,
      len_tags INTEGER NOT NULL DEFAULT 0,
      len_body INTEGER NOT NULL DEFAULT 0,
      data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS entries_file ON entries(file);
    -- Covering: the corpus's average field lengths are read from this index, not from the rows.
    CREATE INDEX IF NOT EXISTS entries_lens ON entries(len_title, len_summary, len_tags, len_body);
    -- Contentless: the text lives once, in entries.data; FTS keeps only its inverted index.
    CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(title, summary, tags, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
    CREATE TABLE IF NOT EXISTS entry_tags (entry_rowid INTEGER NOT NULL, tag TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS entry_tags_tag ON entry_tags(tag, entry_rowid);
    CREATE INDEX IF NOT EXISTS entry_tags_row ON entry_tags(entry_rowid);
    CREATE TABLE IF NOT EXISTS aliases (alias TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (alias, id)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS aliases_id ON aliases(id);
    -- MaestroGraph edges. dst is a reference as written (sid, id, alias or path); resolved through aliases when read.
    CREATE TABLE IF NOT EXISTS edges (src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL, origin TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS edges_src ON edges(src, rel);
    CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, rel);
    CREATE INDEX IF NOT EXISTS edges_origin ON edges(origin);
    -- Exposure (impressions): bumped by search, never read by it (exploration is seeded). Survives rebuilds.
    CREATE TABLE IF NOT EXISTS exposure (id TEXT PRIMARY KEY, hits INTEGER NOT NULL DEFAULT 0, last_hit_at INTEGER);
    -- Code graph (codeGraph.ts).
    CREATE TABLE IF NOT EXISTS code_files (path TEXT PRIMARY KEY, mtime_ms REAL NOT NULL, size INTEGER NOT NULL, lang TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS code_symbols (
      rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, file TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
      line INTEGER, signature TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX IF NOT EXISTS code_symbols_file ON code_symbols(file);
    CREATE VIRTUAL TABLE IF NOT EXISTS code_fts USING fts5(name, path, doc, content = '', contentless_delete = 1, tokenize = 'porter unicode61');
    CREATE TABLE IF NOT EXISTS code_imports (file TEXT NOT NULL, spec TEXT NOT NULL, resolved TEXT);
    CREATE INDEX IF NOT EXISTS code_imports_file ON code_imports(file);
    CREATE INDEX IF NOT EXISTS code_imports_resolved ON code_imports(resolved);
  `);
}

/** Drops the derived tables (not exposure) so the next sync rebuilds everything. */
export function dropDerived(db: Database.Database): void {
  db.exec(`
    DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS entries_fts; DROP TABLE IF EXISTS entry_tags;
    DROP TABLE IF EXISTS aliases; DROP TABLE IF EXISTS edges; DROP TABLE IF EXISTS code_files; DROP TABLE IF EXISTS code_symbols;
    DROP TABLE IF EXISTS code_fts; DROP TABLE IF EXISTS code_imports; DROP TABLE IF EXISTS meta;
  `);
}
