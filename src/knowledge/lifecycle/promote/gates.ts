/**
 * Two promotion gates (issue 16 item 6).
 *
 * 1. A stale receipt is refreshed by promote itself when the refresh leaves
 *    every candidate it would promote as the person reviewed it (same
 *    eligibility, same supersede target). The usual cause is promote's own earlier
 *    write (a successful promote, or one killed after its write): the corpus
 *    changed, so the receipt's fingerprint no longer matches, but nothing the
 *    review decided has. A missing receipt, a matcher change that a refresh
 *    cannot fix, or a changed disposition still fail closed.
 * 2. A spec candidate whose title equals an active spec entry's (with other
 *    content) would leave two active entries with one title; it is refused
 *    unless resolved as a supersede of that entry (or as a duplicate, which
 *    rejects it), as maestro-flow refuses it.
 */
import { MaestroError } from '../../../core/errors.js';
import type { CorpusDoc } from '../ledger/recipes.js';
import { normA } from '../ledger/recipes.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import type { LifecycleContext } from '../context.js';
import { reconcileSource, requireFresh, tryReadReceipt, type Receipt, type RefreshHint, type Source, type SourceState } from '../reconcile/receipt.js';
import type { WorkflowRoot } from '../../format/root.js';

export interface FreshForPromotion {
  receipt: Receipt;
  state: SourceState;
  /** Candidates whose reconciliation the self-refresh changed: not promoted (review them again). */
  changed: Set<string>;
}

/**
 * `requireFresh`, or — when the receipt is only stale — refresh it and go on if the candidates in
 * `ids` (null: all) kept their eligibility and supersede target. `resuming` candidates (an interrupted
 * promotion) are exempt: their own planned entry is what changed their match. `hint`: how a failure says to
 * refresh (the CLI's flag unless told).
 */
export function freshForPromotion(lc: LifecycleContext, root: WorkflowRoot, src: Source, corpus: CorpusSnapshot, ids: Set<string> | null, resuming: Set<string>, hint?: RefreshHint): FreshForPromotion {
  try {
    return { ...requireFresh(lc, root, src, corpus, hint), changed: new Set() };
  } catch (err) {
    if ((err as MaestroError).code !== 'STALE_RECEIPT') throw err;
    // Missing or unreadable (its STALE_RECEIPT says which): nothing to compare against, fail closed.
    const before = tryReadReceipt(src).receipt;
    if (!before) throw err;
    const after = reconcileSource(lc, root, src, { corpus });
    const fresh = requireFresh(lc, root, src, corpus, hint); // still stale (e.g. the matcher changed): fails closed here
    const changed = new Set<string>();
    for (const c of after.candidates) {
      if ((ids && !ids.has(c.candidate_id)) || resuming.has(c.candidate_id)) continue;
      const b = before.candidates.find((x) => x.candidate_id === c.candidate_id);
      if (!b || !samePromotion(b, c)) changed.add(c.candidate_id);
    }
    return { ...fresh, changed };
  }
}

/** What promotion acts on: eligibility, and what (if anything) the candidate supersedes. `unique` → `related` changes neither. */
function samePromotion(a: Receipt['candidates'][number], b: Receipt['candidates'][number]): boolean {
  const sup = (x: typeof a) => (x.disposition === 'supersede_candidate' ? x.canonical_id : null);
  return a.promotion_eligibility === b.promotion_eligibility && sup(a) === sup(b);
}

export function changedMessage(src: Source, ids: string[]): string {
  return `the reconciliation of ${ids.join(', ')} changed when ${src.rid === 'session' ? `session ${src.sid}` : `run ${src.rid}`}'s receipt was refreshed (the project knowledge changed since the review); review again: maestro knowledge review ${src.sid}`;
}

/** The active spec entry with the candidate's title and other content, unless it is what the candidate supersedes. */
export function titleClash(cand: { target: string; title: string; content: string }, docs: readonly CorpusDoc[], supersedes: string | null): CorpusDoc | null {
  if (cand.target !== 'spec') return null;
  const title = normA(cand.title);
  const content = normA(cand.content);
  const hit = docs.find((d) => d.target === 'spec' && normA(d.title) === title && normA(d.content) !== content);
  if (!hit || (supersedes && (hit.id === supersedes || hit.aliases.includes(supersedes)))) return null;
  return hit;
}

export function clashMessage(candidateId: string, hit: CorpusDoc, sid: string): string {
  return `${candidateId} has the title of active spec ${hit.id} ("${hit.title}", ${hit.source_path}) with other content; promoting it would leave two active entries with one title. Resolve it first: maestro knowledge review ${sid} --resolve ${candidateId} --as supersede --target ${hit.id} --reason "<why>" (or --as duplicate)`;
}
