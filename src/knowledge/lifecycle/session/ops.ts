/**
 * The session/run lifecycle operations behind the CLI and the orchestrator
 * bridge: complete, check, seal (stage and record, ledgerWrites.ts, are
 * re-exported here for their callers). Each checks that the run is not sealed
 * before it writes anything.
 */
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import type { LifecycleContext } from '../context.js';
import { ledgerUpdate, readLedger, stageInto } from '../ledger/ledger.js';
import { writtenNow, writtenOffLoop, type FileWrite } from '../../format/atomic.js';
import { withCorpusLock, withCorpusLockAsync } from '../../format/lock.js';
import type { WorkflowRoot } from '../../format/root.js';
import { readReceipt, readSourceState, reconciledReceipt, reconcileSource, runSource, runSourceInside, sessionSource, sessionSources, type Receipt, type Source } from '../reconcile/receipt.js';
import { promotedIds } from '../promote/promotion.js';
import { initLedger } from './ledgerWrites.js';
import { parseReport, readReportFile, reportDrafts } from './report.js';
import { assertRunRewritable, assertSessionRewritable, assertWritableRun, isSealed, readRun, readSession, releaseActiveRun, runWrite, sessionWrite, storeLock, storeLockTarget, writeRun, writeSession, type RunDoc, type SessionDoc } from './store.js';

export { ledgerSourceFor, record, recordConsumed, resolveKnowledgeIds, stage, type ConsumedRecord, type StageOptions } from './ledgerWrites.js';

const nowIso = () => new Date().toISOString();

const VERDICT: Record<string, RunDoc['verdict']> = { ready: 'done', ready_with_concerns: 'done_with_concerns', blocked: 'blocked', failed: 'needs_retry' };

export interface CompleteResult {
  run: RunDoc;
  candidate_ids: string[];
  reconciliation: Receipt['counts'] & { receipt: string };
}

/** Stages the report's accepted decisions and locked constraints (pending), reconciles; never promotes. */
export function completeRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): CompleteResult {
  const src = runSourceInside(root, sid, rid); // before run.json is read through the run folder
  assertWritableRun(root, sid, rid); // an unknown run is refused before the lock makes a file in its folder
  // run.json read, completed and written under the store's lock, as a run's end and run creation write it; its ledger under its own.
  const run = storeLock(root, () => {
    const r = assertWritableRun(root, sid, rid);
    if (r.status !== 'completed') {
      assertRunRewritable(root, r);
      withCorpusLock([src.ledgerPath], () => writtenNow(stagedReport(r, src)));
      writeRun(root, r);
    }
    return r;
  });
  return completeResult(run, src, reconcileSource(lc, root, src));
}

/**
 * Stages the run's report into its ledger (yields the ledger's write; the caller holds its lock) and fills in how
 * the run ended; the caller writes the run.
 */
function* stagedReport(run: RunDoc, src: Source): Generator<FileWrite, void, void> {
  const reportPath = join(src.dir, 'report.md');
  const report = readReportFile(reportPath) ?? parseReport('');
  const drafts = reportDrafts(report, run.run_id);
  yield* ledgerUpdate(src.ledgerPath, initLedger(src), (l) => {
    const now = nowIso();
    for (const d of drafts) if (!l.candidates.some((c) => c.candidate_id === d.candidate_id)) stageInto(l, d, now, src.ledgerPath);
  });
  run.status = 'completed';
  run.verdict = VERDICT[report.verdict] ?? null;
  run.summary = report.summary || null;
  run.ended_at = nowIso();
}

function completeResult(run: RunDoc, src: Source, receipt: Receipt): CompleteResult {
  return { run, candidate_ids: receipt.candidates.map((c) => c.candidate_id), reconciliation: { ...receipt.counts, receipt: src.receiptPath } };
}

export function checkRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): { receipt: Receipt; warnings: string[] } {
  const src = runSourceInside(root, sid, rid);
  const run = readRun(root, sid, rid);
  const receipt = isSealed(run) ? (readReceipt(src) ?? reconcileSourceReadOnly(root, src)) : reconcileSource(lc, root, src);
  const warnings: string[] = [];
  const state = readSourceState(src);
  if (!state.ledger?.inputs.length) warnings.push('no knowledge inputs recorded (maestro knowledge record <ids> --signal …)');
  const reportPath = join(src.dir, 'report.md');
  const report = readReportFile(reportPath);
  if (!report || !report.summary) warnings.push('report.md has no summary/verdict yet');
  if (receipt.counts.review_required) warnings.push(`${receipt.counts.review_required} candidate(s) need review (maestro knowledge review ${sid})`);
  return { receipt, warnings };
}

function reconcileSourceReadOnly(root: WorkflowRoot, src: Source): Receipt {
  throw new MaestroError('RUN_SEALED', `Run ${src.rid} is sealed and has no receipt; sealed runs are not rewritten.`);
}

/**
 * Applies automatic suppression (exact duplicates → rejected) from a fresh receipt: yields the ledger's write (the
 * caller holds its lock) and gives how many it rejected.
 */
function* suppressedExact(src: Source, receipt: Receipt | null): Generator<FileWrite, number, void> {
  if (!receipt) return 0;
  const ids = new Set(receipt.candidates.filter((c) => c.disposition === 'exact_duplicate' && c.promotion_eligibility === 'suppressed').map((c) => c.candidate_id));
  if (!ids.size || !readLedger(src.ledgerPath)) return 0;
  return yield* ledgerUpdate(src.ledgerPath, initLedger(src), (l) => {
    let n = 0;
    for (const c of l.candidates) if (c.status === 'pending' && ids.has(c.candidate_id)) {
      c.status = 'rejected';
      n++;
    }
    return n;
  });
}

export function sealRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): { run: RunDoc; suppressed: number; pending: number } {
  const before = readRun(root, sid, rid);
  if (isSealed(before)) return { run: before, suppressed: 0, pending: pendingOf(runSource(root, sid, rid)) };
  return withCorpusLock(runEndLocks(root, sid, rid), () => {
    const run = readRun(root, sid, rid); // again, under the locks: another process may have sealed it meanwhile
    if (isSealed(run)) return { run, suppressed: 0, pending: pendingOf(runSource(root, sid, rid)) };
    const { src, suppressed } = writtenNow(completeAndSeal(lc, root, run));
    return { run, suppressed, pending: pendingOf(src) };
  });
}

type Finished = CompleteResult & { suppressed: number };

/**
 * The orchestrator's end of a run (bridge.ts): complete and seal in one pass, with one reconciliation and
 * one write of run.json (complete then seal reconciled twice and wrote the run and its receipt twice).
 * Null when the run is sealed already, before the call or by another process while this one waited for the locks
 * (`maestro run seal`): nothing to finish. An unknown run is refused before the locks make a file in its folder.
 */
export function finishRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Finished | null {
  if (isSealed(readRun(root, sid, rid))) return null;
  return withCorpusLock(runEndLocks(root, sid, rid), () => {
    const run = readRun(root, sid, rid); // again, under the locks
    if (isSealed(run)) return null;
    const { src, receipt, suppressed } = writtenNow(completeAndSeal(lc, root, run));
    return { ...completeResult(run, src, receipt), suppressed };
  });
}

/**
 * finishRun for the daemon: the same files in the same order, each write's fsyncs awaited in libuv's threadpool
 * (format/atomic.ts writeFileAtomicOffLoop), and its locks awaited without blocking the event loop. The receipt,
 * run.json and session.json were 6 of a run's 16 fsyncs on the daemon's event loop (bench:daemon, 4 workers,
 * 2026-12); the ledger's (the report staged) 2 more. The locks are held across the awaits
 * (lock.ts withCorpusLockAsync): other processes wait; this process's other work runs between the writes, and a
 * reader or writer of one of them here finishes its write first (store.ts, receipt.ts, ledger.ts settleWrite).
 */
export async function finishRunOffLoop(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Promise<Finished | null> {
  if (isSealed(readRun(root, sid, rid))) return null;
  return withCorpusLockAsync(runEndLocks(root, sid, rid), async () => {
    const run = readRun(root, sid, rid); // again, under the locks: a CLI may have sealed it while this waited for them
    if (isSealed(run)) return null;
    const { src, receipt, suppressed } = await writtenOffLoop(completeAndSeal(lc, root, run));
    return { ...completeResult(run, src, receipt), suppressed };
  });
}

/**
 * The locks a run's end holds from its read of run.json to its last rename: the store's (run.json, session.json and
 * `.active-run`, as run creation holds it: store.ts storeLock), the run's receipt's (as a refresh or a resolution
 * holds it: receipt.ts reconcileSource) and its ledger's (as a stage or a record holds it, ledger.ts updateLedger:
 * one that waited for the seal is refused, ledgerWrites.ts assertStillWritable, so what the receipt covers is what the sealed
 * ledger holds). Taken after the run is known to exist, so an unknown run gets no folder. In sorted order; and a
 * process takes the locks of one `.workflow/` only while it holds that folder's kernel lock (format/lock.ts), so no
 * two processes hold them in opposite orders.
 */
export function runEndLocks(root: WorkflowRoot, sid: string, rid: string): string[] {
  const src = runSourceInside(root, sid, rid);
  return [storeLockTarget(root), src.ledgerPath, src.receiptPath];
}

type Sealed = { src: Source; receipt: Receipt; suppressed: number };

/**
 * Completes an unsealed run if it is not yet, reconciles, suppresses exact duplicates, seals it and takes it off the
 * session's active runs. Yields its writes for its caller to do (now or off the loop) before it goes on: the ledger
 * (the report staged), the receipt, the ledger again (exact duplicates suppressed), run.json and session.json, each
 * only when it changes; `.active-run` is cleared here. The caller holds `runEndLocks` throughout (the ledger's lock
 * among them), and read `run` under them.
 */
function* completeAndSeal(lc: LifecycleContext, root: WorkflowRoot, run: RunDoc): Generator<FileWrite, Sealed, void> {
  assertRunRewritable(root, run);
  assertSessionRewritable(root, readSession(root, run.session_id));
  const src = runSourceInside(root, run.session_id, run.run_id);
  if (run.status !== 'completed') yield* stagedReport(run, src);
  const { receipt, write } = reconciledReceipt(lc, root, src);
  yield write;
  const suppressed = yield* suppressedExact(src, receipt);
  run.status = 'sealed';
  run.sealed_at = nowIso();
  yield runWrite(root, run);
  const s = readSession(root, run.session_id);
  s.active_run_ids = s.active_run_ids.filter((x) => x !== run.run_id);
  s.activity_revision += 1;
  yield sessionWrite(root, s);
  releaseActiveRun(root, run.session_id, run.run_id);
  return { src, receipt, suppressed };
}

/** Pending candidates of one source; throws (CORRUPT_FILE) when its ledger or promotion receipt is unreadable. */
function pendingOf(src: Source): number {
  const done = promotedIds(src.dir); // run ledgers are sealed: their promotions are in knowledge-promotion.json
  return (readLedger(src.ledgerPath)?.candidates ?? []).filter((c) => (c.status === 'pending' || c.status === 'promoting') && !done.has(c.candidate_id)).length;
}

/**
 * Seals the session: reports the backlog, never drops a candidate. A source whose files are unreadable
 * is listed in `unreadable` (its candidates cannot be counted), not counted as an empty backlog.
 */
export function sealSession(lc: LifecycleContext, root: WorkflowRoot, sid: string): { session: SessionDoc; backlog: number; unsealed_runs: string[]; unreadable: Array<{ run_id: string; error: string }> } {
  readSession(root, sid); // an unknown session is refused before the lock
  return withCorpusLock([storeLockTarget(root), sessionSource(root, sid).ledgerPath], () => sealSessionLocked(lc, root, sid));
}

/**
 * sealSession under the store's lock and the session ledger's: session.json is read, sealed and written with no other
 * process's write between, and a stage into the session's ledger that waited for it is refused (ledgerWrites.ts assertStillWritable).
 */
function sealSessionLocked(lc: LifecycleContext, root: WorkflowRoot, sid: string): ReturnType<typeof sealSession> {
  const s = readSession(root, sid);
  if (s.status === 'open') assertSessionRewritable(root, s);
  const sources = sessionSources(root, sid);
  const unsealed = sources.filter((x) => x.rid !== 'session' && !isSealed(readRun(root, sid, x.rid))).map((x) => x.rid);
  const ss = sessionSource(root, sid);
  if (readLedger(ss.ledgerPath)) writtenNow(suppressedExact(ss, reconcileSource(lc, root, ss)));
  const unreadable: Array<{ run_id: string; error: string }> = [];
  let backlog = 0;
  for (const x of sources) {
    try {
      backlog += pendingOf(x);
    } catch (err) {
      unreadable.push({ run_id: x.rid, error: (err as Error).message });
    }
  }
  if (s.status === 'open') {
    s.status = 'completed';
    s.completed_at = nowIso();
    s.active_run_ids = [];
    s.activity_revision += 1;
    writeSession(root, s);
  }
  return { session: s, backlog, unsealed_runs: unsealed, unreadable };
}
