/**
 * Scoring ahead of a reconcile, in slices that give the event loop a turn.
 *
 * A reconcile scores every candidate against every corpus document: about
 * 2 ms a candidate at 1,000 documents, so within the ledger's caps (1,000
 * candidates) against 10,000 documents a synchronous reconcile held the
 * daemon's event loop for seconds (bench:knowledge prints the longest block).
 * The lifecycle operations are synchronous (the CLI, promotion's lock), so the
 * daemon scores first, here, asynchronously, and the synchronous reconcile
 * then finds each candidate's matches done (`ScoredMatchCache`, here) and only
 * decides; the scoring ahead is scoreAhead.ts. The semantic vectors are warmed the same way (semantic.ts).
 *
 * Slices, not a worker thread: a worker needs the prepared corpus (postings of
 * every token and trigram) copied to it, or prepared twice, and the semantic
 * vectors with it; slices reuse both where they are, and a result is the same
 * function's result by construction. A cached result is keyed by everything
 * scoring reads (the prepared corpus object, the semantic revision, the
 * associated documents, the candidate's target, action, title and content), so
 * a hit is what scoring would answer now and a miss is scored as before.
 */
import { sha256 } from '../ledger/recipes.js';
import type { MatchCandidate, PreparedCorpus, ScoredMatches } from './matcher.js';
import type { SemanticScorer } from './semantic.js';

/** Scored candidates kept per prepared corpus: a ledger holds at most 1,000; a result is a few KB (≤ 12 matches). */
const MAX_SCORED = 4000;

/** What scoring one candidate depends on besides the prepared corpus. */
export function scoreKey(c: Pick<MatchCandidate, 'target' | 'action' | 'title' | 'content'>, assoc: Set<number>, scorer: SemanticScorer | null): string {
  return sha256([scorer?.revision ?? '', [...assoc].sort((a, b) => a - b).join(','), c.target, c.action, c.title, c.content].join('\0'));
}

/** Candidates' matches scored ahead, per prepared corpus (dropped with it), newest kept. */
export class ScoredMatchCache {
  private byCorpus = new WeakMap<PreparedCorpus, Map<string, ScoredMatches>>();
  /** How many candidates a reconcile found scored ahead (tests read it). */
  hits = 0;

  get(pc: PreparedCorpus, key: string): ScoredMatches | undefined {
    const got = this.byCorpus.get(pc)?.get(key);
    if (got) this.hits++;
    return got;
  }

  has(pc: PreparedCorpus, key: string): boolean {
    return this.byCorpus.get(pc)?.has(key) ?? false;
  }

  set(pc: PreparedCorpus, key: string, scored: ScoredMatches): void {
    let m = this.byCorpus.get(pc);
    if (!m) this.byCorpus.set(pc, (m = new Map()));
    m.set(key, scored);
    if (m.size > MAX_SCORED) m.delete(m.keys().next().value!);
  }

  clear(): void {
    this.byCorpus = new WeakMap();
  }
}
