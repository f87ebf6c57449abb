/**
 * Writes of the code graph (graph/codeGraph.ts parses, this stores): which
 * files are indexed at which stat, their symbols with the FTS5 text, their
 * imports, and the `code_synced_at` mark that tells "empty" from "never
 * built" (codeIndexState.ts).
 */
import type Database from 'better-sqlite3';

/** The stat each indexed file had when it was parsed, by its path as stored (project-relative). */
export function storedCodeFiles(db: Database.Database): Map<string, { mtime_ms: number; size: number }> {
  const rows = db.prepare('SELECT path, mtime_ms, size FROM code_files').all() as Array<{ path: string; mtime_ms: number; size: number }>;
  return new Map(rows.map((r) => [r.path, r]));
}

/** One symbol with the text FTS5 indexes for it (already through `indexText`). */
export interface CodeSymbolWrite {
  id: string;
  name: string;
  kind: string;
  line: number | null;
  signature: string;
  fts: { name: string; path: string; doc: string };
}

/** A parsed file: its row, its symbols (the `file` symbol first), its imports (resolved: a project-relative path, or null). */
export interface CodeFileWrite {
  path: string;
  mtimeMs: number;
  size: number;
  lang: string;
  symbols: CodeSymbolWrite[];
  imports: Array<{ spec: string; resolved: string | null }>;
}

/** Drops the removed files and replaces the changed ones, in one transaction (paths project-relative). */
export function replaceCodeFiles(db: Database.Database, removed: string[], files: CodeFileWrite[]): void {
  const symRowids = db.prepare('SELECT rowid FROM code_symbols WHERE file = ?');
  const delFts = db.prepare('DELETE FROM code_fts WHERE rowid = ?');
  const del = [db.prepare('DELETE FROM code_symbols WHERE file = ?'), db.prepare('DELETE FROM code_imports WHERE file = ?'), db.prepare('DELETE FROM code_files WHERE path = ?')];
  const insFile = db.prepare('INSERT OR REPLACE INTO code_files (path, mtime_ms, size, lang) VALUES (?, ?, ?, ?)');
  const insSym = db.prepare('INSERT OR REPLACE INTO code_symbols (id, file, name, kind, line, signature) VALUES (?, ?, ?, ?, ?, ?)');
  const insFts = db.prepare('INSERT INTO code_fts (rowid, name, path, doc) VALUES (?, ?, ?, ?)');
  const insImp = db.prepare('INSERT INTO code_imports (file, spec, resolved) VALUES (?, ?, ?)');
  const drop = (path: string) => {
    for (const r of symRowids.all(path) as Array<{ rowid: number }>) delFts.run(r.rowid);
    for (const d of del) d.run(path);
  };
  db.transaction(() => {
    for (const p of removed) drop(p);
    for (const f of files) {
      drop(f.path);
      insFile.run(f.path, f.mtimeMs, f.size, f.lang);
      for (const s of f.symbols) {
        const info = insSym.run(s.id, f.path, s.name, s.kind, s.line, s.signature);
        insFts.run(Number(info.lastInsertRowid), s.fts.name, s.fts.path, s.fts.doc);
      }
      for (const i of f.imports) insImp.run(f.path, i.spec, i.resolved);
    }
  })();
}

/** Marks the code graph as built now (even when empty) and returns how many symbols it holds. */
export function markCodeSynced(db: Database.Database, now: number): number {
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('code_synced_at', ?)").run(String(now));
  return db.prepare('SELECT count(*) FROM code_symbols').pluck().get() as number;
}
