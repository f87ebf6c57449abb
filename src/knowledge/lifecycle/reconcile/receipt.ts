/**
 * Reconciliation receipts (`knowledge-reconciliation.json`, FORMATS §4.3) and
 * their freshness fence: a receipt counts only while its session, run,
 * candidate_snapshot_hash, corpus_fingerprint and matcher_revision all match
 * the current state. A receipt that does not parse or lacks a field (a crash
 * cut it short, a hand edit broke it) is corrupt: `readReceipt` throws
 * CORRUPT_FILE; review and the freshness fence report it as a missing receipt
 * *with the reason*, and the next reconcile overwrites it whole, keeping the
 * unreadable file beside it (`.corrupt`) since it may have held human resolutions.
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { settleWrite, writeFileAtomic, type FileWrite } from '../../format/atomic.js';
import { assertNotLinked, assertReadInside } from '../../format/linkGuard.js';
import { withCorpusLock } from '../../format/lock.js';
import { jsonSyntaxWhere } from '../../../lib/jsonError.js';
import { tooLargeToRead } from '../jsonFile.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import type { LifecycleContext } from '../context.js';
import { readLedger, type Ledger, type LedgerCandidate } from '../ledger/ledger.js';
import { MATCHER_REVISION, candidateSnapshotHash, sessionSnapshotHash } from '../ledger/recipes.js';
import type { WorkflowRoot } from '../../format/root.js';
import { promotedIds, promotionPath } from '../promote/promotion.js';
import { readReportFile, reportDrafts, type Draft } from '../session/report.js';
import { assertReadableInside, assertRunFolderInside, assertSourceInside, listRunIds, runDir, runFolderOutside, sessionDir } from '../session/store.js';
import { addStats, associatedDocs, decide, scoreMatches, type CandidateResult, type MatchStats, type PreparedCorpus } from './matcher.js';
import { scoreKey } from './scored.js';
import type { SemanticScorer } from './semantic.js';

export const RECEIPT_SCHEMA = 'knowledge-reconciliation/1.0';

export interface Receipt {
  schema_version: typeof RECEIPT_SCHEMA;
  session_id: string;
  run_id: string;
  candidate_snapshot_hash: string;
  corpus_fingerprint: string;
  matcher_revision: string;
  generated_at: string;
  retrieval: { mode: 'lexical-kg' | 'hybrid'; embedding_used: boolean; candidate_limit: number; identity_documents: number; semantic_documents: number; relation_documents: number };
  counts: { candidates: number; unique: number; duplicates: number; related: number; conflicts: number; review_required: number; suppressed: number };
  candidates: CandidateResult[];
}

/** One ledger that candidates come from: a run (`run_id`) or the session itself (`"session"`). */
export interface Source {
  sid: string;
  rid: string;
  dir: string;
  ledgerPath: string;
  receiptPath: string;
}

export function runSource(root: WorkflowRoot, sid: string, rid: string): Source {
  const dir = runDir(root, sid, rid);
  return { sid, rid, dir, ledgerPath: join(dir, 'knowledge-delta.json'), receiptPath: join(dir, 'knowledge-reconciliation.json') };
}
export function sessionSource(root: WorkflowRoot, sid: string): Source {
  const dir = sessionDir(root, sid);
  return { sid, rid: 'session', dir, ledgerPath: join(dir, 'knowledge-delta.json'), receiptPath: join(dir, 'knowledge-reconciliation.json') };
}
/**
 * Every source of a session; refused when a link sends the session folder out of the workflow root, or a run
 * folder anywhere but the orchestrator's run folder (store.ts): nothing of the session is read then.
 */
export function sessionSources(root: WorkflowRoot, sid: string): Source[] {
  const { sources, outside } = scanSessionSources(root, sid);
  if (outside[0]) throw outside[0].error;
  return sources;
}

/**
 * The sources of a session that may be read, and each run whose folder links out of bounds, with the refusal
 * (naming the link and where it leads): audit reports those and reads the rest. Throws when the session's own
 * folder or its runs/ folder links out of the workflow root: nothing of the session is read then.
 */
export function scanSessionSources(root: WorkflowRoot, sid: string): { sources: Source[]; outside: Array<{ rid: string; error: MaestroError }> } {
  assertReadableInside(root, sessionDir(root, sid));
  const sources = [sessionSource(root, sid)];
  const outside: Array<{ rid: string; error: MaestroError }> = [];
  for (const rid of listRunIds(root, sid)) {
    const refused = runFolderOutside(root, sid, rid);
    if (refused) outside.push({ rid, error: refused });
    else sources.push(runSource(root, sid, rid));
  }
  return { sources, outside };
}

/** `runSource`, refused when the run folder links anywhere but `.workflow/` or the orchestrator's run folder (store.ts). */
export function runSourceInside(root: WorkflowRoot, sid: string, rid: string): Source {
  assertRunFolderInside(root, sid, rid);
  return runSource(root, sid, rid);
}

export interface SourceState {
  ledger: Ledger | null;
  /** Candidates the receipt covers: ledger candidates not promoted, then report drafts not staged yet. */
  candidates: Array<LedgerCandidate | Draft>;
  snapshotHash: string;
}

/** Throws (file + field) when the ledger or the report is corrupt. */
export function readSourceState(src: Source): SourceState {
  for (const file of [src.ledgerPath, promotionPath(src.dir), join(src.dir, 'report.md')]) assertFileInside(src, file);
  const ledger = readLedger(src.ledgerPath);
  const promoted = promotedIds(src.dir);
  const cands: Array<LedgerCandidate | Draft> = (ledger?.candidates ?? []).filter((c) => c.status !== 'promoted' && !promoted.has(c.candidate_id));
  if (src.rid === 'session') return { ledger, candidates: cands, snapshotHash: sessionSnapshotHash(cands as LedgerCandidate[]) };
  const reportPath = join(src.dir, 'report.md');
  const report = readReportFile(reportPath);
  if (report) {
    const have = new Set([...(ledger?.candidates ?? []).map((c) => c.candidate_id), ...promoted]);
    for (const d of reportDrafts(report, src.rid)) if (!have.has(d.candidate_id)) {
      cands.push(d);
      have.add(d.candidate_id);
    }
  }
  return { ledger, candidates: cands, snapshotHash: candidateSnapshotHash(cands) };
}

/** A source's file is read only when it stays in the source's folder (a run's may be a link; its files may not lead further). */
function assertFileInside(src: Source, file: string): void {
  assertReadInside(src.dir, file, `its folder ${src.dir}`);
}

/**
 * How the person reading a receipt error rebuilds the receipt, in the terms of what they called: the CLI's
 * flag (the default), the API's body field or route (api/routes/knowledgeReview.ts). A hint for one is wrong for
 * the other: the API has no `--refresh`, and the CLI no request body. The errors carry it as `details.fix` too.
 */
export type RefreshHint = (sid: string) => string;
export const REFRESH_BY_FLAG: RefreshHint = (sid) => `maestro knowledge review ${sid} --refresh`;

/** The receipt; null when there is none. A file that is not a complete receipt throws CORRUPT_FILE naming it. */
export function readReceipt(src: Source): Receipt | null {
  const got = tryReadReceipt(src);
  if (got.corrupt) throw got.corrupt;
  return got.receipt;
}

/** For readers that go on without a receipt (review, the freshness fence, a refresh): the receipt, or why it is unreadable. */
export function tryReadReceipt(src: Source, hint: RefreshHint = REFRESH_BY_FLAG): { receipt: Receipt | null; corrupt?: MaestroError } {
  settleWrite(src.receiptPath); // a run end's write of it in flight (session/ops.ts) is finished first
  if (!existsSync(src.receiptPath)) return { receipt: null };
  const fix = hint(src.sid);
  const corrupt = (why: string) => ({ receipt: null, corrupt: new MaestroError('CORRUPT_FILE', `${src.receiptPath}: ${why}; rebuild it: ${fix}.`, { details: { file: src.receiptPath, fix } }) });
  try {
    assertFileInside(src, src.receiptPath);
  } catch (err) {
    return { receipt: null, corrupt: err as MaestroError };
  }
  const large = tooLargeToRead(src.receiptPath);
  if (large) return corrupt(large);
  let r: Receipt;
  const text = readFileSync(src.receiptPath, 'utf8');
  try {
    r = JSON.parse(text) as Receipt;
  } catch {
    return corrupt(`not valid JSON (${jsonSyntaxWhere(text)})`); // the place only: JSON.parse's message quotes the file
  }
  if (!r || r.schema_version !== RECEIPT_SCHEMA) return corrupt(`field schema_version must be ${RECEIPT_SCHEMA}`);
  for (const field of ['corpus_fingerprint', 'matcher_revision', 'candidate_snapshot_hash'] as const) if (typeof r[field] !== 'string') return corrupt(`field ${field} must be a string`);
  if (!Array.isArray(r.candidates)) return corrupt('field candidates must be an array');
  return { receipt: r };
}

export type Freshness = 'missing' | 'stale' | 'fresh';

/** `corrupt`: why the receipt file could not be read (it then counts as missing, with that reason). */
export function freshness(lc: LifecycleContext, src: Source, receipt: Receipt | null, state: SourceState, corpus: CorpusSnapshot, corrupt?: Error): { state: Freshness; reasons: string[] } {
  if (corrupt) return { state: 'missing', reasons: [`receipt unreadable: ${corrupt.message}`] };
  if (!receipt) return { state: 'missing', reasons: ['no complete receipt'] };
  const reasons: string[] = [];
  if (receipt.session_id !== src.sid || receipt.run_id !== src.rid) reasons.push('receipt belongs to another session/run');
  if (receipt.candidate_snapshot_hash !== state.snapshotHash) reasons.push('candidates changed since the receipt');
  if (receipt.corpus_fingerprint !== corpus.fingerprint) reasons.push('project knowledge changed since the receipt');
  const revision = lc.semantic.currentRevision();
  if (receipt.matcher_revision !== revision) reasons.push(`matcher revision ${receipt.matcher_revision} ≠ ${revision}`);
  return { state: reasons.length ? 'stale' : 'fresh', reasons };
}

export interface ReconcileOptions {
  /** The semantic signal: a scorer; null = lexical only; absent = the configured embedder, when its vectors are warm (semantic.ts). */
  semantic?: SemanticScorer | null;
  corpus?: CorpusSnapshot;
  prepared?: PreparedCorpus;
  now?: Date;
  /** Test seam: runs once reconcileSource has scored the candidates, before it takes the receipt's lock. */
  afterScoring?: () => void;
}

/** What scoring a source's candidates reads besides the corpus: its loads' documents and the semantic scorer; the candidates in receipt order. */
function scoring(lc: LifecycleContext, state: SourceState, pc: PreparedCorpus, opts: ReconcileOptions) {
  const assoc = associatedDocs(pc, state.ledger?.inputs ?? []);
  // Receipts list candidates by id, as the published ones do.
  const ordered = [...state.candidates].sort((a, b) => a.candidate_id.localeCompare(b.candidate_id));
  const scorer = opts.semantic === undefined ? lc.semantic.scorer(pc, ordered) : opts.semantic;
  const match = scorer ? { semantic: (x: { content: string }) => scorer.score(x) } : {};
  return { assoc, ordered, scorer, match };
}

/** Builds a receipt for candidates against a corpus (writes nothing; used by reconcileSource and the benchmark). */
export function buildReceipt(lc: LifecycleContext, src: Pick<Source, 'sid' | 'rid'>, state: SourceState, corpus: CorpusSnapshot, pc: PreparedCorpus, opts: ReconcileOptions = {}, previous?: Receipt | null): Receipt {
  const { assoc, ordered, scorer, match } = scoring(lc, state, pc, opts);
  const stats: MatchStats = { identity: 0, semantic: 0, relation: 0 };
  const results = ordered.map((c) => {
    // Scored ahead (scoreAhead.ts: the daemon, off its event loop; reconcileSource, before its lock) when it could be; scored here otherwise.
    const scored = lc.scored.get(pc, scoreKey(c, assoc, scorer)) ?? scoreMatches(c, pc, assoc, match);
    addStats(stats, scored.stats);
    const r = decide(c, scored.matches);
    // A confirmed human resolution survives a refresh while its target is still in the corpus.
    const prev = previous?.candidates.find((p) => p.candidate_id === c.candidate_id && p.resolution?.status === 'confirmed');
    if (prev && (prev.canonical_id === null || pc.byAlias.has(prev.canonical_id))) return { ...r, disposition: prev.disposition, promotion_eligibility: prev.promotion_eligibility, canonical_id: prev.canonical_id, resolution: prev.resolution };
    return r;
  });
  const count = (f: (r: CandidateResult) => boolean) => results.filter(f).length;
  return {
    schema_version: RECEIPT_SCHEMA,
    session_id: src.sid,
    run_id: src.rid,
    candidate_snapshot_hash: state.snapshotHash,
    corpus_fingerprint: corpus.fingerprint,
    matcher_revision: scorer?.revision ?? MATCHER_REVISION,
    generated_at: (opts.now ?? new Date()).toISOString(),
    retrieval: { mode: scorer ? 'hybrid' : 'lexical-kg', embedding_used: Boolean(scorer), candidate_limit: 28, identity_documents: stats.identity, semantic_documents: stats.semantic, relation_documents: stats.relation },
    counts: {
      candidates: results.length,
      unique: count((r) => r.disposition === 'unique'),
      duplicates: count((r) => r.disposition === 'exact_duplicate' || r.disposition === 'semantic_duplicate'),
      related: count((r) => r.disposition === 'related' || r.disposition === 'extends'),
      conflicts: count((r) => r.disposition === 'potential_conflict'),
      review_required: count((r) => r.promotion_eligibility === 'review_required'),
      suppressed: count((r) => r.promotion_eligibility === 'suppressed'),
    },
    candidates: results,
  };
}

/**
 * Rebuilds the source's receipt and writes it, holding the receipt's lock from the read of the one it replaces (whose
 * confirmed resolutions it carries) to the rename: a run's end (session/ops.ts) or a resolution (review.ts) in
 * another process waits rather than losing its receipt or taking this one's fixed temporary file.
 */
export function reconcileSource(lc: LifecycleContext, root: WorkflowRoot, src: Source, opts: ReconcileOptions = {}): Receipt {
  assertSourceInside(root, src.sid, src.rid); // before the lock makes its file in the source's folder
  scoreBeforeLock(lc, root, src, opts);
  opts.afterScoring?.();
  return withCorpusLock([src.receiptPath], () => {
    const { receipt, write } = reconciledReceipt(lc, root, src, opts);
    writeFileAtomic(write.file, write.text);
    return receipt;
  });
}

/**
 * Scores the source's candidates (lc.scored) before the receipt's lock is taken: that lock comes with its `.workflow/`'s
 * kernel lock, which every writer of the project waits for, and preparing a large corpus and scoring against it take
 * seconds (about 1 s to prepare 10,000 documents, 2 ms a candidate against them: scored.ts). Under the lock the
 * reconcile reads the corpus, the ledger and the report again: what did not change meanwhile is found scored and only
 * decided; a candidate or a corpus that changed is scored there, as before. A source that does not read is left to it.
 */
function scoreBeforeLock(lc: LifecycleContext, root: WorkflowRoot, src: Source, opts: ReconcileOptions = {}): void {
  let state: SourceState;
  let pc: PreparedCorpus;
  try {
    const corpus = opts.corpus ?? lc.corpus.read(root.workflowDir);
    pc = opts.prepared ?? lc.prepared.preparedFor(corpus.fingerprint, corpus.docs);
    state = readSourceState(src);
  } catch {
    return; // the reconcile meets it again, under the lock, and says why
  }
  const { assoc, ordered, scorer, match } = scoring(lc, state, pc, opts);
  for (const c of ordered) {
    const key = scoreKey(c, assoc, scorer);
    if (!lc.scored.has(pc, key)) lc.scored.set(pc, key, scoreMatches(c, pc, assoc, match));
  }
}

/**
 * reconcileSource, with the receipt's write left to the caller (session/ops.ts completeAndSeal writes it off the
 * loop), who holds the receipt's lock until it is written.
 */
export function reconciledReceipt(lc: LifecycleContext, root: WorkflowRoot, src: Source, opts: ReconcileOptions = {}): { receipt: Receipt; write: FileWrite } {
  const corpus = opts.corpus ?? lc.corpus.read(root.workflowDir);
  const pc = opts.prepared ?? lc.prepared.preparedFor(corpus.fingerprint, corpus.docs);
  assertSourceInside(root, src.sid, src.rid); // before anything of the source is read; again before the write
  const state = readSourceState(src);
  const previous = tryReadReceipt(src);
  assertSourceInside(root, src.sid, src.rid);
  // An unreadable receipt is rebuilt, not trusted; its bytes are kept beside it for a human to look at.
  assertNotLinked(src.receiptPath);
  if (previous.corrupt) renameSync(src.receiptPath, `${src.receiptPath}.corrupt`);
  const receipt = buildReceipt(lc, src, state, corpus, pc, opts, previous.receipt);
  return { receipt, write: { file: src.receiptPath, text: `${JSON.stringify(receipt, null, 2)}\n` } };
}

/** Fails closed unless the source's receipt is fresh; says how to refresh, as `hint` says it. */
export function requireFresh(lc: LifecycleContext, root: WorkflowRoot, src: Source, corpus?: CorpusSnapshot, hint: RefreshHint = REFRESH_BY_FLAG): { receipt: Receipt; state: SourceState } {
  const state = readSourceState(src);
  const { receipt, corrupt } = tryReadReceipt(src, hint);
  const f = freshness(lc, src, receipt, state, corpus ?? lc.corpus.read(root.workflowDir), corrupt);
  if (f.state !== 'fresh') {
    const fix = hint(src.sid);
    throw new MaestroError('STALE_RECEIPT', `The reconciliation receipt of ${src.rid === 'session' ? `session ${src.sid}` : `run ${src.rid}`} is ${f.state} (${f.reasons.join('; ')}). Refresh it: ${fix}`, { details: { session: src.sid, fix } });
  }
  return { receipt: receipt!, state };
}
