/**
 * Opening the index and keeping it in step with the files. `sync()` stats
 * every source file and re-reads only those whose mtime or size changed, in one
 * transaction; `rebuild()` drops the projection and reads everything again.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { trackResource } from '../../lib/resources.js';
import type { KnowledgeEntry, KnowledgeSource } from '../format/entry.js';
import { isLink } from '../../lib/paths.js';
import type { Finding } from '../format/specParser.js';
import { indexText } from '../format/text.js';
import { tokenCount } from './fieldLengths.js';
import { INDEX_SCHEMA_VERSION, createSchema, dropDerived } from './schema.js';
import { excludeMachineState } from './machineState.js';

export const INDEX_FILE = '.maestro-index.db';

export interface IndexHandle {
  db: Database.Database;
  /** Where the index lives; ':memory:' for a read-only probe or a root without `.workflow/`. */
  location: string;
  readOnly: boolean;
  close(): void;
}

export interface OpenIndexOptions {
  workflowDir: string;
  /** Where the index file goes instead of `workflowDir` (root.ts privateIndexDir): made owner-only when missing. */
  indexDir?: string;
  /** Write nothing at all: use the file only if it is fresh, else build in memory. */
  readOnly?: boolean;
  sources: KnowledgeSource[];
}

function configure(db: Database.Database, writable: boolean): void {
  if (writable) {
    db.pragma('journal_mode = WAL');
    // The index is rebuildable: losing the last transaction on power loss costs nothing.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // What a row held is zeroed when it is deleted, not left in free pages: agents read this file, and an index
    // made before links out of the project were refused may hold what one brought in (corpus.ts linkedOut).
    db.pragma('secure_delete = ON');
  }
  // A 32 MB page cache: bulk (re)builds touch the FTS b-trees far more than the default 2 MB holds.
  db.pragma('cache_size = -32768');
}

function track(db: Database.Database, location: string, readOnly: boolean): IndexHandle {
  const untrack = trackResource('database', `knowledge index ${location}`, () => db.close());
  let closed = false;
  return {
    db,
    location,
    readOnly,
    close() {
      if (closed) return;
      closed = true;
      untrack();
      db.close();
    },
  };
}

/** A fresh index in memory: for a read-only probe, a root without `.workflow/`, or an index file that cannot be used. */
function memoryIndex(readOnly: boolean): IndexHandle {
  const mem = new Database(':memory:');
  createSchema(mem);
  setVersion(mem);
  return track(mem, ':memory:', readOnly);
}

export function openIndex(opts: OpenIndexOptions): IndexHandle {
  const path = join(opts.indexDir ?? opts.workflowDir, INDEX_FILE);
  if (opts.readOnly) {
    if (existsSync(path)) {
      try {
        const db = new Database(path, { readonly: true, fileMustExist: true });
        const version = db.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get();
        if (version === String(INDEX_SCHEMA_VERSION) && !isStale(db, opts.sources)) return track(db, path, true);
        db.close();
      } catch {
        // unreadable or old: fall through to a private in-memory build
      }
    }
    return memoryIndex(true);
  }
  if (opts.indexDir) {
    // Under $MAESTRO_HOME, the owner's alone (agents' sandbox hides it).
    try {
      mkdirSync(opts.indexDir, { recursive: true, mode: 0o700 });
    } catch (err) {
      process.stderr.write(`maestro: cannot make ${opts.indexDir} for the knowledge index (${(err as Error).message}); using an in-memory index.\n`);
      return memoryIndex(false);
    }
    return openFile(path);
  }
  if (!existsSync(opts.workflowDir)) return memoryIndex(false);
  mkdirSync(opts.workflowDir, { recursive: true });
  // SQLite would write through it, wherever it leads; the index is only a projection, so search goes on in memory.
  // (Its -wal and -shm files beside it are not checked: a link there needs one planted in .workflow/ by hand.)
  // So is a .workflow/ that is a link: it leads into another folder (another project's .workflow/, whose files
  // this root's reads skip anyway), where the index would be made.
  const linked = isLink(opts.workflowDir) ? opts.workflowDir : isLink(path) ? path : null;
  if (linked) {
    process.stderr.write(`maestro: ${linked === path ? `knowledge index ${path}` : linked} is a symbolic link; Maestro does not write its index through a link, so it uses an in-memory index. Remove the link to keep the index on disk.\n`);
    return memoryIndex(false);
  }
  // Machine state in the person's checkout, kept out of `git status` where no .gitignore names it.
  excludeMachineState(opts.workflowDir);
  return openFile(path);
}

/** The index file at `path`, made or brought to this schema; one that cannot be used gives an in-memory index. */
function openFile(path: string): IndexHandle {
  let db: Database.Database;
  try {
    const created = !existsSync(path);
    db = new Database(path);
    // 8 KB pages for a new file: entries of 1–2 KB pack better than in 4 KB pages (about 5 % smaller).
    // An existing file keeps its page size (WAL fixes it).
    if (created) db.pragma('page_size = 8192');
    configure(db, true);
    const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'meta'").get();
    const version = hasMeta ? db.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get() : undefined;
    if (version !== String(INDEX_SCHEMA_VERSION)) dropDerived(db);
    createSchema(db);
    // Written only when it changes: a search must not start with a write transaction.
    if (version !== String(INDEX_SCHEMA_VERSION)) setVersion(db);
  } catch (err) {
    // A corrupt index is only a projection: say so and build a fresh one in memory.
    process.stderr.write(`maestro: knowledge index ${path} is unreadable (${(err as Error).message}); using an in-memory index. Delete the file to rebuild it.\n`);
    return memoryIndex(false);
  }
  return track(db, path, false);
}

function setVersion(db: Database.Database): void {
  db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)").run(String(INDEX_SCHEMA_VERSION));
}

function isStale(db: Database.Database, sources: KnowledgeSource[]): boolean {
  const d = diff(db, sources, false);
  return d.changed.length > 0 || d.removed.length > 0;
}

interface Diff {
  changed: Array<{ source: KnowledgeSource; path: string; mtimeMs: number; size: number }>;
  removed: string[];
}

/** `partial`: only the files of these sources are compared (the others' rows are left as they are). */
function diff(db: Database.Database, sources: KnowledgeSource[], partial: boolean): Diff {
  // Rows as arrays (raw): one object less per file on the cold CLI's freshness check.
  const rows = partial
    ? db.prepare(`SELECT path, mtime_ms, size FROM files WHERE source IN (${sources.map(() => '?').join(', ')})`).raw().all(...sources.map((s) => s.name))
    : db.prepare('SELECT path, mtime_ms, size FROM files').raw().all();
  const stored = new Map<string, { mtime_ms: number; size: number }>();
  for (const [path, mtime_ms, size] of rows as Array<[string, number, number]>) stored.set(path, { mtime_ms, size });
  const seen = new Set<string>();
  const changed: Diff['changed'] = [];
  for (const source of sources) {
    for (const f of source.listFiles()) {
      if (seen.has(f.path)) continue;
      seen.add(f.path);
      const s = stored.get(f.path);
      if (!s || s.mtime_ms !== f.mtimeMs || s.size !== f.size) changed.push({ source, ...f });
    }
  }
  const removed = [...stored.keys()].filter((p) => !seen.has(p));
  return { changed, removed };
}

export interface SyncReport {
  changedFiles: number;
  removedFiles: number;
  entries: number;
}

function sortDate(e: KnowledgeEntry, mtimeMs: number): number {
  const t = e.date ? Date.parse(e.date) : NaN;
  return Number.isFinite(t) ? t : mtimeMs;
}

/** From this many files, a build into an empty index defers its secondary indexes. */
const FRESH_BUILD_MIN_FILES = 500;
/** Secondary indexes of schema.ts that a first build creates once, at its end. */
const ALIAS_RUN = 50_000;
const DEFERRED_INDEXES = ['entries_file', 'entries_lens', 'entry_tags_tag', 'entry_tags_row', 'aliases_id', 'edges_src', 'edges_dst', 'edges_origin'];

/** The statements one sync runs, prepared once per sync. */
function syncStatements(db: Database.Database) {
  return {
    delRows: db.prepare('SELECT rowid, id FROM entries WHERE file = ?'),
    delFts: db.prepare('DELETE FROM entries_fts WHERE rowid = ?'),
    delTags: db.prepare('DELETE FROM entry_tags WHERE entry_rowid = ?'),
    delAliases: db.prepare('DELETE FROM aliases WHERE id = ?'),
    delEntries: db.prepare('DELETE FROM entries WHERE file = ?'),
    delEdges: db.prepare('DELETE FROM edges WHERE origin = ?'),
    delFile: db.prepare('DELETE FROM files WHERE path = ?'),
    insEntry: db.prepare(`INSERT OR REPLACE INTO entries (id, graph_id, kind, type, scope, workspace, category, declared_status, status, family, file, sort_date, len_title, len_summary, len_tags, len_body, data)
    VALUES (@id, @graphId, @kind, @type, @scope, @workspace, @category, @declaredStatus, @declaredStatus, @family, @file, @sortDate, @lenTitle, @lenSummary, @lenTags, @lenBody, @data)`),
    insFts: db.prepare('INSERT INTO entries_fts (rowid, title, summary, tags, body) VALUES (?, ?, ?, ?, ?)'),
    insTag: db.prepare('INSERT INTO entry_tags (entry_rowid, tag) VALUES (?, ?)'),
    insAlias: db.prepare('INSERT OR IGNORE INTO aliases (alias, id) VALUES (?, ?)'),
    insEdge: db.prepare('INSERT INTO edges (src, rel, dst, origin) VALUES (?, ?, ?, ?)'),
    insFile: db.prepare('INSERT OR REPLACE INTO files (path, source, mtime_ms, size, findings) VALUES (?, ?, ?, ?, ?)'),
    insExposure: db.prepare('INSERT OR IGNORE INTO exposure (id, hits) VALUES (?, 0)'),
  };
}
type SyncStatements = ReturnType<typeof syncStatements>;

/**
 * Brings the index in step with the files; only changed files are re-read. `partial`: these sources are
 * some of the index's, and only their files are checked (a file another source indexed is not "removed").
 */
export function syncIndex(handle: IndexHandle, sources: KnowledgeSource[], opts: { partial?: boolean } = {}): SyncReport {
  const db = handle.db;
  const { changed, removed } = diff(db, sources, opts.partial ?? false);
  if (changed.length === 0 && removed.length === 0) return { changedFiles: 0, removedFiles: 0, entries: count(db) };
  const st = syncStatements(db);
  // A first build (nothing indexed yet) of many files: the secondary indexes are
  // dropped and built once at the end (CREATE INDEX sorts once; growing them row
  // by row costs more), and aliases are inserted in sorted runs. Same tables after.
  const fresh = removed.length === 0 && changed.length >= FRESH_BUILD_MIN_FILES && db.prepare('SELECT (SELECT count(*) FROM files) + (SELECT count(*) FROM entries)').pluck().get() === 0;
  const aliases = aliasWriter(st, fresh);

  db.transaction(() => {
    if (fresh) for (const name of DEFERRED_INDEXES) db.exec(`DROP INDEX IF EXISTS ${name}`);
    for (const p of removed) removeFile(st, p);
    // Files are read one at a time inside the transaction, so memory stays flat however large the corpus.
    for (const f of changed) {
      const c = { ...f, ...f.source.readFile(f.path) };
      if (!fresh) removeFile(st, c.path);
      for (const e of c.entries) writeEntry(st, e, c.path, c.mtimeMs, aliases.add);
      for (const ed of c.edges ?? []) st.insEdge.run(ed.src, ed.rel, ed.dst, c.path);
      st.insFile.run(c.path, c.source.name, c.mtimeMs, c.size, JSON.stringify(c.findings satisfies Finding[]));
    }
    if (fresh) {
      aliases.flush();
      createSchema(db); // re-creates the dropped indexes
    }
    recomputeStatus(db);
  })();
  // After a large rebuild, fold the write-ahead log back so the file on disk is the index's real size.
  if (changed.length + removed.length > 1000 && handle.location !== ':memory:') db.pragma('wal_checkpoint(TRUNCATE)');
  return { changedFiles: changed.length, removedFiles: removed.length, entries: count(db) };
}

/** Deletes a file's entries with their full-text rows, tags, aliases and edges, and the file's own row. */
function removeFile(st: SyncStatements, path: string): void {
  for (const r of st.delRows.all(path) as Array<{ rowid: number; id: string }>) {
    st.delFts.run(r.rowid);
    st.delTags.run(r.rowid);
    st.delAliases.run(r.id);
  }
  st.delEntries.run(path);
  st.delEdges.run(path);
  st.delFile.run(path);
}

/** Alias inserts: straight through, or (a fresh build) in sorted runs, flushed by the caller at the end. */
function aliasWriter(st: SyncStatements, fresh: boolean): { add: (alias: string, id: string) => void; flush: () => void } {
  const aliasRows: Array<[string, string]> = [];
  const flush = () => {
    aliasRows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    for (const [alias, id] of aliasRows) st.insAlias.run(alias, id);
    aliasRows.length = 0;
  };
  // Sorted runs of a bounded size: most of the benefit of one sort, memory flat however large the corpus.
  const add = fresh
    ? (alias: string, id: string) => {
        if (aliasRows.push([alias, id]) >= ALIAS_RUN) flush();
      }
    : (alias: string, id: string) => void st.insAlias.run(alias, id);
  return { add, flush };
}

/** One entry: its row, full-text row, tags, aliases, edges (origin = its file) and exposure counter. */
function writeEntry(st: SyncStatements, e: KnowledgeEntry, path: string, mtimeMs: number, addAlias: (alias: string, id: string) => void): void {
  const text = { title: indexText(e.title), summary: indexText(e.summary), tags: indexText([...e.tags, e.category ?? ''].join(' ')), body: indexText(e.body) };
  const lens = { lenTitle: tokenCount(text.title), lenSummary: tokenCount(text.summary), lenTags: tokenCount(text.tags), lenBody: tokenCount(text.body) };
  const info = st.insEntry.run({ ...e, ...lens, sortDate: sortDate(e, mtimeMs), data: JSON.stringify(e) });
  const rowid = Number(info.lastInsertRowid);
  st.insFts.run(rowid, text.title, text.summary, text.tags, text.body);
  for (const t of e.tags) st.insTag.run(rowid, t);
  addAlias(e.id, e.id);
  addAlias(e.graphId, e.id);
  for (const a of e.aliases) addAlias(a, e.id);
  for (const s of e.supersedes) st.insEdge.run(e.id, 'supersedes', s, path);
  for (const r of e.related) st.insEdge.run(e.id, 'related', r, path);
  for (const r of e.references) st.insEdge.run(e.id, 'references', r, path);
  st.insExposure.run(e.id);
}

/**
 * Effective status (corpus.ts `effectiveDeprecated`, in SQL): deprecated as
 * written, or named in the `supersedes` of an active entry.
 */
function recomputeStatus(db: Database.Database): void {
  db.exec(`
    UPDATE entries SET status = declared_status WHERE status != declared_status;
    UPDATE entries SET status = 'deprecated'
     WHERE declared_status = 'active'
       AND id IN (SELECT a.id FROM edges ed
                    JOIN entries s ON s.id = ed.src AND s.declared_status = 'active'
                    JOIN aliases a ON a.alias = ed.dst
                   WHERE ed.rel = 'supersedes' AND a.id != ed.src);
  `);
}

function count(db: Database.Database): number {
  return db.prepare('SELECT count(*) FROM entries').pluck().get() as number;
}

export function rebuildIndex(handle: IndexHandle, sources: KnowledgeSource[]): SyncReport {
  handle.db.transaction(() => {
    dropDerived(handle.db);
    createSchema(handle.db);
    setVersion(handle.db);
  })();
  return syncIndex(handle, sources);
}

export function indexFindings(handle: IndexHandle): Finding[] {
  return (handle.db.prepare("SELECT findings FROM files WHERE findings != '[]' ORDER BY path").pluck().all() as string[]).flatMap((f) => JSON.parse(f) as Finding[]);
}
