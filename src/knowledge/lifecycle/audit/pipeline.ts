/**
 * The audit's pipeline half (scope `all`): the sessions under `.workflow/sessions/`, their ledgers, the
 * promotion backlog, what was consumed, and which entries fresh pending candidates target.
 */
import { existsSync } from 'node:fs';
import { readLedger } from '../ledger/ledger.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import { isMaestroError } from '../../../core/errors.js';
import { freshness, readSourceState, scanSessionSources, tryReadReceipt, type Source } from '../reconcile/receipt.js';
import { scanSessions } from '../session/store.js';
import type { AuditContext, AuditResult } from './context.js';

export type PipelineCounts = AuditResult['pipeline'];

/** Pipeline: sessions, ledgers, backlog (only for scope `all`). Also returns consumption counts and which entries fresh pending candidates target. */
export function auditPipeline(ctx: AuditContext): { pipeline: PipelineCounts; consumed: Map<string, number>; pendingTargets: Map<string, string[]> } {
  const pipeline: PipelineCounts = { sessions: 0, ledgers: 0, pending_observed: 0, pending_corroborated: 0, promoted: 0 };
  const consumed = new Map<string, number>();
  const pendingIn = new Map<string, number>();
  const pendingTargets = new Map<string, string[]>();
  if (ctx.scope !== 'all') return { pipeline, consumed, pendingTargets };
  const { root, add } = ctx;
  // What `maestro session list` names as not listed, with why: a session folder linked out of .workflow/ too.
  const scan = scanSessions(root);
  for (const u of scan.unreadable) add('pipeline', 'P1', 'invalid-session-authority', `sessions/${u.session_id}`, `session.json missing or unreadable: ${u.error}`, 'review');
  const good = new Set(scan.sessions.map((s) => s.session_id));
  const corpus = ctx.lc.corpus.read(root.workflowDir);
  for (const sid of good) {
    pipeline.sessions++;
    for (const src of readableSources(ctx, sid)) auditSource(ctx, sid, src, corpus, { pipeline, consumed, pendingIn, pendingTargets });
  }
  for (const [id, n] of pendingIn) {
    if (n > 1) {
      pipeline.pending_corroborated++;
      add('pipeline', 'P2', 'corroborated-promotion-backlog', id, `pending in ${n} ledgers`, 'review');
    } else pipeline.pending_observed++;
  }
  return { pipeline, consumed, pendingTargets };
}

/**
 * The session's sources the audit may read. A run folder a link sends out of `.workflow/` and the orchestrator's
 * run folder (a repository can plant one) is a finding naming the session, the run and the link, and the
 * session's other ledgers are audited; a session whose own folders link out is one finding, and the other
 * sessions are audited.
 */
function readableSources(ctx: AuditContext, sid: string): Source[] {
  let scan: ReturnType<typeof scanSessionSources>;
  try {
    scan = scanSessionSources(ctx.root, sid);
  } catch (err) {
    if (!isMaestroError(err)) throw err;
    ctx.add('pipeline', 'P1', 'invalid-session-authority', `sessions/${sid}`, err.message, 'review');
    return [];
  }
  for (const { rid, error } of scan.outside) ctx.add('pipeline', 'P1', 'invalid-session-authority', `sessions/${sid}/runs/${rid}`, error.message, 'review');
  return scan.sources;
}

/** One run's ledger: consumption, promoted and pending candidates, and what the pending ones target when the receipt is fresh. */
function auditSource(
  ctx: AuditContext,
  sid: string,
  src: Source,
  corpus: CorpusSnapshot,
  acc: { pipeline: PipelineCounts; consumed: Map<string, number>; pendingIn: Map<string, number>; pendingTargets: Map<string, string[]> },
): void {
  const { add, rel } = ctx;
  const { pipeline, consumed, pendingIn, pendingTargets } = acc;
  if (!existsSync(src.ledgerPath)) return;
  let ledger;
  try {
    ledger = readLedger(src.ledgerPath)!;
  } catch (err) {
    add('pipeline', 'P1', 'invalid-knowledge-ledger', rel(src.ledgerPath), (err as Error).message, 'review');
    return;
  }
  pipeline.ledgers++;
  for (const i of ledger.inputs) if (i.signal === 'consumed') consumed.set(i.knowledge_id, (consumed.get(i.knowledge_id) ?? 0) + i.count);
  let state;
  try {
    state = readSourceState(src);
  } catch (err) {
    // A corrupt promotion receipt or report: its candidates cannot be counted as promoted or pending.
    add('pipeline', 'P1', 'invalid-run-file', rel(src.dir), (err as Error).message, 'review');
    return;
  }
  const { receipt, corrupt } = tryReadReceipt(src);
  if (corrupt) add('pipeline', 'P2', 'invalid-reconciliation-receipt', rel(src.receiptPath), corrupt.message, 'review');
  const fresh = freshness(ctx.lc, src, receipt, state, corpus, corrupt).state === 'fresh';
  for (const cand of ledger.candidates) {
    const promotedNow = !state.candidates.some((x) => x.candidate_id === cand.candidate_id) && cand.status !== 'rejected';
    if (cand.status === 'promoted' || promotedNow) {
      pipeline.promoted++;
      continue;
    }
    if (cand.status !== 'pending') continue;
    pendingIn.set(cand.candidate_id, (pendingIn.get(cand.candidate_id) ?? 0) + 1);
    const r = receipt?.candidates.find((x) => x.candidate_id === cand.candidate_id);
    if (fresh && r) for (const m of r.matches) pendingTargets.set(m.knowledge_id, [...(pendingTargets.get(m.knowledge_id) ?? []), `${cand.candidate_id} (${sid}/${src.rid})`]);
  }
}
