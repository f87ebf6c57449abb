/**
 * The session/run lifecycle operations behind the CLI and the orchestrator
 * bridge: stage, record, complete, check, seal. Each checks that the run is
 * not sealed before it writes anything.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMaestroError, MaestroError } from '../../../core/errors.js';
import { openKnowledge } from '../../knowledge.js';
import { readCorpus } from '../ledger/corpusDocs.js';
import type { LifecycleContext } from '../context.js';
import { candidateId } from '../ledger/recipes.js';
import { emptyLedger, readLedger, recordInto, stageInto, updateLedger, type Action, type InputSource, type Ledger, type LedgerCandidate, type Signal, type SourceKind } from '../ledger/ledger.js';
import { writtenNow, writtenOffLoop, type FileWrite } from '../../format/atomic.js';
import { withCorpusLock, withCorpusLockAsync } from '../../format/lock.js';
import type { WorkflowRoot } from '../../format/root.js';
import { readReceipt, readSourceState, reconciledReceipt, reconcileSource, runSource, runSourceInside, sessionSource, sessionSources, type Receipt, type Source } from '../reconcile/receipt.js';
import { promotedIds } from '../promote/promotion.js';
import { parseReport, readReportFile, reportDrafts } from './report.js';
import { activeRun, assertRunRewritable, assertSessionInside, assertSourceInside, assertSessionRewritable, assertWritableRun, isSealed, listRunIds, readRun, readRunFile, readSession, releaseActiveRun, runFolderOutside, runWrite, sessionWrite, storeLock, storeLockTarget, writeRun, writeSession, type RunDoc, type SessionDoc } from './store.js';

const nowIso = () => new Date().toISOString();

/**
 * Resolves knowledge ids: the reconciliation corpus first, then every alias Knowledge I knows. Unknown ids
 * are refused. Read without a cache: only one-shot callers (a CLI command, an MCP tool call) stage or record.
 */
export function resolveKnowledgeIds(root: WorkflowRoot, ids: string[], env: NodeJS.ProcessEnv): string[] {
  const docs = readCorpus(root.workflowDir).docs;
  const byAlias = new Map<string, string>();
  for (const d of docs) for (const a of [d.id, ...d.aliases]) byAlias.set(a, d.id);
  let k: ReturnType<typeof openKnowledge> | null = null;
  try {
    const unknown: string[] = [];
    const out = ids.map((id) => {
      const hit = byAlias.get(id);
      if (hit) return hit;
      k ??= openKnowledge(root.confined ? { workflowRoot: root.workflowDir, env } : { cwd: root.projectDir, env });
      const r = k.resolveId(id);
      if (!r) unknown.push(id);
      return r ?? id;
    });
    if (unknown.length) throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `Unknown knowledge id${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (not in ${root.workflowDir}; find ids with maestro search or maestro load --list).`);
    return out;
  } finally {
    (k as ReturnType<typeof openKnowledge> | null)?.close();
  }
}

/** Where a stage/record writes: the given run, the session ledger, or the active run. */
export function ledgerSourceFor(root: WorkflowRoot, opts: { run?: string; session?: string }, env: NodeJS.ProcessEnv): Source {
  const src = ledgerSourceOf(root, opts, env);
  assertSessionInside(root, src.sid);
  return src;
}

function ledgerSourceOf(root: WorkflowRoot, opts: { run?: string; session?: string }, env: NodeJS.ProcessEnv): Source {
  if (opts.run) return writableRunSource(root, opts.session ?? findSessionOfRun(root, opts.run, env), opts.run);
  if (opts.session) {
    assertSessionOpen(readSession(root, opts.session));
    return sessionSource(root, opts.session);
  }
  const a = activeRun(root, env);
  if (!a) throw new MaestroError('BAD_INPUT', 'No run given and no active run: pass --run <id> --session <id>, or --session <id> for the session ledger.');
  return writableRunSource(root, a.sid, a.rid);
}

/**
 * A run's ledger to stage or record into: its folder, when a link, must lead into `.workflow/`, the orchestrator's
 * run folder or this process's own run folder (store.ts `runFolderOutside`), checked before its run.json is read
 * through it; then the run must not be sealed.
 */
function writableRunSource(root: WorkflowRoot, sid: string, rid: string): Source {
  assertSourceInside(root, sid, rid, 'write');
  assertWritableRun(root, sid, rid);
  return runSource(root, sid, rid);
}

function assertSessionOpen(s: SessionDoc): void {
  if (s.status !== 'open') throw new MaestroError('ILLEGAL_TRANSITION', `Session ${s.session_id} is ${s.status}; its ledger takes no new records.`);
}

function findSessionOfRun(root: WorkflowRoot, rid: string, env: NodeJS.ProcessEnv): string {
  const a = activeRun(root, env);
  if (a && a.rid === rid) return a.sid;
  throw new MaestroError('BAD_INPUT', `--run ${rid} needs --session <id> (the run is not the active run).`);
}

function init(src: Source) {
  return () => emptyLedger(src.sid, src.rid === 'session' ? null : src.rid, nowIso());
}

export interface StageOptions {
  target: 'spec' | 'knowhow';
  title: string;
  content: string;
  action?: Action;
  category?: string | null;
  evidence?: string[];
  signal?: Signal;
  signalIds?: string[];
  run?: string;
  session?: string;
}

export function stage(root: WorkflowRoot, o: StageOptions, env: NodeJS.ProcessEnv): { candidate: LedgerCandidate; ledger: string; recorded: string[] } {
  if (o.target !== 'spec' && o.target !== 'knowhow') throw new MaestroError('BAD_INPUT', `stage target must be spec|knowhow (got ${o.target}).`);
  const action = o.action ?? 'propose';
  if (!['propose', 'reaffirm', 'supersede', 'contest'].includes(action)) throw new MaestroError('BAD_INPUT', `--action must be propose|reaffirm|supersede|contest (got ${action}).`);
  if (o.signal && !['consumed', 'cited', 'validated', 'contradicted'].includes(o.signal)) throw new MaestroError('BAD_INPUT', `--signal must be consumed|cited|validated|contradicted (got ${o.signal}).`);
  const src = ledgerSourceFor(root, o, env);
  // Validate everything before the first write: unknown ids change nothing.
  const ids = o.signal && o.signalIds?.length ? resolveKnowledgeIds(root, o.signalIds, env) : [];
  const origin = src.rid === 'session' ? `session:${src.sid}` : `run:${src.rid}`;
  const evidence = [origin, ...(o.evidence ?? [])];
  refuseConflictingRestage(root, src, candidateId(o.target, o.content.trim()), action);
  return updateLedger(src.ledgerPath, init(src), (l) => {
    assertStillWritable(root, src);
    const now = nowIso();
    const candidate = stageInto(l, { target: o.target, action, title: o.title, content: o.content, category: o.category ?? null, source_kind: 'manual' as SourceKind, evidence_refs: evidence }, now, src.ledgerPath);
    for (const id of ids) recordInto(l, id, o.signal!, 'manual', o.evidence ?? [], now);
    return { candidate: { ...candidate }, ledger: src.ledgerPath, recorded: ids };
  });
}

/**
 * Seed 000 §3.2: one candidate (one content) cannot be proposed in one run of a session and contested
 * or superseded in another. The same ledger already refuses it (stageInto); this checks the session's
 * other ledgers. Unreadable ledgers are skipped here, and run folders that link out of bounds are not read
 * (runFolderOutside): review reports both. An agent's CLI does not know the daemon's home (its MAESTRO_HOME
 * is withheld), so the other runs of a daemon with another home are skipped rather than failing its stage.
 */
function refuseConflictingRestage(root: WorkflowRoot, src: Source, id: string, action: Action): void {
  const others = [sessionSource(root, src.sid), ...listRunIds(root, src.sid).filter((rid) => !runFolderOutside(root, src.sid, rid)).map((rid) => runSource(root, src.sid, rid))];
  for (const other of others) {
    if (other.rid === src.rid) continue;
    let ledger;
    try {
      ledger = readLedger(other.ledgerPath);
    } catch {
      continue;
    }
    const c = ledger?.candidates.find((x) => x.candidate_id === id);
    if (c && c.action !== action)
      throw new MaestroError('KNOWLEDGE_CONFLICT', `Candidate ${id} is staged with action ${c.action} in ${other.rid === 'session' ? `the ledger of session ${src.sid}` : `run ${other.rid}`} (${other.ledgerPath}); identical content cannot be restaged as ${action} in another run of the same session.`);
  }
}

export function record(root: WorkflowRoot, ids: string[], o: { signal?: Signal; source?: InputSource; evidence?: string[]; run?: string; session?: string }, env: NodeJS.ProcessEnv): { ledger: string; recorded: string[] } {
  if (!ids.length) throw new MaestroError('BAD_INPUT', 'record needs at least one knowledge id.');
  const signal = o.signal ?? 'cited';
  const source = o.source ?? 'manual';
  if (!['consumed', 'cited', 'validated', 'contradicted'].includes(signal)) throw new MaestroError('BAD_INPUT', `--signal must be consumed|cited|validated|contradicted (got ${signal}).`);
  if (!['load', 'search', 'injection', 'manual'].includes(source)) throw new MaestroError('BAD_INPUT', `--source must be load|search|injection|manual (got ${source}).`);
  const src = ledgerSourceFor(root, o, env);
  const resolved = resolveKnowledgeIds(root, ids, env);
  updateLedger(src.ledgerPath, init(src), (l) => {
    assertStillWritable(root, src);
    const now = nowIso();
    for (const id of resolved) recordInto(l, id, signal, source, o.evidence ?? [], now);
  });
  return { ledger: src.ledgerPath, recorded: resolved };
}

/** What an explicit load recorded; `warning` says why a load in a run was not recorded, naming the file. */
export interface ConsumedRecord {
  recorded: boolean;
  warning: string | null;
}

/**
 * `maestro load` in an active run: records `consumed` (source load). Search and injection never call this.
 * No active run, or a sealed one: nothing is written. A run.json or ledger that does not read: nothing is
 * written either, and the warning names the file; the load itself answers all the same (the record is the
 * run's bookkeeping, and an agent that cannot read knowledge over it could not fix the file anyway).
 */
export function recordConsumed(root: WorkflowRoot, ids: string[], env: NodeJS.ProcessEnv): ConsumedRecord {
  if (!ids.length) return { recorded: false, warning: null };
  try {
    const target = consumingRun(root, env);
    if (!target) return { recorded: false, warning: null };
    const run = readRunFile(target.runFile);
    if (isSealed(run)) return { recorded: false, warning: null };
    // Read again under the ledger's lock: a run's end holds it until the run is sealed (runEndLocks).
    const recorded = updateLedger(target.ledgerPath, () => target.init(run), (l) => {
      if (isSealed(readRunFile(target.runFile))) return false;
      const now = nowIso();
      for (const id of ids) recordInto(l, id, 'consumed', 'load', [], now);
      return true;
    });
    return { recorded, warning: null };
  } catch (err) {
    if (!isMaestroError(err)) throw err;
    return { recorded: false, warning: `The load is not recorded as consumed in the run: ${err.message}` };
  }
}

/** The run an explicit load is recorded in: `$MAESTRO_RUN_DIR`'s, else the active run's; null when neither has a run.json. */
function consumingRun(root: WorkflowRoot, env: NodeJS.ProcessEnv): { runFile: string; ledgerPath: string; init: (run: RunDoc) => Ledger } | null {
  // An agent spawned by the orchestrator works in a worktree; its run directory comes from the worker's environment.
  const dir = env.MAESTRO_RUN_DIR;
  if (dir && existsSync(join(dir, 'run.json'))) return { runFile: join(dir, 'run.json'), ledgerPath: join(dir, 'knowledge-delta.json'), init: (run) => emptyLedger(run.session_id, run.run_id, nowIso()) };
  const a = activeRun(root, env);
  if (!a) return null;
  assertSourceInside(root, a.sid, a.rid, 'write'); // a run folder linked out is written nothing: the warning names the link
  const src = runSource(root, a.sid, a.rid);
  const runFile = join(src.dir, 'run.json');
  // A run that is gone (.active-run left behind) is no active run.
  return existsSync(runFile) ? { runFile, ledgerPath: src.ledgerPath, init: init(src) } : null;
}

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
  // run.json read, completed and written under the store's lock, as a run's end and run creation write it.
  const run = storeLock(root, () => {
    const r = assertWritableRun(root, sid, rid);
    if (r.status !== 'completed') {
      assertRunRewritable(root, r);
      stageReport(r, src);
      writeRun(root, r);
    }
    return r;
  });
  return completeResult(run, src, reconcileSource(lc, root, src));
}

/** Stages the run's report into its ledger and fills in how the run ended; the caller writes the run. */
function stageReport(run: RunDoc, src: Source): void {
  const reportPath = join(src.dir, 'report.md');
  const report = readReportFile(reportPath) ?? parseReport('');
  const drafts = reportDrafts(report, run.run_id);
  updateLedger(src.ledgerPath, init(src), (l) => {
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

/** Applies automatic suppression (exact duplicates → rejected) from a fresh receipt. */
function suppressExact(src: Source, receipt: Receipt | null): number {
  if (!receipt) return 0;
  const ids = new Set(receipt.candidates.filter((c) => c.disposition === 'exact_duplicate' && c.promotion_eligibility === 'suppressed').map((c) => c.candidate_id));
  if (!ids.size || !readLedger(src.ledgerPath)) return 0;
  return updateLedger(src.ledgerPath, init(src), (l) => {
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

/**
 * The orchestrator's end of a run (bridge.ts): complete and seal in one pass, with one reconciliation and
 * one write of run.json (complete then seal reconciled twice and wrote the run and its receipt twice).
 */
export function finishRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): CompleteResult & { suppressed: number } {
  assertWritableRun(root, sid, rid);
  return withCorpusLock(runEndLocks(root, sid, rid), () => {
    const run = assertWritableRun(root, sid, rid);
    const { src, receipt, suppressed } = writtenNow(completeAndSeal(lc, root, run));
    return { ...completeResult(run, src, receipt), suppressed };
  });
}

/**
 * finishRun for the daemon: the same files in the same order, each write's fsyncs awaited in libuv's threadpool
 * (format/atomic.ts writeFileAtomicOffLoop). The receipt, run.json and session.json were 6 of a run's 16
 * fsyncs on the daemon's event loop (bench:daemon, 4 workers, 2026-12). The locks are held across the awaits
 * (lock.ts withCorpusLockAsync): other processes wait; this process's other work runs between the writes, and a
 * reader or writer of one of them here finishes its write first (store.ts, receipt.ts settleWrite).
 */
export async function finishRunOffLoop(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Promise<CompleteResult & { suppressed: number }> {
  assertWritableRun(root, sid, rid);
  return withCorpusLockAsync(runEndLocks(root, sid, rid), async () => {
    const run = assertWritableRun(root, sid, rid);
    const { src, receipt, suppressed } = await writtenOffLoop(completeAndSeal(lc, root, run));
    return { ...completeResult(run, src, receipt), suppressed };
  });
}

/**
 * The locks a run's end holds from its read of run.json to its last rename: the store's (run.json, session.json and
 * `.active-run`, as run creation holds it: store.ts storeLock), the run's receipt's (as a refresh or a resolution
 * holds it: receipt.ts reconcileSource) and its ledger's (as a stage or a record holds it, ledger.ts updateLedger:
 * one that waited for the seal is refused, assertStillWritable, so what the receipt covers is what the sealed
 * ledger holds). Taken after the run is known to exist, so an unknown run gets no folder. In sorted order; and a
 * process takes the locks of one `.workflow/` only while it holds that folder's kernel lock (format/lock.ts), so no
 * two processes hold them in opposite orders.
 */
function runEndLocks(root: WorkflowRoot, sid: string, rid: string): string[] {
  const src = runSourceInside(root, sid, rid);
  return [storeLockTarget(root), src.ledgerPath, src.receiptPath];
}

/**
 * Under a ledger's lock, before its change: the run is still not sealed, the session still open. A stage or a record
 * checked it before the lock; a run's end or a session's seal, holding that lock until it has sealed (runEndLocks,
 * sealSession), may have sealed it since.
 */
function assertStillWritable(root: WorkflowRoot, src: Source): void {
  if (src.rid === 'session') assertSessionOpen(readSession(root, src.sid));
  else assertWritableRun(root, src.sid, src.rid);
}

type Sealed = { src: Source; receipt: Receipt; suppressed: number };

/**
 * Completes an unsealed run if it is not yet, reconciles, suppresses exact duplicates, seals it and takes it off the
 * session's active runs. Yields its receipt, run.json and session.json writes, in that order, for its caller to do
 * (now or off the loop) before it goes on; the ledger's writes (under the corpus lock) and `.active-run` are done here.
 * The caller holds `runEndLocks` throughout, and read `run` under them.
 */
function* completeAndSeal(lc: LifecycleContext, root: WorkflowRoot, run: RunDoc): Generator<FileWrite, Sealed, void> {
  assertRunRewritable(root, run);
  assertSessionRewritable(root, readSession(root, run.session_id));
  const src = runSourceInside(root, run.session_id, run.run_id);
  if (run.status !== 'completed') stageReport(run, src);
  const { receipt, write } = reconciledReceipt(lc, root, src);
  yield write;
  const suppressed = suppressExact(src, receipt);
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
 * process's write between, and a stage into the session's ledger that waited for it is refused (assertStillWritable).
 */
function sealSessionLocked(lc: LifecycleContext, root: WorkflowRoot, sid: string): ReturnType<typeof sealSession> {
  const s = readSession(root, sid);
  if (s.status === 'open') assertSessionRewritable(root, s);
  const sources = sessionSources(root, sid);
  const unsealed = sources.filter((x) => x.rid !== 'session' && !isSealed(readRun(root, sid, x.rid))).map((x) => x.rid);
  const ss = sessionSource(root, sid);
  if (readLedger(ss.ledgerPath)) suppressExact(ss, reconcileSource(lc, root, ss));
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
