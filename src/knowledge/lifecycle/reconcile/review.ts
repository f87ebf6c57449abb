/**
 * `maestro knowledge review`: the one place a human sees every candidate of a
 * session with its receipt state (missing|stale|fresh), up to 3 diverse
 * matches, disposition, eligibility, target and a promote command to copy —
 * and `--resolve` to record a human decision on a fresh receipt.
 */
import { MaestroError } from '../../../core/errors.js';
import { writeFileAtomic } from '../../format/atomic.js';
import { withCorpusLock } from '../../format/lock.js';
import { assertNotLinked } from '../../format/linkGuard.js';
import { updateLedger, type LedgerCandidate } from '../ledger/ledger.js';
import type { WorkflowRoot } from '../../format/root.js';
import { readPromotions } from '../promote/promotion.js';
import { assertSourceInside, isSealed, readRun, readSession } from '../session/store.js';
import type { SupersededVersion } from '../../../core/supersededVersion.js';
import { markSpecConflict } from '../../format/specWriter.js';
import type { CandidateResult, Disposition, Eligibility, Match } from './matcher.js';
import type { LifecycleContext } from '../context.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import { REFRESH_BY_FLAG, freshness, readSourceState, reconcileSource, requireFresh, sessionSources, tryReadReceipt, type Freshness, type RefreshHint, type Source } from './receipt.js';

const SEVERITY: Record<Disposition, number> = { potential_conflict: 0, supersede_candidate: 1, semantic_duplicate: 2, extends: 3, related: 4, unique: 5, exact_duplicate: 6 };

export interface ReviewCandidate {
  candidate_id: string;
  source_run: string;
  target: string;
  action: string;
  /** A label only (an agent sets it; a report's decision is cut to 120 characters for it). */
  title: string;
  /** The whole text a promote writes: what the person approves. */
  content: string;
  /** Where a spec candidate lands (its category's file); null: the default. */
  category: string | null;
  status: string;
  source_kind: string;
  occurrences: number;
  first_recorded_at: string | null;
  corroboration: number;
  receipt: Freshness;
  disposition: Disposition | null;
  promotion_eligibility: Eligibility | null;
  canonical_id: string | null;
  /** Current state of the canonical target: an audit may have deprecated it since (seed 000 §9). */
  canonical_status: 'active' | 'inactive' | null;
  matches: Match[];
  resolution: CandidateResult['resolution'];
  promote_command: string | null;
}

export interface ReviewResult {
  schema: 'knowledge-review/1.0';
  session_id: string;
  /** The session's task version was replaced (rejected at a gate, or retried): its candidates come from that try, as the store says (core/supersededVersion.ts). */
  superseded: SupersededVersion | null;
  sources: Array<{ run_id: string; receipt: Freshness; reasons: string[]; error?: string }>;
  candidates: ReviewCandidate[];
  triage: Array<{ candidate_id: string; corroboration: number; first_recorded_at: string | null }>;
  input_totals_by_source: Record<string, number>;
  inputs: Array<{ run_id: string; knowledge_id: string; signal: string; source: string; count: number; evidence: string[] }>;
}

/** Up to 3 matches, preferring different relations and different source files. */
function diverse(matches: Match[]): Match[] {
  const out: Match[] = [];
  const seen = new Set<string>();
  for (const m of matches) if (out.length < 3 && !seen.has(`${m.relation}|${m.source_path}`)) {
    out.push(m);
    seen.add(`${m.relation}|${m.source_path}`);
  }
  for (const m of matches) if (out.length < 3 && !out.includes(m)) out.push(m);
  return out;
}

/**
 * `corpus`: the corpus as just read, for a caller reviewing many sessions at once (the review queue); read here otherwise.
 * `hint`: how an unreadable receipt's error says to rebuild it (the CLI's flag unless told).
 * `superseded`: what the task store says of the session's task version (the folder does not know it); null unless given.
 */
export function review(lc: LifecycleContext, root: WorkflowRoot, sid: string, opts: { refresh?: boolean; corpus?: CorpusSnapshot; hint?: RefreshHint; superseded?: SupersededVersion | null } = {}): ReviewResult {
  readSession(root, sid);
  const sources = sessionSources(root, sid);
  const corpus = opts.corpus ?? lc.corpus.read(root.workflowDir);
  const result: ReviewResult = { schema: 'knowledge-review/1.0', session_id: sid, superseded: opts.superseded ?? null, sources: [], candidates: [], triage: [], input_totals_by_source: { load: 0, search: 0, injection: 0, manual: 0 }, inputs: [] };
  const seenIn = new Map<string, number>();
  const rows: ReviewCandidate[] = [];
  for (const src of sources) {
    let state;
    // Promote takes only a sealed run's candidates (promote.ts gateSources): the command to copy seals it first.
    let sealFirst = '';
    try {
      state = readSourceState(src);
      if (src.rid !== 'session' && !isSealed(readRun(root, sid, src.rid))) sealFirst = `maestro run seal ${src.rid} --session ${sid} && `;
      if (opts.refresh && (state.candidates.length || state.ledger)) {
        const now = tryReadReceipt(src, opts.hint);
        const f = freshness(lc, src, now.receipt, state, corpus, now.corrupt);
        if (f.state !== 'fresh') reconcileSource(lc, root, src, { corpus });
      }
    } catch (err) {
      // A corrupt ledger, report or promotion receipt makes this run "missing" and leaves the others working (seed 000 §11.1).
      result.sources.push({ run_id: src.rid, receipt: 'missing', reasons: ['ledger, report or promotion receipt unreadable'], error: (err as Error).message });
      continue;
    }
    if (!state.ledger && !state.candidates.length) continue;
    const { receipt, corrupt } = tryReadReceipt(src, opts.hint);
    const f = freshness(lc, src, receipt, state, corpus, corrupt);
    result.sources.push({ run_id: src.rid, receipt: f.state, reasons: f.reasons, ...(corrupt ? { error: corrupt.message } : {}) });
    for (const inp of state.ledger?.inputs ?? []) {
      result.input_totals_by_source[inp.source] = (result.input_totals_by_source[inp.source] ?? 0) + inp.count;
      result.inputs.push({ run_id: src.rid, knowledge_id: inp.knowledge_id, signal: inp.signal, source: inp.source, count: inp.count, evidence: inp.evidence ?? [] });
    }
    for (const c of state.candidates) {
      seenIn.set(c.candidate_id, (seenIn.get(c.candidate_id) ?? 0) + 1);
      const r = receipt?.candidates.find((x) => x.candidate_id === c.candidate_id) ?? null;
      const lc = c as Partial<LedgerCandidate>;
      const status = lc.status ?? 'draft';
      rows.push({
        candidate_id: c.candidate_id,
        source_run: src.rid,
        target: c.target,
        action: c.action,
        title: c.title,
        content: c.content,
        category: c.category ?? null,
        status,
        source_kind: c.source_kind,
        occurrences: lc.occurrences ?? 1,
        first_recorded_at: lc.first_recorded_at ?? null,
        corroboration: 0,
        receipt: f.state,
        disposition: r?.disposition ?? null,
        promotion_eligibility: r?.promotion_eligibility ?? null,
        canonical_id: r?.canonical_id ?? null,
        canonical_status: r?.canonical_id ? (corpus.docs.some((d) => d.id === r.canonical_id) ? 'active' : 'inactive') : null,
        matches: diverse(r?.matches ?? []),
        resolution: r?.resolution ?? null,
        promote_command: f.state === 'fresh' && r?.promotion_eligibility === 'eligible' && status === 'pending' ? `${sealFirst}maestro knowledge promote ${sid} --candidate ${c.candidate_id}` : null,
      });
    }
  }
  for (const r of rows) r.corroboration = seenIn.get(r.candidate_id) ?? 1;
  rows.sort((a, b) => SEVERITY[a.disposition ?? 'unique'] - SEVERITY[b.disposition ?? 'unique'] || a.candidate_id.localeCompare(b.candidate_id) || a.source_run.localeCompare(b.source_run));
  result.candidates = rows;
  result.triage = rows
    .filter((r) => r.status === 'pending' || r.status === 'draft')
    .map((r) => ({ candidate_id: r.candidate_id, corroboration: r.corroboration, first_recorded_at: r.first_recorded_at }))
    .sort((a, b) => b.corroboration - a.corroboration || (a.first_recorded_at ?? '~').localeCompare(b.first_recorded_at ?? '~') || a.candidate_id.localeCompare(b.candidate_id));
  return result;
}

export type ResolveAs = 'duplicate' | 'related' | 'conflict' | 'supersede' | 'unique';
const AS: Record<ResolveAs, { disposition: Disposition; eligibility: Eligibility; reject: boolean }> = {
  duplicate: { disposition: 'semantic_duplicate', eligibility: 'suppressed', reject: true },
  related: { disposition: 'related', eligibility: 'eligible', reject: false },
  conflict: { disposition: 'potential_conflict', eligibility: 'suppressed', reject: true },
  supersede: { disposition: 'supersede_candidate', eligibility: 'eligible', reject: false },
  unique: { disposition: 'unique', eligibility: 'eligible', reject: false },
};

/** Finds the source (run or session ledger) that holds a candidate. */
export function sourceOfCandidate(root: WorkflowRoot, sid: string, candidateId: string): Source {
  let unreadable: unknown;
  for (const src of sessionSources(root, sid)) {
    try {
      if (readSourceState(src).candidates.some((c) => c.candidate_id === candidateId) || readPromotions(src.dir)?.entries[candidateId]) return src;
    } catch (err) {
      unreadable ??= err; // the candidate may be in this corrupt source: say so rather than "not in session"
    }
  }
  if (unreadable) throw unreadable;
  throw new MaestroError('BAD_INPUT', `Candidate ${candidateId} is not in session ${sid} (maestro knowledge review ${sid} lists them).`);
}

export interface ResolveInput {
  candidate: string;
  as: string;
  target?: string;
  reason: string;
  /** Reconcile the session's stale receipts first: only once the input is known good, so bad input writes nothing. */
  refresh?: boolean;
}

/** How a caller names the inputs in its messages: the CLI by its flags, the API by its body's fields; and how it asks for a refresh. */
export interface ResolveNames {
  candidate: string;
  as: string;
  target: string;
  reason: string;
  refresh: RefreshHint;
}
export const RESOLVE_FLAGS: ResolveNames = { candidate: '--resolve', as: '--as', target: '--target', reason: '--reason', refresh: REFRESH_BY_FLAG };
export const RESOLVE_FIELDS: ResolveNames = { candidate: 'candidate', as: 'as', target: 'target', reason: 'reason', refresh: () => 'send "refresh": true in the request body' };

/** Everything a resolution checks that no refresh can change: refused here, before anything is written. */
function checkResolve(root: WorkflowRoot, corpus: CorpusSnapshot, sid: string, input: ResolveInput, n: ResolveNames): { as: (typeof AS)[ResolveAs]; src: Source; target: string | null } {
  const as = AS[input.as as ResolveAs];
  if (!as) throw new MaestroError('BAD_INPUT', `${n.as} must be duplicate|related|conflict|supersede|unique (got ${input.as}).`);
  if (!input.reason?.trim()) throw new MaestroError('BAD_INPUT', `${n.reason} must say why (an empty reason is refused).`);
  if (input.as !== 'unique' && !input.target) throw new MaestroError('BAD_INPUT', `${n.as} ${input.as} needs ${n.target} <knowledge-id>.`);
  const src = sourceOfCandidate(root, sid, input.candidate);
  const cand = readSourceState(src).candidates.find((c) => c.candidate_id === input.candidate);
  if (!cand) throw new MaestroError('BAD_INPUT', `${n.candidate} ${input.candidate} is already promoted from session ${sid}; there is nothing left to resolve.`);
  if (as.reject && !('status' in cand)) throw new MaestroError('BAD_INPUT', `Candidate ${input.candidate} is still a report draft; complete run ${src.rid} first (maestro run complete ${src.rid} --session ${sid}).`);
  if (!input.target) return { as, src, target: null };
  const doc = corpus.docs.find((d) => d.id === input.target || d.aliases.includes(input.target!));
  if (!doc) throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `${n.target} ${input.target} is not active project knowledge in ${root.workflowDir}.`);
  return { as, src, target: doc.id };
}

/** `names`: how the messages name the inputs (the CLI's flags unless told). */
export function resolveCandidate(lc: LifecycleContext, root: WorkflowRoot, sid: string, input: ResolveInput, names: ResolveNames = RESOLVE_FLAGS): { schema: 'knowledge-resolution-result/1.0'; candidate_id: string; disposition: Disposition; promotion_eligibility: Eligibility; canonical_id: string | null; status: string } {
  const corpus = lc.corpus.read(root.workflowDir);
  const { as, src, target } = checkResolve(root, corpus, sid, input, names);
  if (input.refresh) review(lc, root, sid, { refresh: true, corpus });
  assertSourceInside(root, src.sid, src.rid);
  // The receipt read, resolved and written under its lock: a run's end or a refresh in another process meanwhile
  // neither loses this resolution nor takes the fixed temporary file (receipt.ts reconcileSource).
  const { state } = withCorpusLock([src.receiptPath], () => {
    const fresh = requireFresh(lc, root, src, corpus, names.refresh);
    const entry = fresh.receipt.candidates.find((c) => c.candidate_id === input.candidate)!;
    entry.disposition = as.disposition;
    entry.promotion_eligibility = as.eligibility;
    entry.canonical_id = target;
    entry.resolution = { status: 'confirmed', reason: input.reason.trim(), resolved_at: new Date().toISOString() };
    assertSourceInside(root, src.sid, src.rid);
    assertNotLinked(src.receiptPath);
    writeFileAtomic(src.receiptPath, `${JSON.stringify(fresh.receipt, null, 2)}\n`);
    return fresh;
  });
  const cand = state.candidates.find((c) => c.candidate_id === input.candidate)!;
  let status = 'status' in cand ? String(cand.status) : 'draft';
  if (as.reject) {
    updateLedger(src.ledgerPath, () => state.ledger!, (l) => {
      const c = l.candidates.find((x) => x.candidate_id === input.candidate)!;
      if (c.status === 'pending') c.status = 'rejected';
      status = c.status;
    });
  }
  if (input.as === 'conflict' && target && corpus.docs.find((d) => d.id === target)?.target === 'spec' && !target.startsWith('legacy:')) {
    markSpecConflict(root, target, `contested by ${input.candidate}: ${input.reason.trim()}`);
    // Our own conflict marker changed the corpus: refresh so the receipt stays fresh (the confirmed resolution is carried over).
    reconcileSource(lc, root, src);
  }
  return { schema: 'knowledge-resolution-result/1.0', candidate_id: input.candidate, disposition: as.disposition, promotion_eligibility: as.eligibility, canonical_id: target, status };
}

/** Batch: resolve every candidate of one disposition (targets default to each one's canonical match). */
export function resolveAll(lc: LifecycleContext, root: WorkflowRoot, sid: string, disposition: string, as: string, reason: string): Array<ReturnType<typeof resolveCandidate>> {
  const rows = review(lc, root, sid).candidates.filter((c) => c.disposition === disposition && (c.status === 'pending' || c.status === 'draft'));
  return rows.map((r) => resolveCandidate(lc, root, sid, { candidate: r.candidate_id, as, ...(as !== 'unique' && r.canonical_id ? { target: r.canonical_id } : {}), reason }));
}

/**
 * Warms the embedder's vectors for every candidate of the session and the
 * corpus, so the synchronous reconcile paths can use the semantic signal
 * (semantic.ts). No-op without a configured embedder; unreadable ledgers are
 * skipped here and reported by review.
 */
export async function warmSessionSemantic(lc: LifecycleContext, root: WorkflowRoot, sid: string): Promise<number> {
  const embedder = lc.semantic.embedder();
  if (!embedder) return 0;
  const cands: Array<{ content: string }> = [];
  for (const src of sessionSources(root, sid)) {
    try {
      cands.push(...readSourceState(src).candidates);
    } catch {
      // reported as "missing" by review
    }
  }
  // Every active corpus document and every candidate: what a reconcile of this session compares.
  const corpus = lc.corpus.read(root.workflowDir);
  return lc.semantic.warmTexts(embedder, [...corpus.docs.map((d) => d.content), ...cands.map((c) => c.content)]);
}
