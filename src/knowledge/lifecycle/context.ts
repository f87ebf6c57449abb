/**
 * What the lifecycle operations (review, reconcile, promote, audit, the
 * session ops, the orchestrator bridge) keep between calls, passed to each
 * as its first argument (graphile-worker style: dependencies passed in, no
 * module-level caches):
 *
 * - `corpus`: the reconciliation corpus per workflow folder, with its file
 *   watchers in a long-lived process (ledger/corpusDocs.ts);
 * - `semantic`: the embedder of the semantic signal and its warmed vectors
 *   (reconcile/semantic.ts);
 * - `prepared`: the interned keys of prepared corpora and the last one
 *   prepared (reconcile/prepared.ts);
 * - `scored`: candidates' matches scored ahead of a reconcile, off the
 *   synchronous path (reconcile/scored.ts).
 *
 * The KnowledgeService builds one in start() and closes it in stop(); a test
 * or a one-shot caller builds its own with `createLifecycleContext`.
 */
import { CorpusCache } from './ledger/corpusDocs.js';
import { CorpusPreparer } from './reconcile/prepared.js';
import { ScoredMatchCache } from './reconcile/scored.js';
import { SemanticVectors } from './reconcile/semantic.js';
import type { Embedder } from '../vectors/vector.js';

export interface LifecycleContext {
  readonly corpus: CorpusCache;
  readonly semantic: SemanticVectors;
  readonly prepared: CorpusPreparer;
  readonly scored: ScoredMatchCache;
}

export interface LifecycleContextOptions {
  /** The semantic signal's embedder: null for none, or a getter (the service's, resolved on first use; it may throw while the setting is bad). */
  embedder: Embedder | null | (() => Embedder | null);
  /** From how many files a watched corpus asks its watcher (CorpusCache; WATCH_FROM_FILES unless given). */
  watchFromFiles?: number;
}

export function createLifecycleContext(opts: LifecycleContextOptions): LifecycleContext {
  const e = opts.embedder;
  return { corpus: new CorpusCache({ watchFromFiles: opts.watchFromFiles }), semantic: new SemanticVectors(typeof e === 'function' ? e : () => e), prepared: new CorpusPreparer(), scored: new ScoredMatchCache() };
}

/** Stops the context's watchers and drops what it cached; the promise settles once the watcher threads have exited. */
export async function closeLifecycleContext(lc: LifecycleContext): Promise<void> {
  lc.semantic.clear();
  lc.prepared.clear();
  lc.scored.clear();
  await lc.corpus.close();
}
