/**
 * `maestro search` over the knowledge index: candidates with filters applied
 * in SQL before the cut, BM25F × time decay × proximity boost × coverage, then balanced selection
 * (diversity.ts), then exposure bumped for what was returned — unless this is
 * a read-only probe.
 */
import type Database from 'better-sqlite3';
import { dedupCanonical, selectDiverse, timeDecay, type Scored, type SelectionReason } from './diversity.js';
import { applySeededExploration, decayClock } from './exploration.js';
import type { KnowledgeEntry } from './entry.js';
import { bumpExposure } from './index/exposure.js';
import { contentTerms, fetchByRowids, fetchCandidates, type Candidate, type SearchFilters } from './index/query.js';
import { fuseHybrid, type VectorHit } from './embeddings.js';
import { knowledgeBoost } from './mixed.js';
import { proximityQuery, rescoreFactors, stem } from './proximity.js';
import { queryTerms } from './text.js';

export interface SearchOptions extends SearchFilters {
  limit?: number | undefined;
  /** `balanced` (default) or `off`: plain relevance, family cap 2, no MMR, no exploration. */
  diversity?: 'balanced' | 'off' | undefined;
  /** Write nothing, not even exposure. */
  readOnlyProbe?: boolean | undefined;
  /** Clock for time decay (taken at the start of its UTC day), the exploration period and exposure stamps (ms). */
  now?: number | undefined;
  /** Apply FORMATS §5.1 time decay (default true). */
  decay?: boolean | undefined;
}

export interface HybridInfo {
  /** `lexical` or `hybrid` (vectors mixed in). */
  mode: 'lexical' | 'hybrid';
}

export interface SearchResult {
  source: 'wiki';
  id: string;
  graphId: string;
  aliases: string[];
  kind: string;
  type: string;
  name: string;
  rank: number;
  /** Relevance normalised to the best result of this search (0..1]. */
  score: number;
  summary: string;
  snippet: string;
  category: string | null;
  tags: string[];
  status: 'active' | 'deprecated';
  confidence: string | null;
  workspace: string | null;
  file: string;
  line: number | null;
  family: string;
  selectionReason: SelectionReason;
}

export interface SearchResponse {
  query: string;
  count: number;
  wikiCount: number;
  codeCount: number;
  typeCounts: Record<string, number>;
  /** Filters pushed into the index query (applied before the candidate cut). */
  filtersApplied: SearchFilters;
  diversity: 'balanced' | 'off';
  /** `on`, or why the exploration slot was off. */
  exploration: string;
  results: SearchResult[];
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 200;

/** FORMATS §5.2 candidate limit: min(500, max(4·limit, 40)). */
export function candidateLimit(limit: number): number {
  return Math.min(500, Math.max(4 * limit, 40));
}

interface Item extends Scored {
  entry: KnowledgeEntry;
  status: 'active' | 'deprecated';
  raw: number;
}

export function searchIndex(db: Database.Database, query: string, opts: SearchOptions = {}, vector?: VectorHit[]): SearchResponse {
  const limit = Math.max(1, Math.min(MAX_LIMIT, Math.floor(opts.limit ?? DEFAULT_LIMIT)));
  const balanced = (opts.diversity ?? 'balanced') === 'balanced';
  const now = opts.now ?? Date.now();
  const filters: SearchFilters = {
    type: opts.type,
    category: opts.category,
    tag: opts.tag,
    workspace: opts.workspace,
    status: opts.status,
    includeDeprecated: opts.includeDeprecated,
  };
  let candidates: Candidate[] = fetchCandidates(db, query, filters, candidateLimit(limit));
  if (vector && vector.length) {
    // Hybrid: vector hits join the pool and every candidate gets the fused score (embeddings.ts).
    const fused = fuseHybrid(candidates, vector);
    const known = new Set(candidates.map((c) => c.rowid));
    candidates = [...candidates, ...fetchByRowids(db, vector.map((v) => v.rowid).filter((r) => !known.has(r)))].map((c) => ({ ...c, bm25: fused.get(c.rowid) ?? c.bm25 }));
  }
  const terms0 = contentTerms(query);
  const prox = proximityQuery(terms0);
  const stems = new Set(terms0.map(stem));
  const items: Item[] = candidates.map((c) => {
    const decay = opts.decay === false ? 1 : timeDecay(c.entry.kind, c.sortDate, decayClock(now));
    const f = rescoreFactors(prox, stems, c.entry);
    const boost = f.proximity * f.coverage;
    return {
      id: c.entry.id,
      family: c.entry.family,
      // FORMATS §5.2 type boost and confidence penalty (mixed.ts), before selection so every later step sees final scores.
      score: c.bm25 * decay * boost * knowledgeBoost(c.entry.kind, c.entry.type, c.entry.confidence),
      raw: c.bm25,
      text: [c.entry.title, c.entry.summary, c.entry.tags.join(' '), c.entry.category ?? ''].join(' '),
      contentKey: contentKey(c.entry),
      entry: c.entry,
      status: c.status,
    };
  });
  const pool = dedupCanonical(items);
  let selected = selectDiverse(pool, { limit, balanced, mmr: true });
  let exploration = 'off: diversity off';
  if (balanced) {
    // Seeded by the query, the pool and the period (exploration.ts): exposure counts are never read.
    const seeded = applySeededExploration({ selected, pool, limit, query, now });
    selected = seeded.selected;
    exploration = seeded.state;
  }
  const max = selected.reduce((m, s) => Math.max(m, s.item.score), 0) || 1;
  const terms = queryTerms(query);
  const results: SearchResult[] = selected.map((s, i) => toResult(s.item, i + 1, s.item.score / max, s.reason, terms));
  if (!opts.readOnlyProbe) bumpExposure(db, results.map((r) => r.id), now);
  const typeCounts: Record<string, number> = {};
  for (const r of results) typeCounts[r.kind] = (typeCounts[r.kind] ?? 0) + 1;
  return { query, count: results.length, wikiCount: results.length, codeCount: 0, typeCounts, filtersApplied: stripUndefined(filters), diversity: balanced ? 'balanced' : 'off', exploration, results };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function toResult(it: Item, rank: number, score: number, reason: SelectionReason, terms: string[]): SearchResult {
  const e = it.entry;
  return {
    source: 'wiki',
    id: e.id,
    graphId: e.graphId,
    aliases: e.aliases,
    kind: e.kind,
    type: e.type,
    name: e.title,
    rank,
    score: Math.round(score * 1e4) / 1e4,
    summary: e.summary,
    snippet: snippet(e.body, terms),
    category: e.category,
    tags: e.tags,
    status: it.status,
    confidence: e.confidence,
    workspace: e.workspace,
    file: e.file,
    line: e.line,
    family: e.family,
    selectionReason: reason,
  };
}

/** About 200 characters of the body around the first query term found. */
export function snippet(body: string, terms: string[]): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  const start = Math.max(0, at - 60);
  const text = flat.slice(start, start + 200);
  return `${start > 0 ? '…' : ''}${text}${start + 200 < flat.length ? '…' : ''}`;
}

/** Cross-scope duplicate key: FNV-1a over the normalised title and the body (collisions only merge true look-alikes in practice). */
function contentKey(e: KnowledgeEntry): string {
  const text = `${e.title.trim().toLowerCase()}\u0000${e.body.trim()}`;
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619);
    h2 = Math.imul(h2 ^ c, 2246822519);
  }
  return `${(h1 >>> 0).toString(36)}:${(h2 >>> 0).toString(36)}:${text.length}`;
}
