/**
 * Prior retrieval: the wiki entry that best answers a running question
 * (FORMATS §8.6). `WikiRetriever` is the seam; `InMemoryWikiRetriever` keeps
 * a parsed, tokenised copy of contexts/ and entities/ with an inverted index
 * so a question costs a few set lookups per candidate (≈0.1–1 ms on 5,000
 * entries, see bench/observer.ts) and can run on every UI frame.
 *
 * Freshness: the disk is rescanned in the background (stat only; changed
 * files re-parsed) at most once per `rescanIntervalMs`; `refresh()` rescans
 * now (after a write). A winning entry's file is stat'ed before it is
 * returned, so a deleted wiki file never hits again, even between rescans.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isGenericProjectQuery } from './generic-query.js';
import { listEntryFiles, listEntryFilesAsync, parseEntryFile, type WikiEntry, type WikiProblem } from './entries.js';
import { wikiLayout, type EntryType } from './layout.js';
import { classifyScope, type EntryScope } from './scope.js';
import { contentTokens, matchTokens, normalizeMatchText, requestSimilarityFromCounts } from '../text.js';

/** FORMATS §8.6 thresholds. */
export const WIKI_SEARCH_THRESHOLD = 0.5;
export const AGENT_CANDIDATE_THRESHOLD = 0.25;
export const DEFAULT_MATCH_THRESHOLD = 0.3;
const MIN_QUERY = 3;
const MIN_DERIVED_QUERY = 5;
const EXCERPT_CAP = 240;

export interface WikiMatch {
  entryId: string;
  relativePath: string;
  path: string;
  type: EntryType;
  slug: string;
  request: string;
  excerpt: string;
  tags: string[];
  score: number;
  matchedKeywords: string[];
}

export interface RetrievalQuery {
  text: string;
  /** A query built from an exploration (its question) needs ≥5 chars; a typed one ≥3. */
  derived?: boolean;
  threshold?: number;
  /** The exploration's own entry never answers its own question. */
  exclude?: { sessionId: string; explorationId: string };
  /** Types searched; prior retrieval uses contexts and entities, never summaries. */
  types?: readonly EntryType[];
  /** Off by default: retrieval only consumes project-compatible entries. */
  includeOtherProjects?: boolean;
  limit?: number;
}

export interface WikiRetriever {
  /** The best match at or above the threshold, or null. */
  search(query: RetrievalQuery): WikiMatch | null;
  /** Up to `limit` matches, best first (agent candidates, dedup). */
  searchMany(query: RetrievalQuery): WikiMatch[];
  /** Re-reads changed files now (after a write). */
  refresh(): void;
  /** Entries as last read, for dedup and lint. */
  entries(): WikiEntry[];
  problems(): WikiProblem[];
}

export interface IndexedEntry {
  /** Index into the retriever's per-search count arrays. */
  slot: number;
  entry: WikiEntry;
  reqNorm: string;
  reqTokens: Set<string>;
  keywords: Set<string>;
  scope: EntryScope;
}

export interface RelevanceInput {
  /** Fraction of the query's tokens found among the entry's keywords. */
  coverage: number;
  requestSimilarity: number;
  /** Whether any query token is a token of the entry's request. */
  hitsRequest: boolean;
  scope: EntryScope;
  genericQuery: boolean;
  type: EntryType;
}

/**
 * Prior-hit relevance (FORMATS §8.6): 0.55·coverage + 0.45·requestSimilarity,
 * +0.1 when a token hits the request, capped at 1; another project ×0.35, the
 * current project +0.05; a generic "analyse the project" query with request
 * similarity < 0.4 capped at 0.65; entities −0.08; clamped to [0, 1].
 */
export function relevanceScore(r: RelevanceInput): number {
  let score = Math.min(1, 0.55 * r.coverage + 0.45 * r.requestSimilarity + (r.hitsRequest ? 0.1 : 0));
  if (r.scope === 'other') score *= 0.35;
  else if (r.scope === 'current') score += 0.05;
  if (r.genericQuery && r.requestSimilarity < 0.4) score = Math.min(score, 0.65);
  if (r.type === 'entity') score -= 0.08;
  return Math.max(0, Math.min(1, score));
}

function excerptOf(entry: WikiEntry): string {
  const text = (entry.summary || entry.body.replace(/^#.*$/gm, ''))
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > EXCERPT_CAP ? `${text.slice(0, EXCERPT_CAP - 1)}…` : text;
}

export interface InMemoryRetrieverOptions {
  projectSlug: string;
  /** Minimum time between disk rescans. */
  rescanIntervalMs?: number;
  now?: () => number;
}

export class InMemoryWikiRetriever implements WikiRetriever {
  private readonly byPath = new Map<string, IndexedEntry>();
  private readonly inverted = new Map<string, Set<IndexedEntry>>();
  private readonly requestInverted = new Map<string, Set<IndexedEntry>>();
  private readonly problemsByPath = new Map<string, WikiProblem[]>();
  private lastScan = -Infinity;
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private keywordCounts = new Uint16Array(1024);
  private requestCounts = new Uint16Array(1024);
  private inflight: Promise<void> | null = null;
  private readonly rescanIntervalMs: number;
  private readonly now: () => number;

  constructor(
    readonly wikiRoot: string,
    private readonly options: InMemoryRetrieverOptions,
  ) {
    this.rescanIntervalMs = options.rescanIntervalMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  refresh(): void {
    this.lastScan = this.now();
    this.apply(listEntryFiles(this.wikiRoot));
  }

  /**
   * The same rescan without blocking: stat calls go to the thread pool, then
   * the (usually empty) set of changed files is parsed. A 5,000-entry wiki
   * costs ≈50 ms of stat calls, too long for a UI frame if done inline.
   */
  refreshAsync(): Promise<void> {
    this.lastScan = this.now();
    this.inflight ??= listEntryFilesAsync(this.wikiRoot)
      .then((files) => this.apply(files))
      .catch(() => undefined)
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }

  /** Resolves when no background rescan is running. */
  idle(): Promise<void> {
    return this.inflight ?? Promise.resolve();
  }

  private apply(files: ReadonlyArray<{ path: string; mtimeMs: number; size: number }>): void {
    const knowledge = wikiLayout(this.wikiRoot).knowledge;
    const seen = new Set<string>();
    for (const f of files) {
      seen.add(f.path);
      const old = this.byPath.get(f.path);
      if (old && old.entry.mtimeMs === f.mtimeMs && old.entry.size === f.size) continue;
      if (old) this.remove(f.path);
      let text: string;
      try {
        text = readFileSync(f.path, 'utf8');
      } catch {
        continue;
      }
      const parsed = parseEntryFile(f.path, knowledge, text, f);
      if (parsed.problems.length) this.problemsByPath.set(f.path, parsed.problems);
      else this.problemsByPath.delete(f.path);
      if (parsed.entry) this.add(parsed.entry);
    }
    for (const path of [...this.byPath.keys()]) if (!seen.has(path)) this.remove(path);
    for (const path of [...this.problemsByPath.keys()]) if (!seen.has(path)) this.problemsByPath.delete(path);
  }

  entries(): WikiEntry[] {
    this.maybeRescan();
    return [...this.byPath.values()].map((i) => i.entry);
  }

  problems(): WikiProblem[] {
    this.maybeRescan();
    return [...this.problemsByPath.values()].flat();
  }

  search(query: RetrievalQuery): WikiMatch | null {
    return this.searchMany({ ...query, limit: 1 })[0] ?? null;
  }

  searchMany(query: RetrievalQuery): WikiMatch[] {
    this.maybeRescan();
    const text = query.text.trim();
    if (text.length < (query.derived ? MIN_DERIVED_QUERY : MIN_QUERY)) return [];
    const tokens = matchTokens(text);
    if (!tokens.length) return [];
    const qNorm = normalizeMatchText(text);
    const generic = isGenericProjectQuery(text);
    const types = query.types ?? ['context', 'entity'];
    const threshold = query.threshold ?? WIKI_SEARCH_THRESHOLD;
    // Count, per entry, the query tokens among its keywords and among its request tokens,
    // walking the postings once: the cost is the postings touched, not entries × tokens.
    // Typed-array counters indexed by slot: about 3× faster than Map<entry, count> on 5,000 entries.
    const kw = this.keywordCounts;
    const rq = this.requestCounts;
    const touched: IndexedEntry[] = [];
    for (const t of tokens) {
      for (const e of this.inverted.get(t) ?? []) if (kw[e.slot]!++ === 0) touched.push(e);
      for (const e of this.requestInverted.get(t) ?? []) rq[e.slot]!++;
    }
    // Keep only the best `limit` (+ a few spares for deleted files) instead of sorting every candidate.
    const limit = query.limit ?? 10;
    const keep = limit + 4;
    const top: Array<{ e: IndexedEntry; score: number }> = [];
    const better = (a: { e: IndexedEntry; score: number }, b: { e: IndexedEntry; score: number }) => a.score > b.score || (a.score === b.score && a.e.entry.id < b.e.entry.id);
    const ex = query.exclude;
    const input: RelevanceInput = { coverage: 0, requestSimilarity: 0, hitsRequest: false, scope: 'current', genericQuery: generic, type: 'context' };
    for (const e of touched) {
      const hits = kw[e.slot]!;
      const found = rq[e.slot]!;
      kw[e.slot] = 0;
      rq[e.slot] = 0;
      if (!types.includes(e.entry.type)) continue;
      if (e.scope === 'other' && !query.includeOtherProjects) continue;
      if (ex && e.entry.source.explorationId === ex.explorationId && (e.entry.source.sessionId === ex.sessionId || !e.entry.source.sessionId)) continue;
      input.coverage = hits / tokens.length;
      input.requestSimilarity = requestSimilarityFromCounts(qNorm, tokens.length, e.reqNorm, e.reqTokens.size, found);
      input.hitsRequest = found > 0;
      input.scope = e.scope;
      input.type = e.entry.type;
      const score = relevanceScore(input);
      if (score < threshold) continue;
      const item = { e, score };
      if (top.length === keep && !better(item, top[keep - 1]!)) continue;
      let i = top.length < keep ? top.length : keep - 1;
      top[i] = item;
      while (i > 0 && better(top[i]!, top[i - 1]!)) {
        [top[i - 1], top[i]] = [top[i]!, top[i - 1]!];
        i -= 1;
      }
    }
    const out: WikiMatch[] = [];
    let dropped = false;
    for (const { e, score } of top) {
      // The file may have been deleted since the last rescan: check the winner, drop it if gone.
      if (!existsSync(e.entry.path)) {
        this.remove(e.entry.path);
        dropped = true;
        continue;
      }
      out.push({
        entryId: e.entry.id,
        relativePath: e.entry.relativePath,
        path: e.entry.path,
        type: e.entry.type,
        slug: e.entry.slug,
        request: e.entry.request,
        excerpt: excerptOf(e.entry),
        tags: e.entry.tags,
        score: Math.round(score * 1000) / 1000,
        matchedKeywords: tokens.filter((t) => e.keywords.has(t)),
      });
      if (out.length >= limit) break;
    }
    // More deleted files than spares: search again without them (they are out of the index now).
    if (dropped && out.length < limit && top.length === keep) return this.searchMany(query);
    return out;
  }

  /** First use reads the wiki; later rescans run in the background, at most once per interval. */
  private maybeRescan(): void {
    if (this.lastScan === -Infinity) this.refresh();
    else if (!this.inflight && this.now() - this.lastScan >= this.rescanIntervalMs) void this.refreshAsync();
  }

  private add(entry: WikiEntry): void {
    const reqTokens = new Set(matchTokens(entry.request));
    const keywords = new Set<string>([...reqTokens, ...matchTokens(`${entry.title} ${entry.slug.replace(/-/g, ' ')} ${entry.summary}`), ...entry.tags.map((t) => t.toLowerCase())]);
    for (const t of matchTokens(entry.body.slice(0, 4_000))) keywords.add(t);
    for (const t of contentTokens(entry.tags.join(' '))) keywords.add(t);
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    if (slot >= this.keywordCounts.length) {
      const grow = (a: Uint16Array) => {
        const b = new Uint16Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.keywordCounts = grow(this.keywordCounts);
      this.requestCounts = grow(this.requestCounts);
    }
    const indexed: IndexedEntry = {
      slot, entry, reqNorm: normalizeMatchText(entry.request), reqTokens, keywords, scope: classifyScope(entry.tags, this.options.projectSlug) };
    this.byPath.set(entry.path, indexed);
    for (const t of keywords) {
      let set = this.inverted.get(t);
      if (!set) this.inverted.set(t, (set = new Set()));
      set.add(indexed);
    }
    for (const t of reqTokens) {
      let set = this.requestInverted.get(t);
      if (!set) this.requestInverted.set(t, (set = new Set()));
      set.add(indexed);
    }
  }

  private remove(path: string): void {
    const old = this.byPath.get(path);
    if (!old) return;
    this.byPath.delete(path);
    this.freeSlots.push(old.slot);
    for (const t of old.keywords) {
      const set = this.inverted.get(t);
      set?.delete(old);
      if (set && !set.size) this.inverted.delete(t);
    }
    for (const t of old.reqTokens) {
      const set = this.requestInverted.get(t);
      set?.delete(old);
      if (set && !set.size) this.requestInverted.delete(t);
    }
  }
}
