/**
 * Scoring ahead of a reconcile, in slices that give the event loop a turn (why: scored.ts). The daemon calls
 * these before a synchronous operation that may reconcile (the review routes, the end of a run).
 */
import { setImmediate } from 'node:timers/promises';
import { loopSlices } from '../../../lib/loopSlices.js';
import type { LifecycleContext } from '../context.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import type { WorkflowRoot } from '../../format/root.js';
import { scoreMatches, type MatchCandidate, type PreparedCorpus } from './matcher.js';
import { associatedDocs } from './prepared.js';
import { freshness, readSourceState, sessionSources, tryReadReceipt, type Source, type SourceState } from './receipt.js';
import { scoreKey } from './scored.js';

/** How long one slice holds the event loop before it yields (a candidate is scored whole: about 2 ms at 10,000 documents). */
export const SCORE_SLICE_MS = 10;

export interface ScoreAheadOptions {
  /** The corpus as just read (read here otherwise). */
  corpus?: CorpusSnapshot;
  /** How long a slice holds the event loop (SCORE_SLICE_MS; a test gives 0: a turn between every two candidates). */
  sliceMs?: number;
}

/** Scores a source's candidates not scored yet, yielding to the event loop every `sliceMs`. */
export async function scoreStateAhead(lc: LifecycleContext, pc: PreparedCorpus, state: SourceState, sliceMs = SCORE_SLICE_MS): Promise<number> {
  const assoc = associatedDocs(pc, state.ledger?.inputs ?? []);
  const scorer = lc.semantic.scorer(pc, state.candidates);
  const opts = scorer ? { semantic: (x: Pick<MatchCandidate, 'content'>) => scorer.score(x) } : {};
  let scored = 0;
  const turn = loopSlices(sliceMs);
  for (const c of state.candidates) {
    await turn();
    const key = scoreKey(c, assoc, scorer);
    if (lc.scored.has(pc, key)) continue;
    lc.scored.set(pc, key, scoreMatches(c, pc, assoc, opts));
    scored++;
  }
  return scored;
}

/**
 * Scores ahead every source of `sources` whose receipt a reconcile would rebuild (missing, stale or unreadable);
 * answers how many candidates it scored. A source that does not read is left to the reconcile, which says why.
 */
export async function scoreSourcesAhead(lc: LifecycleContext, root: WorkflowRoot, sources: Source[], opts: ScoreAheadOptions = {}): Promise<number> {
  const corpus = opts.corpus ?? lc.corpus.read(root.workflowDir);
  // Preparing the documents (their tokens and postings) is sliced too: about a second for 10,000 new to the daemon.
  const pc = await lc.prepared.preparedForSliced(corpus.fingerprint, corpus.docs, opts.sliceMs ?? SCORE_SLICE_MS);
  let scored = 0;
  for (const src of sources) {
    let state: SourceState;
    try {
      state = readSourceState(src);
      const { receipt, corrupt } = tryReadReceipt(src);
      if (freshness(lc, src, receipt, state, corpus, corrupt).state === 'fresh') continue;
    } catch {
      continue;
    }
    scored += await scoreStateAhead(lc, pc, state, opts.sliceMs);
    await setImmediate(); // reading the next source's files is a slice of its own
  }
  return scored;
}

/** `scoreSourcesAhead` over every source of a session; a session that does not read is left to the operation that follows. */
export async function scoreSessionAhead(lc: LifecycleContext, root: WorkflowRoot, sid: string, opts: ScoreAheadOptions = {}): Promise<number> {
  let sources: Source[];
  try {
    sources = sessionSources(root, sid);
  } catch {
    return 0;
  }
  return scoreSourcesAhead(lc, root, sources, opts);
}
