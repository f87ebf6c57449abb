/**
 * Reads of the code graph's tables (graph/codeGraph.ts writes them through
 * codeFiles.ts): the FTS5 match behind `search --code`, and one symbol or
 * file with what it defines, imports and is imported by, for `maestro load`.
 */
import type Database from 'better-sqlite3';

export interface CodeSymbolRow {
  id: string;
  kind: string;
  name: string;
  file: string;
  line: number | null;
  signature: string;
}

/** Symbols matching an FTS5 expression, best BM25 first (name weighted 3, path and doc 1). */
export function matchCodeSymbols(db: Database.Database, match: string, limit: number): Array<CodeSymbolRow & { rank: number }> {
  return db
    .prepare('SELECT s.id, s.kind, s.name, s.file, s.line, s.signature, bm25(code_fts, 3.0, 1.0, 1.0) AS rank FROM code_fts JOIN code_symbols s ON s.rowid = code_fts.rowid WHERE code_fts MATCH ? ORDER BY rank LIMIT ?')
    .all(match, limit) as Array<CodeSymbolRow & { rank: number }>;
}

export function codeSymbol(db: Database.Database, id: string): CodeSymbolRow | null {
  return (db.prepare('SELECT id, kind, name, file, line, signature FROM code_symbols WHERE id = ?').get(id) as CodeSymbolRow | undefined) ?? null;
}

/** What a file defines (its own `file` row left out), imports, and which files import it. */
export function codeFileLinks(db: Database.Database, file: string): {
  symbols: Array<{ id: string; name: string; kind: string; line: number | null }>;
  imports: Array<{ spec: string; resolved: string | null }>;
  importedBy: string[];
} {
  return {
    symbols: db.prepare("SELECT id, name, kind, line FROM code_symbols WHERE file = ? AND kind != 'file' ORDER BY line").all(file) as Array<{ id: string; name: string; kind: string; line: number | null }>,
    imports: db.prepare('SELECT spec, resolved FROM code_imports WHERE file = ?').all(file) as Array<{ spec: string; resolved: string | null }>,
    importedBy: db.prepare('SELECT DISTINCT file FROM code_imports WHERE resolved = ? ORDER BY file').pluck().all(file) as string[],
  };
}
