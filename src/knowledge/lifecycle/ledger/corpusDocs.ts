/**
 * The reconciliation corpus (FORMATS §4.2): the project's top-level
 * `.workflow/specs/*.md` entries and top-level `.workflow/knowhow/*.md`
 * documents, active only. Parsed with Knowledge I's parsers.
 *
 * Incremental (seed 000 §11.1): after one changed file the fingerprint costs
 * one stat per file, one parse and one row hash for the changed file, and the
 * sha256 of the rows from the first changed one on — nothing else:
 * - directory listings are reused while the directory's mtime is unchanged
 *   (adding, removing or renaming a file changes it);
 * - files are cached by (mtime, size, inode); a file whose mtime was within
 *   RACY_MS of when it was read is read again next time (file timestamps are
 *   coarse, so a second write in the same tick could keep both equal; file
 *   systems with coarser clocks, like FAT or some network mounts, are not
 *   covered by this window);
 * - the sorted rows live in blocks, each with its serialized text and the
 *   sha256 state after it (`Hash.copy()`), so hashing resumes at the first
 *   changed block (corpusRows.ts). The value is exactly sha256(JSON.stringify(rows)).
 * - in a long-lived process, `watch` adds a file watcher (corpusWatch.ts)
 *   and a read then stats only the files it names, not every file; without an
 *   answer from it, the read does the full stat walk. Only for a corpus of
 *   WATCH_FROM_FILES files or more: asking the watcher blocks this thread until
 *   the watcher's thread answers, tens of ms on a busy machine, while
 *   stat costs some µs per file. A smaller corpus is statted; its watcher
 *   thread starts once a read finds it has grown that far.
 *
 * The caches and watchers live in a `CorpusCache` its owner builds and closes
 * (the KnowledgeService's lifecycle context, lifecycle/context.ts); a one-shot
 * caller without one uses `readCorpus`, which keeps nothing.
 */
import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { knowhowDocs, specDocs } from './corpusParse.js';
import { blocksOf, cmpRow, fingerprintOfBlocks, insertRow, type Block, type Row } from './corpusRows.js';
import { CorpusWatch } from './corpusWatch.js';
import { fingerprintRow, type CorpusDoc } from './recipes.js';

export { specBody } from './corpusParse.js';

export interface CorpusSnapshot {
  docs: CorpusDoc[];
  fingerprint: string;
  /** Files parsed because they are new or their stat changed. */
  parsed: number;
  /** Files read again only because they were written within RACY_MS of being read (their rows were unchanged). */
  rereads: number;
  /** Corpus files statted for this snapshot (every file without a watcher; with one, only what it named). */
  statted: number;
}

/** Longer than a coarse file-timestamp tick on local Linux file systems (1–10 ms). */
export const RACY_MS = 50;

/**
 * The corpus size (files) from which a watched folder's reads ask its watcher. Below it the stat walk
 * is cheaper: 1,000 files statted in about 5 ms on a busy 2-core machine, while the watcher's answer
 * took about 30 ms there with three daemons running (0.05 ms on an idle one).
 */
export const WATCH_FROM_FILES = 1000;

export interface CorpusCacheOptions {
  /** WATCH_FROM_FILES unless given (0: a watched folder's reads always ask its watcher). */
  watchFromFiles?: number;
}

interface FileCacheEntry {
  mtimeMs: number;
  size: number;
  ino: number;
  /** Read so soon after its last write that an equal stat proves nothing. */
  racy: boolean;
  docs: CorpusDoc[];
  rows: Row[];
}

interface DirCache {
  mtimeMs: number;
  ino: number;
  racy: boolean;
  files: string[];
}

interface RootCache {
  dirs: Map<string, DirCache>;
  files: Map<string, FileCacheEntry>;
  /** Rows in fingerprint order; null until first built. */
  blocks: Block[] | null;
  docs: CorpusDoc[] | null;
  fingerprint: string | null;
  /** The watcher whose every answer this cache has followed since a full walk (only then may files go unstatted). */
  trusted: CorpusWatch | null;
}

/** The corpus rows of every workflow folder read through it, and the watchers it started. */
export class CorpusCache {
  private readonly caches = new Map<string, RootCache>();
  private readonly watches = new Map<string, { watch: CorpusWatch; ino: number }>();
  /** Folders asked to be watched: each gets its thread once its corpus reaches `watchFromFiles`. */
  private readonly wanted = new Set<string>();
  private readonly watchFromFiles: number;

  constructor(opts: CorpusCacheOptions = {}) {
    this.watchFromFiles = opts.watchFromFiles ?? WATCH_FROM_FILES;
  }

  /** The corpus of this workflow folder, reusing what is cached (see the header). */
  read(workflowDir: string): CorpusSnapshot {
    let cache = this.caches.get(workflowDir);
    if (!cache) this.caches.set(workflowDir, (cache = emptyCache()));
    // Ask the watcher first: whatever it has not seen yet is written after this point.
    const snapshot = walkCorpus(workflowDir, cache, this.watchedChanges(workflowDir, cache));
    if (this.wanted.has(workflowDir) && !this.watches.has(workflowDir) && this.largeEnough(cache)) this.startWatch(workflowDir);
    return snapshot;
  }

  /**
   * Watch this workflow folder's corpus from now on (long-lived processes; a
   * one-shot command gains nothing). Idempotent; false when it is not a folder
   * or a watcher cannot run here (reads then keep the full stat walk).
   * The watcher's thread starts in the background once the corpus is large
   * enough (the header; reads walk everything until it has); `waitStarted`
   * blocks until it has, and is false while there is no thread.
   */
  watch(workflowDir: string, opts: { waitStarted?: boolean } = {}): boolean {
    const w = this.watches.get(workflowDir);
    if (w?.watch.alive) return opts.waitStarted ? w.watch.waitStarted() : true;
    if (!stat(workflowDir)?.isDirectory()) return false;
    this.wanted.add(workflowDir);
    if (!this.largeEnough(this.caches.get(workflowDir))) {
      // Small or not read yet: a read that finds enough files starts the thread.
      return !opts.waitStarted;
    }
    return this.startWatch(workflowDir, opts);
  }

  /** Whether this cache's corpus is large enough for its reads to ask a watcher (WATCH_FROM_FILES). */
  private largeEnough(cache: RootCache | undefined): boolean {
    return this.watchFromFiles === 0 || (cache?.blocks != null && cache.files.size >= this.watchFromFiles);
  }

  private startWatch(workflowDir: string, opts: { waitStarted?: boolean } = {}): boolean {
    const st = stat(workflowDir);
    if (!st?.isDirectory()) return false;
    const dirs = [workflowDir, join(workflowDir, 'specs'), join(workflowDir, 'knowhow')].filter((d) => stat(d)?.isDirectory());
    let watch: CorpusWatch;
    try {
      watch = new CorpusWatch(dirs);
    } catch {
      this.wanted.delete(workflowDir);
      return false; // no worker threads here: reads keep the stat walk
    }
    this.watches.set(workflowDir, { watch, ino: st.ino });
    return opts.waitStarted ? watch.waitStarted() : watch.alive;
  }

  /** Folders with a watcher (alive or not yet replaced). */
  get watched(): string[] {
    return [...this.watches.keys()];
  }

  /** Stops the watcher of one folder (or all); the promise settles when their threads have exited. */
  async unwatch(workflowDir?: string): Promise<void> {
    const exits: Promise<number>[] = [];
    for (const [k, w] of this.watches) if (!workflowDir || k === workflowDir) {
      exits.push(w.watch.close());
      this.watches.delete(k);
    }
    if (workflowDir) this.wanted.delete(workflowDir);
    else this.wanted.clear();
    await Promise.all(exits);
  }

  /** Forget cached rows (tests and the benchmark measure the full path with it). */
  clear(workflowDir?: string): void {
    if (workflowDir) this.caches.delete(workflowDir);
    else this.caches.clear();
  }

  /** Every watcher stopped and every row dropped: nothing of this cache is left. */
  async close(): Promise<void> {
    await this.unwatch();
    this.clear();
  }

  /** The files the watcher says changed, or null when everything must be statted. */
  private watchedChanges(workflowDir: string, cache: RootCache): Set<string> | null {
    const w = this.watches.get(workflowDir);
    if (!w) return null;
    const answer = w.watch.changes();
    const restart = () => {
      void w.watch.close();
      this.watches.delete(workflowDir);
      this.startWatch(workflowDir);
      cache.trusted = null;
      return null;
    };
    if (!answer) return w.watch.alive ? ((cache.trusted = null), null) : restart();
    // A corpus directory created, removed or replaced: the watch itself is out of date.
    const specDir = join(workflowDir, 'specs');
    const knowhowDir = join(workflowDir, 'knowhow');
    if (answer.dirty.has(specDir) || answer.dirty.has(knowhowDir) || stat(workflowDir)?.ino !== w.ino) return restart();
    if (cache.trusted !== w.watch || cache.blocks === null) {
      // First answer of this watcher: the full walk below brings the cache up to it.
      cache.trusted = w.watch;
      return null;
    }
    return answer.dirty;
  }
}

/** The corpus read from scratch, nothing kept (a one-shot caller, and the reference the tests compare with). */
export function readCorpus(workflowDir: string): CorpusSnapshot {
  return walkCorpus(workflowDir, emptyCache(), null);
}

function emptyCache(): RootCache {
  return { dirs: new Map(), files: new Map(), blocks: null, docs: null, fingerprint: null, trusted: null };
}

// One shared options object: statSync parses a fresh one on every call, a third of its cost here.
const NO_THROW = { throwIfNoEntry: false } as const;
function stat(p: string): Stats | undefined {
  return statSync(p, NO_THROW);
}

/** Top-level `*.md` files of a directory, sorted; the listing is reused while the directory is unchanged. */
function listMd(cache: RootCache, dir: string, now: number): string[] {
  const st = stat(dir);
  if (!st?.isDirectory()) {
    cache.dirs.delete(dir);
    return [];
  }
  const hit = cache.dirs.get(dir);
  if (hit && !hit.racy && hit.mtimeMs === st.mtimeMs && hit.ino === st.ino) return hit.files;
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(dir, e.name))
    .sort();
  cache.dirs.set(dir, { mtimeMs: st.mtimeMs, ino: st.ino, racy: now - st.mtimeMs < RACY_MS, files });
  return files;
}

/** One pass over the corpus files: what changed, the new rows, and the counts the snapshot reports. */
interface Walk {
  workflowDir: string;
  cache: RootCache;
  now: number;
  changed: Set<string>;
  added: Row[];
  parsed: number;
  rereads: number;
  count: number;
}

/** Brings `cache` up to the files (only those in `dirty` when the watcher answered) and returns the snapshot. */
function walkCorpus(workflowDir: string, cache: RootCache, dirty: Set<string> | null): CorpusSnapshot {
  const now = Date.now();
  const specDir = join(workflowDir, 'specs');
  const knowhowDir = join(workflowDir, 'knowhow');
  const specFiles = listMd(cache, specDir, now);
  const knowhowFiles = listMd(cache, knowhowDir, now);
  const walk: Walk = { workflowDir, cache, now, changed: new Set(), added: [], parsed: 0, rereads: 0, count: 0 };
  let statted: number;
  // Anything thrown below leaves the cache unsure of what it has seen: trust the watcher again only after a full walk.
  const trusted = cache.trusted;
  cache.trusted = null;
  if (dirty) {
    statted = visitWatched(walk, dirty, specDir, knowhowDir, specFiles, knowhowFiles);
  } else {
    for (const p of specFiles) visitFile(walk, p, 'spec');
    for (const p of knowhowFiles) visitFile(walk, p, 'knowhow');
    statted = specFiles.length + knowhowFiles.length;
  }
  cache.trusted = trusted;
  if (walk.count !== cache.files.size || cache.files.size !== specFiles.length + knowhowFiles.length) {
    const live = new Set([...specFiles, ...knowhowFiles]);
    for (const k of [...cache.files.keys()]) if (!live.has(k) || !stat(k)?.isFile()) {
      cache.files.delete(k);
      walk.changed.add(k);
    }
  }
  updateBlocks(cache, walk.changed, walk.added);
  cache.fingerprint ??= fingerprintOfBlocks(cache.blocks!);
  if (!cache.docs) {
    const docs: CorpusDoc[] = [];
    for (const p of specFiles) for (const d of cache.files.get(p)?.docs ?? []) docs.push(d);
    for (const p of knowhowFiles) for (const d of cache.files.get(p)?.docs ?? []) docs.push(d);
    cache.docs = docs;
  }
  return { docs: cache.docs, fingerprint: cache.fingerprint, parsed: walk.parsed, rereads: walk.rereads, statted };
}

/**
 * Watched: only what the watcher named (read again whatever its stat says: every write is an event,
 * so racy timestamps do not matter here) and files not cached yet. Returns how many files were statted.
 */
function visitWatched(walk: Walk, dirty: Iterable<string>, specDir: string, knowhowDir: string, specFiles: string[], knowhowFiles: string[]): number {
  const { cache } = walk;
  const todo = new Map<string, 'spec' | 'knowhow'>();
  for (const p of dirty) if (p.endsWith('.md')) {
    const dir = p.slice(0, p.lastIndexOf('/'));
    if (dir === specDir) todo.set(p, 'spec');
    else if (dir === knowhowDir) todo.set(p, 'knowhow');
  }
  if (cache.files.size !== specFiles.length + knowhowFiles.length) {
    for (const p of specFiles) if (!cache.files.has(p)) todo.set(p, 'spec');
    for (const p of knowhowFiles) if (!cache.files.has(p)) todo.set(p, 'knowhow');
  }
  for (const [p, kind] of todo) visitFile(walk, p, kind, true);
  walk.count = cache.files.size;
  return todo.size;
}

/** Stats one file and, unless its cached stat still matches (or `force`), reads and parses it again. */
function visitFile(walk: Walk, p: string, kind: 'spec' | 'knowhow', force = false): void {
  const { cache, changed, now } = walk;
  const st = stat(p);
  if (!st?.isFile()) {
    if (cache.files.delete(p)) changed.add(p);
    return;
  }
  walk.count++;
  const hit = cache.files.get(p);
  if (!force && hit && !hit.racy && hit.mtimeMs === st.mtimeMs && hit.size === st.size && hit.ino === st.ino) return;
  let text: string;
  try {
    text = readFileSync(p, 'utf8');
  } catch (err) {
    // Deleted between the stat and the read: gone, like any deleted file.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (cache.files.delete(p)) changed.add(p);
    return;
  }
  const d = kind === 'spec' ? specDocs(walk.workflowDir, p, text) : knowhowDocs(walk.workflowDir, p, text);
  const rows = d.map((x, seq) => ({ target: x.target, id: x.id, json: JSON.stringify(fingerprintRow(x)), file: p, seq }));
  const statChanged = !hit || hit.mtimeMs !== st.mtimeMs || hit.size !== st.size || hit.ino !== st.ino;
  if (statChanged) walk.parsed++;
  // Same rows (a racy re-read, or an edit outside the fingerprinted fields): the hash stands, the docs are replaced.
  if (hit && hit.rows.length === rows.length && hit.rows.every((r, i) => r.json === rows[i]!.json)) {
    if (!statChanged) walk.rereads++;
    cache.files.set(p, { ...hit, mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, racy: now - st.mtimeMs < RACY_MS, docs: d });
    cache.docs = null;
    return;
  }
  cache.files.set(p, { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino, racy: now - st.mtimeMs < RACY_MS, docs: d, rows });
  changed.add(p);
  walk.added.push(...rows);
}

/** Brings the sorted row blocks up to date with the changed files; clears the fingerprint and docs when anything moved. */
function updateBlocks(cache: RootCache, changed: Set<string>, added: Row[]): void {
  if (cache.blocks === null || changed.size > 64) {
    // First build, or many files changed: one full sort.
    const all: Row[] = [];
    for (const e of cache.files.values()) for (const r of e.rows) all.push(r);
    cache.blocks = blocksOf(all.sort(cmpRow));
    cache.fingerprint = null;
    cache.docs = null;
  } else if (changed.size) {
    // Drop the changed files' old rows; a block that empties goes, and the one after it must be rehashed.
    const kept: Block[] = [];
    let rehashNext = false;
    for (const b of cache.blocks) {
      if (b.rows.some((r) => changed.has(r.file))) {
        b.rows = b.rows.filter((r) => !changed.has(r.file));
        b.text = null;
        b.after = null;
      }
      if (!b.rows.length) {
        rehashNext = true;
        continue;
      }
      if (rehashNext) b.after = null;
      rehashNext = false;
      kept.push(b);
    }
    cache.blocks = kept;
    // Then the new rows, each in order.
    for (const r of added) insertRow(cache.blocks, r);
    cache.fingerprint = null;
    cache.docs = null;
  }
}

