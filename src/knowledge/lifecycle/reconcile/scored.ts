/**
 * Scoring ahead of a reconcile, in slices that give the event loop a turn.
 *
 * A reconcile scores every candidate against every corpus document: in
 * bench:knowledge about 0.5 ms a candidate at 1,000 documents and 2 ms at
 * 10,000, so within the ledger's caps (1,000 candidates) a synchronous
 * reconcile against 10,000 documents held the daemon's event loop about 2 s
 * (the bench prints the longest block: 100 candidates, 160-230 ms at once,
 * 15-35 ms in slices). The lifecycle operations are synchronous (the CLI,
 * promotion's lock), so the daemon scores first, asynchronously
 * (scoreAhead.ts), and the synchronous reconcile then finds each candidate's
 * matches done (`ScoredMatchCache`, here) and only decides. The semantic
 * vectors are warmed the same way (semantic.ts).
 *
 * Slices, not a worker thread: a worker needs the prepared corpus (postings of
 * every token and trigram) copied to it, 320-550 ms of the loop's time for one
 * structured clone at 10,000 documents (the bench prints it), or prepared
 * twice, and the semantic vectors with it; slices reuse both where they are,
 * and a result is the same function's result by construction. A cached result
 * is keyed by everything scoring reads (what each corpus document shows it,
 * the semantic revision, the associated documents, the candidate's target,
 * action, title and content), so a hit is what scoring would answer now and a
 * miss is scored as before.
 */
import { sha256 } from '../ledger/recipes.js';
import type { MatchCandidate, PreparedCorpus, ScoredMatches } from './matcher.js';
import type { SemanticScorer } from './semantic.js';

/** Scored candidates kept per corpus: a ledger holds at most 1,000; a result is a few KB (≤ 12 matches). */
const MAX_SCORED = 4000;
/** Corpora kept: the one just read and the one before (a review racing a change to the knowledge). */
const MAX_CORPORA = 2;

/** What scoring one candidate depends on besides the corpus. */
export function scoreKey(c: Pick<MatchCandidate, 'target' | 'action' | 'title' | 'content'>, assoc: Set<number>, scorer: SemanticScorer | null): string {
  return sha256([scorer?.revision ?? '', [...assoc].sort((a, b) => a - b).join(','), c.target, c.action, c.title, c.content].join('\0'));
}

/**
 * Candidates' matches scored ahead, per corpus, the newest kept. A corpus is known by what scoring reads of each
 * document, in order (id, target, title, content, file and line; the semantic vectors are of the content as written), not by the prepared object: a corpus read
 * again is a new object for the same documents (a file written in the last 50 ms is read again, corpusDocs.ts), and
 * the fingerprint alone leaves out the file and line a match names.
 */
export class ScoredMatchCache {
  private corpora = new Map<string, Map<string, ScoredMatches>>();
  private signatures = new WeakMap<PreparedCorpus, string>();
  /** How many candidates a reconcile found scored ahead (tests read it). */
  hits = 0;

  get(pc: PreparedCorpus, key: string): ScoredMatches | undefined {
    const got = this.corpora.get(this.signature(pc))?.get(key);
    if (got) this.hits++;
    return got;
  }

  has(pc: PreparedCorpus, key: string): boolean {
    return this.corpora.get(this.signature(pc))?.has(key) ?? false;
  }

  set(pc: PreparedCorpus, key: string, scored: ScoredMatches): void {
    const sig = this.signature(pc);
    let m = this.corpora.get(sig);
    if (!m) {
      this.corpora.set(sig, (m = new Map()));
      if (this.corpora.size > MAX_CORPORA) this.corpora.delete(this.corpora.keys().next().value!);
    }
    m.set(key, scored);
    if (m.size > MAX_SCORED) m.delete(m.keys().next().value!);
  }

  clear(): void {
    this.corpora = new Map();
    this.signatures = new WeakMap();
  }

  /** Once per prepared corpus (a hash of every document's text: a few ms at 10,000 documents). */
  private signature(pc: PreparedCorpus): string {
    let sig = this.signatures.get(pc);
    if (sig === undefined) {
      sig = sha256(JSON.stringify(pc.docs.map((d) => [d.id, d.target, d.title, d.content, d.source_path, d.source_line])));
      this.signatures.set(pc, sig);
    }
    return sig;
  }
}
