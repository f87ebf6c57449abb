/**
 * The in-process knowledge API: `openKnowledge({workflowRoot})` →
 * `{search, searchKg, searchCode, load, list, health, neighbors, …}`. The CLI
 * uses it directly when no daemon answers; the daemon serves the same calls
 * (http.ts), so both give identical results.
 */
import { MaestroError } from '../core/errors.js';
import { syncCodeGraph, type CodeSyncReport } from './graph/codeGraph.js';
import { embedPending, embedderFromEnv, vectorSearch, type Embedder } from './vectors/embeddings.js';
import { builtinSources, loadCorpus } from './format/corpus.js';
import type { KnowledgeEntry, KnowledgeSource } from './format/entry.js';
import { loadCodeNode, neighbors, searchCode, searchKg, traverse, type CodeHit, type CodeNode, type GraphNeighbor, type KgResponse } from './graph/graph.js';
import { lifecycleFindings, staleConflicts } from './format/health.js';
import { bumpExposure } from './index/exposure.js';
import { buildWhere, type SearchFilters } from './index/query.js';
import { indexFindings, openIndex, rebuildIndex, syncIndex, type IndexHandle, type SyncReport } from './index/store.js';
import { buildKeywordIndex, type KeywordIndex } from './search/keywordIndex.js';
import { ledgerSource } from './graph/ledgerSource.js';
import { resolveWorkflowRoot, type ResolveRootOptions, type WorkflowRoot } from './format/root.js';
import { searchIndex, type SearchOptions, type SearchResponse } from './search/search.js';
import type { Finding } from './format/specParser.js';
import { editDistance } from './format/text.js';
import { wikiRootFor, wikiSource } from './format/wikiSource.js';
import { resolveProjectSlug } from './format/wiki/paths.js';
import { mergeMixed, sourceWeights, type MixedResult, type WeightReason } from './search/mixed.js';

export interface KnowledgeOptions extends ResolveRootOptions {
  /** Write nothing (no index file, no exposure): `--read-only-probe`. */
  readOnly?: boolean;
  /** More sources. */
  sources?: KnowledgeSource[];
  /** The observer's wiki folder; default from FLOW_* / `<project>/wiki` (wikiSource.ts); null: no wiki. */
  wikiRoot?: string | null;
  /** Minimum time between file scans in a long-lived process; 0 (default) scans on every call. */
  syncIntervalMs?: number;
  /** Vectors (optional): an embedder, or null for none. Default: from MAESTRO_EMBEDDINGS_* (none when unset). */
  embedder?: Embedder | null;
}

export interface LoadedEntry extends KnowledgeEntry {
  status: 'active' | 'deprecated';
  neighbors: GraphNeighbor[];
}

export interface CodeResponse {
  query: string;
  count: number;
  codeIndex: 'ok' | 'empty';
  results: CodeHit[];
}

/** FORMATS §5.3 default (mixed) search response. */
export interface MixedResponse extends Omit<SearchResponse, 'results'> {
  retrieval: 'lexical' | 'hybrid';
  /** ok | not-initialized (no code graph built yet) | empty | skipped (a facet filter limits the search to knowledge). */
  codeIndex: 'ok' | 'not-initialized' | 'empty' | 'skipped';
  codeIndexHint?: string;
  /** Source weights used for the merge and why. */
  sourceWeights: { wiki: number; code: number; reason: WeightReason };
  results: MixedResult[];
}

export interface HealthReport {
  ok: boolean;
  entries: number;
  errors: number;
  warnings: number;
  findings: Finding[];
}

export interface ListFilters extends SearchFilters {
  keyword?: string | undefined;
  limit?: number | undefined;
}

export interface Knowledge {
  readonly root: WorkflowRoot;
  readonly indexLocation: string;
  sync(): SyncReport;
  rebuild(): SyncReport;
  search(query: string, opts?: SearchOptions): SearchResponse;
  /**
   * The default `maestro search` (the CLI and daemon use this): `search`, with vectors mixed in when an
   * embedder is configured, and code symbols merged in (FORMATS §5.2, mixed.ts) when the code graph has
   * been built and no facet filter is given.
   */
  searchHybrid(query: string, opts?: SearchOptions): Promise<MixedResponse>;
  searchKg(query: string, opts?: SearchFilters & { limit?: number; code?: boolean }): Promise<KgResponse>;
  searchCode(query: string, opts?: { limit?: number }): Promise<CodeResponse>;
  syncCode(): Promise<CodeSyncReport>;
  /** Canonical id for any id or alias, or null. */
  resolveId(ref: string): string | null;
  load(ref: string, opts?: { includeDeprecated?: boolean }): Promise<LoadedEntry | CodeNode>;
  list(filters?: ListFilters): Array<KnowledgeEntry & { status: 'active' | 'deprecated' }>;
  health(kind?: 'spec' | 'knowhow' | 'wiki'): HealthReport;
  neighbors(id: string, rel?: string): GraphNeighbor[];
  traverse(id: string, depth?: number, rel?: string): ReturnType<typeof traverse>;
  keywordIndex(): KeywordIndex;
  close(): void;
}

export function openKnowledge(opts: KnowledgeOptions = {}): Knowledge {
  const root = resolveWorkflowRoot(opts);
  const wikiRoot = opts.wikiRoot === undefined ? wikiRootFor(root, opts.env) : opts.wikiRoot;
  const sources = [...builtinSources(root), ...(wikiRoot ? [wikiSource(wikiRoot)] : []), ledgerSource(root), ...(opts.sources ?? [])];
  const handle: IndexHandle = openIndex({ workflowDir: root.workflowDir, readOnly: opts.readOnly ?? false, sources });
  const db = handle.db;
  const canWrite = !(handle.readOnly && handle.location !== ':memory:');
  const interval = opts.syncIntervalMs ?? 0;
  const embedder = opts.embedder === undefined ? embedderFromEnv(opts.env) : opts.embedder;
  // The `proj:<slug>` this project's wiki entries carry (FORMATS §8.4); a confined root is its own project.
  const project = resolveProjectSlug(root.confined ? {} : (opts.env ?? process.env), root.projectDir);
  let lastSync = -Infinity;
  let codeSynced = false;
  const ensureSynced = () => {
    if (!canWrite) return;
    const now = Date.now();
    if (interval > 0 && now - lastSync < interval) return;
    syncIndex(handle, sources);
    lastSync = now;
  };
  const ensureCode = async () => {
    if (!canWrite || (codeSynced && interval > 0)) return;
    await syncCodeGraph(db, root.projectDir);
    codeSynced = true;
  };
  // No scan here: the first call scans, so a one-shot CLI command scans the files once, not twice.

  const resolveId = (ref: string): string | null => {
    const q = db.prepare('SELECT id FROM aliases WHERE alias = ? ORDER BY (alias = id) DESC, id LIMIT 1').pluck();
    return (q.get(ref) as string | undefined) ?? (q.get(ref.toLowerCase()) as string | undefined) ?? null;
  };

  const nearest = (ref: string): string[] => {
    const all = db.prepare('SELECT DISTINCT id FROM entries').pluck().all() as string[];
    const codeIds = db.prepare('SELECT id FROM code_symbols LIMIT 20000').pluck().all() as string[];
    const lower = ref.toLowerCase();
    return [...all, ...codeIds]
      .map((id) => ({ id, d: id.includes(lower) || lower.includes(id) ? 0 : editDistance(lower, id.toLowerCase().slice(0, lower.length + 8)) }))
      .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
      .slice(0, 5)
      .map((x) => x.id);
  };

  const lexicalSearch = (query: string, sopts: SearchOptions = {}): SearchResponse => {
    ensureSynced();
    // A read-only probe never bumps exposure; an index opened read-only cannot.
    return searchIndex(db, query, { project, ...sopts, readOnlyProbe: sopts.readOnlyProbe || handle.readOnly });
  };

  /** FORMATS §5.2 mixed merge: code symbols join the page only from a built code graph and without facet filters. */
  const mixCode = (query: string, sopts: SearchOptions, base: SearchResponse & { retrieval: 'lexical' | 'hybrid' }): MixedResponse => {
    const limit = Math.max(1, Math.min(200, Math.floor(sopts.limit ?? 10)));
    const facet = Boolean(sopts.type || sopts.category || sopts.tag || sopts.workspace);
    const built = db.prepare("SELECT 1 FROM meta WHERE key = 'code_synced_at'").get() !== undefined;
    const codeIndex: MixedResponse['codeIndex'] = facet ? 'skipped' : !built ? 'not-initialized' : db.prepare('SELECT 1 FROM code_symbols LIMIT 1').get() ? 'ok' : 'empty';
    const code = codeIndex === 'ok' ? searchCode(db, query, limit) : [];
    const weights = sourceWeights(query, code);
    const results = mergeMixed(base.results, code, weights, limit);
    const typeCounts: Record<string, number> = {};
    for (const r of results) typeCounts[r.kind] = (typeCounts[r.kind] ?? 0) + 1;
    const wikiCount = results.filter((r) => r.source === 'wiki').length;
    return {
      ...base,
      count: results.length,
      wikiCount,
      codeCount: results.length - wikiCount,
      typeCounts,
      codeIndex,
      ...(codeIndex === 'not-initialized' ? { codeIndexHint: 'No code graph yet: run `maestro search --code <query>` once to build it; later searches mix code symbols in.' } : {}),
      sourceWeights: weights,
      noMatch: results.length ? undefined : base.noMatch,
      results,
    };
  };

  const entryRow = (id: string) => db.prepare('SELECT data, status FROM entries WHERE id = ?').get(id) as { data: string; status: 'active' | 'deprecated' } | undefined;

  return {
    root,
    indexLocation: handle.location,
    sync: () => {
      if (!canWrite) return { changedFiles: 0, removedFiles: 0, entries: db.prepare('SELECT count(*) FROM entries').pluck().get() as number };
      lastSync = Date.now();
      return syncIndex(handle, sources);
    },
    rebuild: () => {
      if (!canWrite) throw new MaestroError('BAD_INPUT', 'A read-only probe cannot rebuild the index.');
      codeSynced = false;
      lastSync = Date.now();
      return rebuildIndex(handle, sources);
    },
    search: lexicalSearch,
    async searchHybrid(query, sopts = {}) {
      const probe = sopts.readOnlyProbe || handle.readOnly;
      let base: SearchResponse & { retrieval: 'lexical' | 'hybrid' };
      // Exposure is bumped below for what the merged page returns (FORMATS §5.4: after truncation).
      if (!embedder) base = { ...lexicalSearch(query, { ...sopts, readOnlyProbe: true }), retrieval: 'lexical' as const };
      else {
        ensureSynced();
        // A probe never writes, so it only uses vectors that are already stored.
        if (!probe) await embedPending(db, embedder);
        const [qv] = await embedder.embed([query]);
        const filters = { type: sopts.type, category: sopts.category, tag: sopts.tag, workspace: sopts.workspace, status: sopts.status, includeDeprecated: sopts.includeDeprecated };
        const hits = vectorSearch(db, qv!, embedder.model, filters, Math.min(500, Math.max(4 * (sopts.limit ?? 10), 40)));
        base = { ...searchIndex(db, query, { project, ...sopts, readOnlyProbe: true }, hits), retrieval: hits.length ? ('hybrid' as const) : ('lexical' as const) };
      }
      const mixed = mixCode(query, sopts, base);
      if (!probe) bumpExposure(db, mixed.results.filter((r) => r.source === 'wiki').map((r) => r.id), sopts.now ?? Date.now());
      return mixed;
    },
    async searchKg(query, kopts = {}) {
      ensureSynced();
      const code = kopts.code ?? true;
      if (code && (!kopts.type || kopts.type === 'code' || kopts.type === 'codegraph')) await ensureCode();
      return searchKg(db, query, { ...kopts, limit: Math.max(1, Math.min(200, kopts.limit ?? 10)), code });
    },
    async searchCode(query, copts = {}) {
      await ensureCode();
      const results = searchCode(db, query, Math.max(1, Math.min(200, copts.limit ?? 10)));
      const any = db.prepare('SELECT 1 FROM code_symbols LIMIT 1').get();
      return { query, count: results.length, codeIndex: any ? 'ok' : 'empty', results };
    },
    syncCode: async () => {
      if (!canWrite) return { files: 0, changed: 0, symbols: 0 };
      codeSynced = true;
      return syncCodeGraph(db, root.projectDir);
    },
    resolveId,
    async load(ref, lopts = {}) {
      ensureSynced();
      if (ref.startsWith('code:') || ref.startsWith('file:')) {
        let node = loadCodeNode(db, ref);
        if (!node) {
          await ensureCode();
          node = loadCodeNode(db, ref);
        }
        if (node) return node;
      }
      const id = resolveId(ref);
      const row = id ? entryRow(id) : undefined;
      if (!id || !row) {
        const near = nearest(ref);
        throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `Unknown knowledge id "${ref}".${near.length ? ` Nearest known ids: ${near.join(', ')}` : ' The corpus is empty.'}`, { details: { nearest: near } });
      }
      const entry = JSON.parse(row.data) as KnowledgeEntry;
      if (row.status === 'deprecated' && !lopts.includeDeprecated) {
        const by = neighbors(db, id, 'supersedes').find((n) => n.direction === 'in')?.id ?? entry.supersededBy;
        throw new MaestroError('DEPRECATED_KNOWLEDGE', `${id} is deprecated${by ? ` (superseded by ${by})` : ''}; pass --include-deprecated to read it.`, { details: { id, supersededBy: by ?? null } });
      }
      return { ...entry, status: row.status, neighbors: neighbors(db, id) };
    },
    list(filters = {}) {
      ensureSynced();
      const where = buildWhere(filters);
      const kw = filters.keyword ? ' AND (e.rowid IN (SELECT entry_rowid FROM entry_tags WHERE tag = ?) OR lower(e.data) LIKE ?)' : '';
      const params = filters.keyword ? [filters.keyword.toLowerCase(), `%"title":"%${filters.keyword.toLowerCase().replace(/[%_"\\]/g, '')}%`] : [];
      const rows = db
        .prepare(`SELECT e.data, e.status FROM entries e WHERE 1=1${where.sql}${kw} ORDER BY e.kind, e.file, e.id LIMIT ?`)
        .all(...where.params, ...params, Math.max(1, filters.limit ?? 1000)) as Array<{ data: string; status: 'active' | 'deprecated' }>;
      return rows.map((r) => ({ ...(JSON.parse(r.data) as KnowledgeEntry), status: r.status }));
    },
    health(kind) {
      ensureSynced();
      const entries = (db.prepare('SELECT data FROM entries').pluck().all() as string[]).map((d) => JSON.parse(d) as KnowledgeEntry);
      const scoped = kind ? entries.filter((e) => e.kind === kind) : entries;
      const files = canWrite ? indexFindings(handle) : loadCorpus(sources).findings;
      const specFiles = [...new Set(entries.filter((e) => e.kind === 'spec').map((e) => e.file))];
      const kindOf = (file: string): 'spec' | 'knowhow' | 'wiki' => (wikiRoot && file.startsWith(wikiRoot + '/') ? 'wiki' : file.includes('/knowhow/') ? 'knowhow' : 'spec');
      const findings = [...files, ...lifecycleFindings(scoped), ...(kind !== 'knowhow' && kind !== 'wiki' ? staleConflicts(specFiles) : [])].filter((f) => !kind || kindOf(f.file) === kind);
      const errors = findings.filter((f) => f.severity === 'error').length;
      return { ok: errors === 0, entries: scoped.length, errors, warnings: findings.length - errors, findings };
    },
    neighbors: (id, rel) => {
      ensureSynced();
      return neighbors(db, resolveId(id) ?? id, rel);
    },
    traverse: (id, depth, rel) => {
      ensureSynced();
      return traverse(db, resolveId(id) ?? id, depth, rel);
    },
    keywordIndex() {
      ensureSynced();
      const entries = (db.prepare("SELECT data FROM entries WHERE kind = 'spec'").pluck().all() as string[]).map((d) => JSON.parse(d) as KnowledgeEntry);
      return buildKeywordIndex(entries);
    },
    close: () => handle.close(),
  };
}
