/**
 * The in-process knowledge API: `openKnowledge({workflowRoot, env})` →
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
import type { SearchFilters } from './index/query.js';
import { indexFindings, openIndex, rebuildIndex, syncIndex, type IndexHandle, type SyncReport } from './index/store.js';
import { resolveAlias, sidCarriers } from './index/resolveAlias.js';
import { knownIds } from './index/knownIds.js';
import { allEntries, countEntries, dataVersion, entryById, entryTypes } from './index/readEntries.js';
import { listEntries, type ListFilters } from './index/listEntries.js';
import { hasCodeSymbols } from './index/codeIndexState.js';
import { buildKeywordIndex, type KeywordHit, type KeywordIndex } from './search/keywordIndex.js';
import { ledgerSource } from './graph/ledgerSource.js';
import { privateIndexDir, resolveWorkflowRoot, workspaceFindings, type ResolveRootOptions, type WorkflowRoot } from './format/root.js';
import { searchIndex, type SearchOptions, type SearchResponse, type SearchResult } from './search/search.js';
import { mixCode, type MixedResponse } from './search/mixedResponse.js';
import type { Finding } from './format/specParser.js';
import { editDistance } from '../lib/editDistance.js';
import { wikiRootFor, wikiSource } from './format/wikiSource.js';
import { resolveProjectSlug } from './format/wiki/paths.js';
import { createSyncThrottle, type SyncThrottle } from './syncThrottle.js';

export type { ListFilters } from './index/listEntries.js';
export type { MixedResponse } from './search/mixedResponse.js';

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

export interface HealthReport {
  ok: boolean;
  entries: number;
  errors: number;
  warnings: number;
  findings: Finding[];
}

export interface Knowledge {
  readonly root: WorkflowRoot;
  readonly indexLocation: string;
  /**
   * Scans the files now. `graph: false`: not the run ledgers, whose walk grows with every run the project has had
   * and which only the graph reads (their consumed-by edges); what a search needs.
   */
  sync(opts?: { graph?: boolean }): SyncReport;
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
  /** Every kind and type the indexed entries have, sorted: what `--type` can name. */
  types(): string[];
  /**
   * What a run's brief reads (lifecycle/briefSearch.ts). The spec and knowhow files are checked first, whatever the
   * scan throttle: a spec promoted just before the run is in its brief. The wiki and the run ledgers are not: their
   * walk grows with every run the project has had, and the brief cites neither. Then the specs the text's keywords
   * name, and the best matching specs and knowhow, as a read-only probe, each with its whole body (the brief
   * quotes what an entry says, not the search's snippet around the query's first word).
   */
  brief(text: string, limits: BriefLimits): { specs: KeywordHit[]; found: Array<SearchResult & { body: string }> };
  close(): void;
}

export interface BriefLimits {
  /** Specs picked by keyword. */
  specs: number;
  /** Specs and knowhow found by search. */
  search: number;
}


/** What one open handle holds: its root and sources, the index, the embedder and the scan throttle. */
interface Opened {
  root: WorkflowRoot;
  wikiRoot: string | null;
  sources: KnowledgeSource[];
  /** The spec and knowhow sources: all a run's brief checks. */
  builtin: KnowledgeSource[];
  /** Every source but the run ledgers: what a search reads (syncThrottle.ts). */
  entrySources: KnowledgeSource[];
  handle: IndexHandle;
  canWrite: boolean;
  /** Syncs of this handle that changed the index (the cached keyword index is rebuilt after one). */
  changes: number;
  keywords: { stamp: string; index: KeywordIndex } | null;
  embedder: Embedder | null;
  /** The `proj:<slug>` this project's wiki entries carry (FORMATS §8.4); a confined root is its own project. */
  project: string;
  throttle: SyncThrottle;
  /** Scan the files unless the throttle says a scan is recent; `graph` false: the call reads no graph edges (syncThrottle.ts). */
  ensureSynced(graph?: boolean): void;
  /** Build the code graph unless the throttle says it is built. */
  ensureCode(): Promise<void>;
}

function openHandle(opts: KnowledgeOptions): Opened {
  const env = opts.env;
  const root = resolveWorkflowRoot(opts);
  const wikiRoot = opts.wikiRoot === undefined ? wikiRootFor(root, env) : opts.wikiRoot;
  const builtin = builtinSources(root);
  const ledgers = ledgerSource(root);
  const sources = [...builtin, ...(wikiRoot ? [wikiSource(wikiRoot)] : []), ledgers, ...(opts.sources ?? [])];
  const handle = openIndex({ workflowDir: root.workflowDir, indexDir: privateIndexDir(root), readOnly: opts.readOnly ?? false, sources });
  const canWrite = !(handle.readOnly && handle.location !== ':memory:');
  const throttle = createSyncThrottle({ canWrite, intervalMs: opts.syncIntervalMs ?? 0 });
  // No scan here: the first call scans, so a one-shot CLI command scans the files once, not twice.
  const o: Opened = {
    root,
    wikiRoot,
    sources,
    builtin,
    entrySources: sources.filter((s) => s !== ledgers),
    handle,
    canWrite,
    changes: 0,
    keywords: null,
    embedder: opts.embedder === undefined ? embedderFromEnv(env) : opts.embedder,
    project: resolveProjectSlug(root.confined ? {} : env, root.projectDir),
    throttle,
    ensureSynced: (graph = true) => throttle.files((all) => void scan(o, all), graph),
    ensureCode: () => throttle.code(() => syncCodeGraph(handle.db, root.projectDir)),
  };
  return o;
}

/** Every source, or (`all` false) every source but the run ledgers, whose indexed files are then left as they are. */
function scan(o: Opened, all: boolean): SyncReport {
  return noteChanges(o, all ? syncIndex(o.handle, o.sources) : syncIndex(o.handle, o.entrySources, { partial: true }));
}

function noteChanges(o: Opened, r: SyncReport): SyncReport {
  if (r.changedFiles || r.removedFiles) o.changes++;
  return r;
}

/**
 * The keyword index of the indexed specs (with the knowhow, for what it supersedes), built again only when the
 * index changed: through this handle (`changes`), or by another connection's commit (`data_version`).
 */
function keywordsOf(o: Opened): KeywordIndex {
  const stamp = `${o.changes}:${dataVersion(o.handle.db)}`;
  if (o.keywords?.stamp !== stamp) o.keywords = { stamp, index: buildKeywordIndex(allEntries(o.handle.db, ['spec', 'knowhow'])) };
  return o.keywords.index;
}

function readBrief(o: Opened, text: string, limits: BriefLimits): ReturnType<Knowledge['brief']> {
  if (o.canWrite) noteChanges(o, syncIndex(o.handle, o.builtin, { partial: true }));
  const found = searchIndex(o.handle.db, text, { project: o.project, limit: limits.search * 2, readOnlyProbe: true }).results;
  const cited = found.filter((r) => r.kind === 'spec' || r.kind === 'knowhow').slice(0, limits.search);
  return { specs: keywordsOf(o).match(text, limits.specs), found: cited.map((r) => ({ ...r, body: entryById(o.handle.db, r.id)?.entry.body ?? r.snippet })) };
}

/** Up to five known ids closest to an unknown one, for the error that says so. */
function nearestIds(o: Opened, ref: string): string[] {
  const lower = ref.toLowerCase();
  return knownIds(o.handle.db)
    .map((id) => ({ id, d: id.includes(lower) || lower.includes(id) ? 0 : editDistance(lower, id.toLowerCase().slice(0, lower.length + 8)) }))
    .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
    .slice(0, 5)
    .map((x) => x.id);
}

function lexicalSearch(o: Opened, query: string, sopts: SearchOptions = {}): SearchResponse {
  o.ensureSynced(false);
  // A read-only probe never bumps exposure; an index opened read-only cannot.
  return searchIndex(o.handle.db, query, { project: o.project, ...sopts, readOnlyProbe: sopts.readOnlyProbe || o.handle.readOnly });
}

/** The default search: lexical, with vectors when an embedder is configured, then the code merge (mixedResponse.ts). */
async function hybridSearch(o: Opened, query: string, sopts: SearchOptions = {}): Promise<MixedResponse> {
  const db = o.handle.db;
  const probe = sopts.readOnlyProbe || o.handle.readOnly;
  let base: SearchResponse & { retrieval: 'lexical' | 'hybrid' };
  // Exposure is bumped below for what the merged page returns (FORMATS §5.4: after truncation).
  if (!o.embedder) base = { ...lexicalSearch(o, query, { ...sopts, readOnlyProbe: true }), retrieval: 'lexical' as const };
  else {
    o.ensureSynced(false);
    // A probe never writes, so it only uses vectors that are already stored.
    if (!probe) await embedPending(db, o.embedder);
    const [qv] = await o.embedder.embed([query]);
    const filters = { type: sopts.type, category: sopts.category, tag: sopts.tag, workspace: sopts.workspace, status: sopts.status, includeDeprecated: sopts.includeDeprecated };
    const hits = vectorSearch(db, qv!, o.embedder.model, filters, Math.min(500, Math.max(4 * (sopts.limit ?? 10), 40)));
    base = { ...searchIndex(db, query, { project: o.project, ...sopts, readOnlyProbe: true }, hits), retrieval: hits.length ? ('hybrid' as const) : ('lexical' as const) };
  }
  const mixed = mixCode(db, query, sopts, base);
  if (!probe) bumpExposure(db, mixed.results.filter((r) => r.source === 'wiki').map((r) => r.id), sopts.now ?? Date.now());
  return mixed;
}

async function loadEntry(o: Opened, ref: string, lopts: { includeDeprecated?: boolean } = {}): Promise<LoadedEntry | CodeNode> {
  const db = o.handle.db;
  o.ensureSynced();
  if (ref.startsWith('code:') || ref.startsWith('file:')) {
    let node = loadCodeNode(db, ref);
    if (!node) {
      await o.ensureCode();
      node = loadCodeNode(db, ref);
    }
    if (node) return node;
  }
  const id = resolveAlias(db, ref);
  const found = id ? entryById(db, id) : undefined;
  if (!id || !found) {
    const near = nearestIds(o, ref);
    throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `Unknown knowledge id "${ref}".${near.length ? ` Nearest known ids: ${near.join(', ')}` : ' The corpus is empty.'}`, { details: { nearest: near } });
  }
  const { entry, status } = found;
  const carriers = sidCarriers(db, ref, entry);
  if (carriers.length > 1) {
    const places = carriers.map((e) => `${e.file}:${e.line ?? 1} (${e.id})`).join(', ');
    throw new MaestroError('KNOWLEDGE_CONFLICT', `sid "${entry.sid}" is carried by ${carriers.length} spec entries: ${places}. Load one by its id, or give all but one a new sid by hand (\`maestro spec health\` reports it as duplicate-sid).`, {
      details: { sid: entry.sid, places: carriers.map((e) => ({ file: e.file, line: e.line ?? 1, id: e.id })) },
    });
  }
  if (status === 'deprecated' && !lopts.includeDeprecated) {
    const by = neighbors(db, id, 'supersedes').find((n) => n.direction === 'in')?.id ?? entry.supersededBy;
    throw new MaestroError('DEPRECATED_KNOWLEDGE', `${id} is deprecated${by ? ` (superseded by ${by})` : ''}; pass --include-deprecated to read it.`, { details: { id, supersededBy: by ?? null } });
  }
  return { ...entry, status, neighbors: neighbors(db, id) };
}

function healthOf(o: Opened, kind?: 'spec' | 'knowhow' | 'wiki'): HealthReport {
  o.ensureSynced();
  const entries = allEntries(o.handle.db);
  const scoped = kind ? entries.filter((e) => e.kind === kind) : entries;
  // The declaration of linked workspaces too: a broken one reads none of them, said here rather than by failing every command.
  const files = [...workspaceFindings(o.root), ...(o.canWrite ? indexFindings(o.handle) : loadCorpus(o.sources).findings)];
  const specFiles = [...new Set(entries.filter((e) => e.kind === 'spec').map((e) => e.file))];
  const wikiRoot = o.wikiRoot;
  const kindOf = (file: string): 'spec' | 'knowhow' | 'wiki' => (wikiRoot && file.startsWith(wikiRoot + '/') ? 'wiki' : file.includes('/knowhow/') ? 'knowhow' : 'spec');
  const findings = [...files, ...lifecycleFindings(scoped), ...(kind !== 'knowhow' && kind !== 'wiki' ? staleConflicts(specFiles) : [])].filter((f) => !kind || kindOf(f.file) === kind);
  const errors = findings.filter((f) => f.severity === 'error').length;
  return { ok: errors === 0, entries: scoped.length, errors, warnings: findings.length - errors, findings };
}

export function openKnowledge(opts: KnowledgeOptions): Knowledge {
  const o = openHandle(opts);
  const { root, handle, sources, throttle } = o;
  const db = handle.db;
  const synced = <T>(fn: () => T, graph = true): T => {
    o.ensureSynced(graph);
    return fn();
  };
  return {
    root,
    indexLocation: handle.location,
    sync: (sopts = {}) => {
      if (!o.canWrite) return { changedFiles: 0, removedFiles: 0, entries: countEntries(db) };
      const all = sopts.graph ?? true;
      throttle.scanned({ all });
      return scan(o, all);
    },
    rebuild: () => {
      if (!o.canWrite) throw new MaestroError('BAD_INPUT', 'A read-only probe cannot rebuild the index.');
      throttle.scanned({ codeStale: true });
      o.changes++;
      return rebuildIndex(handle, sources);
    },
    search: (query, sopts) => lexicalSearch(o, query, sopts),
    searchHybrid: (query, sopts) => hybridSearch(o, query, sopts),
    async searchKg(query, kopts = {}) {
      o.ensureSynced();
      const code = kopts.code ?? true;
      if (code && (!kopts.type || kopts.type === 'code' || kopts.type === 'codegraph')) await o.ensureCode();
      return searchKg(db, query, { ...kopts, limit: Math.max(1, Math.min(200, kopts.limit ?? 10)), code });
    },
    async searchCode(query, copts = {}) {
      await o.ensureCode();
      const results = searchCode(db, query, Math.max(1, Math.min(200, copts.limit ?? 10)));
      return { query, count: results.length, codeIndex: hasCodeSymbols(db) ? 'ok' : 'empty', results };
    },
    syncCode: async () => {
      if (!o.canWrite) return { files: 0, changed: 0, symbols: 0 };
      throttle.scanned({ codeBuilt: true });
      return syncCodeGraph(db, root.projectDir);
    },
    resolveId: (ref) => resolveAlias(db, ref),
    load: (ref, lopts) => loadEntry(o, ref, lopts),
    list: (filters) => synced(() => listEntries(db, filters), false),
    health: (kind) => healthOf(o, kind),
    neighbors: (id, rel) => synced(() => neighbors(db, resolveAlias(db, id) ?? id, rel)),
    traverse: (id, depth, rel) => synced(() => traverse(db, resolveAlias(db, id) ?? id, depth, rel)),
    keywordIndex: () => synced(() => keywordsOf(o), false),
    types: () => synced(() => entryTypes(db), false),
    brief: (text, limits) => readBrief(o, text, limits),
    close: () => handle.close(),
  };
}
