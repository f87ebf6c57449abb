/**
 * Prior retrieval: the wiki entry that best answers a running question
 * (FORMATS §8.6). `WikiRetriever` is the seam; `InMemoryWikiRetriever` keeps
 * a parsed, tokenised copy of contexts/ and entities/, kept warm between
 * questions: an inverted index of compiled postings (Int32Array of slots) and
 * per-slot typed arrays (type, scope, request token count and length, a
 * bigram Bloom signature of the request). A question walks the postings of
 * its tokens once, scores exactly the few entries whose signature allows the
 * substring/equality rule, and visits the rest by keyword hits, most first,
 * stopping when a whole level cannot reach the threshold or the top list —
 * the score of every other entry follows from counts alone, without reading
 * its object or comparing strings. No file is read per question.
 * retriever.test.ts checks the ranking against scoring every entry.
 *
 * Freshness: the disk is rescanned in the background (stat only; changed
 * files re-parsed) at most once per `rescanIntervalMs`; `refresh()` rescans
 * now (after a write). A winning entry's file is stat'ed before it is
 * returned, so a deleted wiki file never hits again, even between rescans.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isGenericProjectQuery } from './generic-query.js';
import { clipOutsideMarkers } from '../../core/redact.js';
import { listEntryFiles, listEntryFilesAsync, parseEntryFile, type WikiEntry, type WikiProblem } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { classifyScope } from './scope.js';
import { WIKI_SEARCH_THRESHOLD, type RetrievalQuery, type WikiMatch, type WikiRetriever } from './retrieval.js';
import { addPosting, bigramBloom, bloomSubset, postingArray, relevanceFromNumbers, removePosting, SCOPE_CODE, TopList, TYPE_BIT, type IndexedEntry, type Posting, type QueryShape } from './relevance.js';
import { contentTokens, matchTokens, normalizeMatchText, requestSimilarityFromCounts } from '../text.js';

export { relevanceScore, type IndexedEntry, type RelevanceInput } from './relevance.js';
export { AGENT_CANDIDATE_THRESHOLD, DEFAULT_MATCH_THRESHOLD, WIKI_SEARCH_THRESHOLD, type RetrievalQuery, type WikiMatch, type WikiRetriever } from './retrieval.js';

const MIN_QUERY = 3;
const MIN_DERIVED_QUERY = 5;
const EXCERPT_CAP = 240;

function excerptOf(entry: WikiEntry): string {
  const text = (entry.summary || entry.body.replace(/^#.*$/gm, ''))
    .replace(/\s+/g, ' ')
    .trim();
  return clipOutsideMarkers(text, EXCERPT_CAP);
}

export interface InMemoryRetrieverOptions {
  projectSlug: string;
  /** Minimum time between disk rescans. */
  rescanIntervalMs?: number;
  now?: () => number;
}

export class InMemoryWikiRetriever implements WikiRetriever {
  private readonly byPath = new Map<string, IndexedEntry>();
  /** Entries by slot (the index into the count arrays and the postings). */
  private readonly slots: Array<IndexedEntry | undefined> = [];
  private readonly inverted = new Map<string, Posting>();
  private readonly requestInverted = new Map<string, Posting>();
  private touched = new Int32Array(1024);
  private ordered = new Int32Array(1024);
  /** Per slot, for the hot loop without touching the entry objects. */
  private slotType = new Uint8Array(1024);
  private slotScope = new Uint8Array(1024);
  private slotReqCount = new Uint16Array(1024);
  private slotReqLen = new Uint32Array(1024);
  private slotBloom = new Uint32Array(1024 * 4);
  private readonly queryBloom = new Uint32Array(4);
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
    let typeMask = 0;
    for (const t of query.types ?? ['context', 'entity']) typeMask |= TYPE_BIT[t];
    const shape: QueryShape = {
      qNorm,
      qCount: tokens.length,
      qLen: qNorm.length,
      generic: isGenericProjectQuery(text),
      threshold: query.threshold ?? WIKI_SEARCH_THRESHOLD,
      typeMask,
      other: query.includeOtherProjects === true,
    };
    // Keep only the best `limit` (+ one spare for a deleted file) instead of sorting every candidate.
    const limit = query.limit ?? 10;
    const top = new TopList(limit + 1, query.exclude);
    const nTouched = this.countHits(tokens);
    const nOrdered = this.scoreExactAndOrder(shape, nTouched, top);
    this.scoreByHits(shape, nOrdered, top);
    // The counters are per search: clear what this one touched (request tokens are keywords too).
    for (let i = 0; i < nTouched; i += 1) {
      const slot = this.touched[i]!;
      this.keywordCounts[slot] = 0;
      this.requestCounts[slot] = 0;
    }
    const { out, dropped } = this.matchesOf(top, tokens, limit);
    // More deleted files than spares: search again without them (they are out of the index now).
    if (dropped && out.length < limit && top.full) return this.searchMany(query);
    return out;
  }

  /**
   * Counts, per entry, the query tokens among its keywords and among its request tokens, walking
   * compiled postings (Int32Array of slots) once: the cost is the postings touched, not
   * entries × tokens, with no per-question allocation. Returns how many entries it touched (their
   * slots are the first ones in `touched`).
   */
  private countHits(tokens: readonly string[]): number {
    const kw = this.keywordCounts;
    const rq = this.requestCounts;
    const touched = this.touched;
    let nTouched = 0;
    for (const t of tokens) {
      const kp = this.inverted.get(t);
      if (kp) {
        const arr = postingArray(kp);
        for (let i = 0; i < arr.length; i += 1) {
          const slot = arr[i]!;
          if (kw[slot]!++ === 0) touched[nTouched++] = slot;
        }
      }
      const rp = this.requestInverted.get(t);
      if (rp) {
        const arr = postingArray(rp);
        for (let i = 0; i < arr.length; i += 1) rq[arr[i]!]!++;
      }
    }
    return nTouched;
  }

  /**
   * 1. Entries that may meet the substring / equality rule (the Bloom test says maybe) are scored
   * exactly; every other entry's score follows from numbers: hits, request hits, counts. The rest
   * are bucketed by keyword hits (a counting sort) into `ordered`, most first; returns how many.
   */
  private scoreExactAndOrder(q: QueryShape, nTouched: number, top: TopList): number {
    const { slotType, slotScope, slotReqCount, slotReqLen, slotBloom, touched, ordered } = this;
    const kw = this.keywordCounts;
    const rq = this.requestCounts;
    const qBloom = this.queryBloom;
    bigramBloom(q.qNorm, qBloom, 0);
    const levels = new Int32Array(q.qCount + 2);
    let nOrdered = 0;
    for (let i = 0; i < nTouched; i += 1) {
      const slot = touched[i]!;
      if (!(slotType[slot]! & q.typeMask) || (slotScope[slot] === 3 && !q.other)) continue;
      const maybeSubstring = slotReqLen[slot]! >= q.qLen ? bloomSubset(qBloom, 0, slotBloom, slot * 4) : bloomSubset(slotBloom, slot * 4, qBloom, 0);
      if (maybeSubstring) {
        const e = this.slots[slot]!;
        const found = rq[slot]!;
        const sim = requestSimilarityFromCounts(q.qNorm, q.qCount, e.reqNorm, slotReqCount[slot]!, found);
        const score = relevanceFromNumbers(kw[slot]! / q.qCount, sim, found > 0, slotScope[slot]!, slotType[slot]!, q.generic);
        if (score >= q.threshold) top.offer(e, score);
        continue;
      }
      levels[kw[slot]!]! += 1;
      nOrdered += 1;
    }
    for (let h = q.qCount, at = 0; h >= 1; h -= 1) {
      const n = levels[h]!;
      levels[h] = at;
      at += n;
    }
    for (let i = 0; i < nTouched; i += 1) {
      const slot = touched[i]!;
      if (!(slotType[slot]! & q.typeMask) || (slotScope[slot] === 3 && !q.other)) continue;
      const maybeSubstring = slotReqLen[slot]! >= q.qLen ? bloomSubset(qBloom, 0, slotBloom, slot * 4) : bloomSubset(slotBloom, slot * 4, qBloom, 0);
      if (!maybeSubstring) ordered[levels[kw[slot]!]!++] = slot;
    }
    return nOrdered;
  }

  /**
   * 2. The ordered entries by hits, most first. Request hits ≤ keyword hits (request tokens are
   * keywords), so the token ratio is ≤ hits / query tokens: once a level's best cannot reach the
   * threshold or the top, stop.
   */
  private scoreByHits(q: QueryShape, nOrdered: number, top: TopList): void {
    const { slotScope, slotType, slotReqCount, slotReqLen, ordered } = this;
    const kw = this.keywordCounts;
    const rq = this.requestCounts;
    for (let i = 0; i < nOrdered; i += 1) {
      const slot = ordered[i]!;
      const hits = kw[slot]!;
      const levelBound = relevanceFromNumbers(hits / q.qCount, hits / q.qCount, true, 0, 1, false);
      if (levelBound < q.threshold || top.shutsOut(levelBound)) break;
      const found = rq[slot]!;
      const reqCount = slotReqCount[slot]!;
      const denominator = q.qCount > reqCount ? q.qCount : reqCount;
      const sim = q.qLen && slotReqLen[slot] && denominator ? found / denominator : 0;
      const score = relevanceFromNumbers(hits / q.qCount, sim, found > 0, slotScope[slot]!, slotType[slot]!, q.generic);
      if (score < q.threshold || top.shutsOut(score)) continue;
      top.offer(this.slots[slot]!, score);
    }
  }

  /** The top list as matches, best first; a winner whose file is gone is dropped from the index. */
  private matchesOf(top: TopList, tokens: readonly string[], limit: number): { out: WikiMatch[]; dropped: boolean } {
    const out: WikiMatch[] = [];
    let dropped = false;
    for (const { e, score } of top.items) {
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
    return { out, dropped };
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
      const t = new Int32Array(this.keywordCounts.length);
      t.set(this.touched);
      this.touched = t;
      this.ordered = new Int32Array(this.keywordCounts.length);
      const widen = <T extends Uint8Array | Uint16Array | Uint32Array>(a: T, make: (n: number) => T, per = 1): T => {
        const b = make(this.keywordCounts.length * per);
        b.set(a);
        return b;
      };
      this.slotType = widen(this.slotType, (n) => new Uint8Array(n));
      this.slotScope = widen(this.slotScope, (n) => new Uint8Array(n));
      this.slotReqCount = widen(this.slotReqCount, (n) => new Uint16Array(n));
      this.slotReqLen = widen(this.slotReqLen, (n) => new Uint32Array(n));
      this.slotBloom = widen(this.slotBloom, (n) => new Uint32Array(n), 4);
    }
    const indexed: IndexedEntry = {
      slot, entry, reqNorm: normalizeMatchText(entry.request), reqTokens, keywords, scope: classifyScope(entry.tags, this.options.projectSlug) };
    this.byPath.set(entry.path, indexed);
    this.slots[slot] = indexed;
    this.slotType[slot] = TYPE_BIT[entry.type];
    this.slotScope[slot] = SCOPE_CODE[indexed.scope];
    this.slotReqCount[slot] = Math.min(reqTokens.size, 65_535);
    this.slotReqLen[slot] = indexed.reqNorm.length;
    bigramBloom(indexed.reqNorm, this.slotBloom, slot * 4);
    for (const t of keywords) addPosting(this.inverted, t, slot);
    for (const t of reqTokens) addPosting(this.requestInverted, t, slot);
  }

  private remove(path: string): void {
    const old = this.byPath.get(path);
    if (!old) return;
    this.byPath.delete(path);
    this.slots[old.slot] = undefined;
    this.freeSlots.push(old.slot);
    for (const t of old.keywords) removePosting(this.inverted, t, old.slot);
    for (const t of old.reqTokens) removePosting(this.requestInverted, t, old.slot);
  }
}
