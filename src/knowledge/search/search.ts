/**
 * `maestro search` over the knowledge index: entries the query names by id or
 * alias first (index/namedEntries.ts), then candidates with filters applied
 * in SQL before the cut, BM25F × time decay × proximity boost × coverage, then balanced selection
 * (diversity.ts), then exposure bumped for what was returned — unless this is
 * a read-only probe.
 */
import type Database from 'better-sqlite3';
import { dedupCanonical, selectDiverse, timeDecay, type Scored, type SelectionReason } from './diversity.js';
import { applySeededExploration, decayClock } from './exploration.js';
import type { KnowledgeEntry } from '../format/entry.js';
import { bumpExposure } from '../index/exposure.js';
import { namedEntries } from '../index/namedEntries.js';
import { countEntries, entryTypes } from '../index/readEntries.js';
import { contentTerms, corpusStats, fetchByRowids, fetchCandidates, isStopWord, onlyStopWords, termWeights, type Candidate, type SearchFilters } from '../index/query.js';
import { bm25fQuery, bm25fScore, bm25fTerms, fieldTexts, prefixKeys } from './bm25f.js';
import { FEEDBACK_DOCS, FEEDBACK_WEIGHT, feedbackTerms } from './feedback.js';
import { fuseHybrid, type VectorHit } from '../vectors/embeddings.js';
import { knowledgeBoost } from './boosts.js';
import { proximityQuery, rescoreFactors, stem } from './proximity.js';
import { queryTerms } from '../format/text.js';

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
  /** Include wiki entries tagged for other projects (`--all-projects`); otherwise `project` scopes them. */
  allProjects?: boolean | undefined;
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
  /** The status as stored (`draft`, `proposed`, `active`, `deprecated`…); hidden entries always read `deprecated` or their own word for it. */
  status: string;
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
  /** Only when nothing matched: why (no entry holds an informative query word; see README). */
  noMatch?: string;
  /** How many leading results the query named by id or alias (index/namedEntries.ts); absent when none. */
  named?: number;
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
    project: opts.allProjects ? undefined : opts.project,
  };
  // Entries the query names by id or alias come first, in query order (index/namedEntries.ts); the
  // ranked page follows without them or their content twins.
  const named = namedEntries(db, query, filters).slice(0, limit).map((c) => toItem(c, 1));
  const namedIds = new Set(named.map((n) => n.id));
  const namedContent = new Set(named.map((n) => n.contentKey));
  const ranked = rankedItems(db, query, opts, filters, vector, now);
  const pool = dedupCanonical(ranked.filter((it) => !namedIds.has(it.id) && !namedContent.has(it.contentKey)));
  const rest = limit - named.length;
  let selected = rest > 0 ? selectDiverse(pool, { limit: rest, balanced, mmr: true }) : [];
  let exploration = 'off: diversity off';
  if (balanced) {
    // Seeded by the query, the pool and the period (exploration.ts): exposure counts are never read.
    const seeded = applySeededExploration({ selected, pool, limit: rest, query, now });
    selected = seeded.selected;
    exploration = seeded.state;
  }
  const max = selected.reduce((m, s) => Math.max(m, s.item.score), 0) || 1;
  const terms = queryTerms(query);
  const results: SearchResult[] = [
    // A named entry is a full match: score 1, whatever its words would have scored.
    ...named.map((it, i) => toResult(it, i + 1, 1, 'relevance', terms)),
    ...selected.map((s, i) => toResult(s.item, named.length + i + 1, s.item.score / max, s.reason, terms)),
  ];
  if (!opts.readOnlyProbe) bumpExposure(db, results.map((r) => r.id), now);
  const typeCounts: Record<string, number> = {};
  for (const r of results) typeCounts[r.kind] = (typeCounts[r.kind] ?? 0) + 1;
  // Narrowed by a filter, the filter is named: an unknown type read as if the words were at fault.
  const narrowed = Object.entries(stripUndefined({ type: filters.type, category: filters.category, tag: filters.tag, workspace: filters.workspace, status: filters.status })).map(([k, v]) => `${k} "${String(v)}"`);
  const among = narrowed.length ? ` among the entries with ${narrowed.join(', ')}` : '';
  const noMatch = results.length ? undefined : noMatchMessage(db, query, among, filters.type);
  return { query, count: results.length, wikiCount: results.length, codeCount: 0, typeCounts, filtersApplied: stripUndefined(filters), diversity: balanced ? 'balanced' : 'off', exploration, ...(noMatch ? { noMatch } : {}), ...(named.length ? { named: named.length } : {}), results };
}

/**
 * Why a query found nothing, in the user's terms: an index with no entry at all has nothing to search (the words
 * are not at fault); a `--type` no entry has (a typo: knowhow may declare types of its own, so none is refused),
 * with the types there are; otherwise no entry holds enough of the words (MIN_MATCH_SHARE, said as the rule it is).
 */
function noMatchMessage(db: Database.Database, query: string, among: string, type: string | undefined): string {
  if (!countEntries(db)) return `No entry matches "${query}": there is no spec or knowhow entry to search here yet.`;
  if (type) {
    const types = entryTypes(db);
    if (!types.includes(type)) return `No entry matches "${query}": no entry has type "${type}". The types here: ${types.join(', ')}.`;
  }
  const rule = `an entry must hold words carrying at least ${MIN_MATCH_SHARE * 100}% of the query's weight, and stop words alone never match`;
  return `No entry matches "${query}"${among}: no entry${among ? ' there' : ''} holds enough of its words (${rule}).`;
}

/** The candidates that match the query's words, with their final scores (before selection). */
function rankedItems(db: Database.Database, query: string, opts: SearchOptions, filters: SearchFilters, vector: VectorHit[] | undefined, now: number): Item[] {
  // A query of stop words only matches only through a word found in at most half of the entries
  // (idf ≥ ln 2); "the of" in an English corpus has no real match (README "A query with no real match").
  const noise = onlyStopWords(query) && ![...termWeights(db, contentTerms(query)).values()].some((w) => w.df > 0 && w.weight >= Math.LN2);
  const limit = Math.max(1, Math.min(MAX_LIMIT, Math.floor(opts.limit ?? DEFAULT_LIMIT)));
  let candidates: Candidate[] = noise ? [] : rescoreBm25f(db, query, fetchCandidates(db, query, filters, candidateLimit(limit)));
  const known = new Set(candidates.map((c) => c.rowid));
  if (vector && vector.length) {
    // Hybrid: vector hits join the pool and every candidate gets the fused score (embeddings.ts).
    const fused = fuseHybrid(candidates, vector);
    candidates = [...candidates, ...fetchByRowids(db, vector.map((v) => v.rowid).filter((r) => !known.has(r)))].map((c) => ({ ...c, bm25: fused.get(c.rowid) ?? c.bm25 }));
  }
  const terms0 = contentTerms(query);
  const prox = proximityQuery(terms0);
  const stems = new Set(terms0.map(stem));
  const share = matchShare(db, terms0, stems.size >= 2 && candidates.length > 0);
  const items: Item[] = [];
  for (const c of candidates) {
    const decay = opts.decay === false ? 1 : timeDecay(c.entry.kind, c.sortDate, decayClock(now));
    const f = rescoreFactors(prox, stems, c.entry);
    // The documented minimum score: lexical matches must hold MIN_MATCH_SHARE of the query's weight (vector-only hits are judged by their vectors).
    if (f.found && known.has(c.rowid) && share(f.found) < MIN_MATCH_SHARE) continue;
    // FORMATS §5.2 type boost and confidence penalty (boosts.ts), before selection so every later step sees final scores.
    items.push(toItem(c, c.bm25 * decay * f.proximity * f.coverage * knowledgeBoost(c.entry.kind, c.entry.type, c.entry.confidence)));
  }
  return items;
}

function toItem(c: Candidate, score: number): Item {
  return {
    id: c.entry.id,
    family: c.entry.family,
    score,
    raw: c.bm25,
    text: [c.entry.title, c.entry.summary, c.entry.tags.join(' '), c.entry.category ?? ''].join(' '),
    contentKey: contentKey(c.entry),
    entry: c.entry,
    status: c.status,
  };
}

/**
 * FTS5 picks the candidates; bm25f.ts scores them (per-field length normalisation, Porter stems, exact
 * identifiers), feedback.ts adds the words the best of them share, and they are re-sorted, so the hybrid
 * fusion below ranks them in this order too.
 */
function rescoreBm25f(db: Database.Database, query: string, candidates: Candidate[]): Candidate[] {
  if (candidates.length === 0) return candidates;
  const terms = contentTerms(query);
  const df = termWeights(db, terms.flatMap((t) => t.match(/[\p{L}\p{N}]+/gu) ?? []));
  const { rows, avg } = corpusStats(db);
  const q = bm25fQuery(terms, query, (t) => df.get(t)?.df ?? 0, rows, avg);
  const texts = candidates.map((c) => fieldTexts({ title: c.entry.title, summary: c.entry.summary, tags: [...c.entry.tags, c.entry.category ?? ''].join(' '), body: c.entry.body }));
  const scores = candidates.map((c, i) => bm25fScore(q, texts[i]!, c.lens));
  if (candidates.length > FEEDBACK_DOCS) {
    const best = scores.map((s, i) => ({ s, i })).sort((a, b) => b.s - a.s || candidates[a.i]!.rowid - candidates[b.i]!.rowid).slice(0, FEEDBACK_DOCS);
    const fb = feedbackTerms(q, best.map(({ s, i }) => ({ texts: texts[i]!, score: s })), isStopWord);
    if (fb.length > 0) {
      const fdf = termWeights(db, fb.map((t) => t.surface));
      const weighted = new Map(fb.map((t) => [t.stem, { idf: fdf.get(t.surface)!.weight, weight: FEEDBACK_WEIGHT * t.weight }]));
      const prefixes = prefixKeys(fb.map((t) => t.stem));
      candidates.forEach((c, i) => (scores[i]! += bm25fTerms(q, weighted, prefixes, texts[i]!, c.lens)));
    }
  }
  return candidates
    .map((c, i) => ({ ...c, bm25: scores[i]! > 0 ? scores[i]! : 1e-6 * c.bm25 }))
    .sort((a, b) => b.bm25 - a.bm25 || a.rowid - b.rowid);
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
    status: it.status === 'deprecated' && !isDeprecatedWord(e.storedStatus) ? 'deprecated' : (e.storedStatus ?? it.status),
    confidence: e.confidence,
    workspace: e.workspace,
    file: e.file,
    line: e.line,
    family: e.family,
    selectionReason: reason,
  };
}

/**
 * The documented minimum (README "A query with no real match"): with two or more query stems, an
 * entry must hold query words carrying at least this share of the query's weight (each word weighs
 * its idf, index/query.ts termWeights). One common word among words no entry holds is not a match.
 */
export const MIN_MATCH_SHARE = 0.05;

function matchShare(db: Database.Database, terms: string[], needed: boolean): (found: Set<string>) => number {
  if (!needed) return () => 1;
  const byStem = new Map<string, number>();
  for (const [t, w] of termWeights(db, terms)) byStem.set(stem(t), Math.max(byStem.get(stem(t)) ?? 0, w.weight));
  const total = [...byStem.values()].reduce((a, b) => a + b, 0) || 1;
  return (found) => {
    let got = 0;
    for (const s of found) got += byStem.get(s) ?? 0;
    return got / total;
  };
}

/** Status words that mean hidden (FORMATS §1.7, §8.4). */
function isDeprecatedWord(s: string | undefined): boolean {
  return s === 'deprecated' || s === 'superseded' || s === 'archived';
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
