/**
 * The parts a wiki search is made of (FORMATS §8.6): the relevance formula, in the form the hot
 * loop calls with numbers only; a bigram Bloom signature that rules out the substring rule without
 * comparing strings; the postings of the inverted index; an entry as the index holds it; and the
 * list of the best matches so far. InMemoryWikiRetriever (retriever.ts) puts them together.
 */
import type { WikiEntry } from '../../knowledge/format/wiki/entries.js';
import type { EntryType } from '../../knowledge/format/wiki/layout.js';
import type { RetrievalQuery } from './retrieval.js';
import type { EntryScope } from './scope.js';

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
  return relevanceFromNumbers(r.coverage, r.requestSimilarity, r.hitsRequest, SCOPE_CODE[r.scope], TYPE_BIT[r.type], r.genericQuery);
}

export const TYPE_BIT: Record<EntryType, number> = { context: 1, entity: 2, summary: 4 };
export const SCOPE_CODE: Record<EntryScope, number> = { current: 0, global: 1, 'legacy-current': 2, other: 3 };

/** relevanceScore from numbers only (scope code: 0 current, 3 other; type bit: 2 entity): the hot loop's form. */
export function relevanceFromNumbers(coverage: number, requestSimilarity: number, hitsRequest: boolean, scopeCode: number, typeBit: number, generic: boolean): number {
  let score = Math.min(1, 0.55 * coverage + 0.45 * requestSimilarity + (hitsRequest ? 0.1 : 0));
  if (scopeCode === 3) score *= 0.35;
  else if (scopeCode === 0) score += 0.05;
  if (generic && requestSimilarity < 0.4) score = Math.min(score, 0.65);
  if (typeBit === 2) score -= 0.08;
  return score < 0 ? 0 : score > 1 ? 1 : score;
}

/**
 * A 128-bit Bloom signature of a string's character bigrams. If `a` is a
 * substring of `b`, a's bits are a subset of b's; so an entry whose signature
 * is not a subset (in the right direction) cannot meet the substring or the
 * equality rule of requestSimilarity, and its similarity is the token ratio,
 * known from counts alone.
 */
export function bigramBloom(text: string, out: Uint32Array, at: number): void {
  out[at] = out[at + 1] = out[at + 2] = out[at + 3] = 0;
  for (let i = 0; i + 1 < text.length; i += 1) {
    const h = Math.imul(text.charCodeAt(i) * 65_599 + text.charCodeAt(i + 1), 0x9e3779b1) >>> 25;
    out[at + (h >>> 5)]! |= 1 << (h & 31);
  }
}

export function bloomSubset(a: Uint32Array, ai: number, b: Uint32Array, bi: number): boolean {
  return (a[ai]! & ~b[bi]!) === 0 && (a[ai + 1]! & ~b[bi + 1]!) === 0 && (a[ai + 2]! & ~b[bi + 2]!) === 0 && (a[ai + 3]! & ~b[bi + 3]!) === 0;
}

/** A token's postings: the slots of the entries that have it; `arr` is the compiled copy searches walk. */
export interface Posting {
  set: Set<number>;
  arr: Int32Array | null;
}

export function postingArray(p: Posting): Int32Array {
  return (p.arr ??= Int32Array.from(p.set));
}

export function addPosting(index: Map<string, Posting>, token: string, slot: number): void {
  let p = index.get(token);
  if (!p) index.set(token, (p = { set: new Set(), arr: null }));
  p.set.add(slot);
  p.arr = null;
}

export function removePosting(index: Map<string, Posting>, token: string, slot: number): void {
  const p = index.get(token);
  if (!p) return;
  p.set.delete(slot);
  p.arr = null;
  if (!p.set.size) index.delete(token);
}

/** What every entry of one search is compared against, worked out once per query. */
export interface QueryShape {
  qNorm: string;
  qCount: number;
  qLen: number;
  generic: boolean;
  threshold: number;
  typeMask: number;
  /** Entries of other projects take part. */
  other: boolean;
}

/** The best `keep` matches so far, best first, kept by insertion (no sort of every candidate). */
export class TopList {
  readonly items: Array<{ e: IndexedEntry; score: number }> = [];

  constructor(
    readonly keep: number,
    private readonly exclude: RetrievalQuery['exclude'],
  ) {}

  get full(): boolean {
    return this.items.length === this.keep;
  }

  /** True when the list is full and `score` is below its last. */
  shutsOut(score: number): boolean {
    return this.items.length === this.keep && score < this.items[this.keep - 1]!.score;
  }

  offer(e: IndexedEntry, score: number): void {
    const ex = this.exclude;
    if (ex && e.entry.source.explorationId === ex.explorationId && (e.entry.source.sessionId === ex.sessionId || !e.entry.source.sessionId)) return;
    const top = this.items;
    const keep = this.keep;
    const item = { e, score };
    if (top.length === keep && !better(item, top[keep - 1]!)) return;
    let j = top.length < keep ? top.length : keep - 1;
    top[j] = item;
    while (j > 0 && better(top[j]!, top[j - 1]!)) {
      [top[j - 1], top[j]] = [top[j]!, top[j - 1]!];
      j -= 1;
    }
  }
}

function better(a: { e: IndexedEntry; score: number }, b: { e: IndexedEntry; score: number }): boolean {
  return a.score > b.score || (a.score === b.score && a.e.entry.id < b.e.entry.id);
}
