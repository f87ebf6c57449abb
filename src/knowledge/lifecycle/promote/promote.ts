/**
 * `maestro knowledge promote`: eligible candidates only, every source receipt
 * fresh, every source run sealed. Per candidate: intent (promoting + planned
 * id) on disk → knowledge file written under the corpus lock → outcome on
 * disk. Interrupted anywhere, a rerun finds the planned id already written and
 * only completes the receipt: nothing is written twice.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { specEntryId } from '../../format/corpus.js';
import { addKnowhow, explicitIdFileName, supersedeKnowhow } from '../../format/knowhowWriter.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import type { LifecycleContext } from '../context.js';
import { updateLedger, type LedgerCandidate } from '../ledger/ledger.js';
import { candidateContentHash, normA } from '../ledger/recipes.js';
import { withCorpusLock } from '../../format/lock.js';
import { readSourceState, sessionSources, type Receipt, type RefreshHint, type Source } from '../reconcile/receipt.js';
import { changedMessage, clashMessage, freshForPromotion, titleClash } from './gates.js';
import { sourceOfCandidate } from '../reconcile/review.js';
import { assertInsideRoot, specDirs, type WorkflowRoot } from '../../format/root.js';
import { isSealed, readRun, readSession, sessionDir } from '../session/store.js';
import { appendSpecEntry, neutralizeSpecTags, supersedeSpec, targetFileFor } from '../../format/specWriter.js';
import { isCategory, parseSpecText } from '../../format/specParser.js';
import { readPromotions, updatePromotions, type PromotionEntry } from './promotion.js';

export interface PromotionResult {
  schema: 'knowledge-promotion-result/1.0';
  session_id: string;
  promoted: Array<{ candidate_id: string; target: string; promoted_id: string; outcome: 'created' | 'reaffirmed'; supersedes: string | null }>;
  already_promoted: Array<{ candidate_id: string; promoted_id: string | null }>;
  skipped_observed: string[];
  skipped_review_required: string[];
  skipped_suppressed: string[];
  skipped_blocked: Array<{ candidate_id: string; reason: string }>;
  warnings: string[];
}

const ymd = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

/**
 * Planned ids are dated by the candidate's first_recorded_at (its first 10 characters, as written),
 * as maestro-flow dates them; a promotion on another day plans the same id.
 */
export function plannedId(cand: Pick<LedgerCandidate, 'target' | 'candidate_id' | 'first_recorded_at'>, now: Date): string {
  const day = /^\d{4}-\d{2}-\d{2}/.test(cand.first_recorded_at) ? cand.first_recorded_at.slice(0, 10).replace(/-/g, '') : ymd(now);
  return `${cand.target === 'spec' ? 'S' : 'tip'}-${day}-${cand.candidate_id.slice(4)}`;
}

export interface PromoteOptions {
  candidates?: string[];
  all?: boolean;
  now?: Date;
  /** How long to wait for the corpus lock (default LOCK_TIMEOUT_MS, 10 s). */
  lockTimeoutMs?: number;
  /** How a missing or unreadable receipt's error says to refresh it (the CLI's flag unless told). */
  hint?: RefreshHint;
  /** Test seam: runs after every gate passed, before the first write. */
  afterGates?: () => void;
  /** Test seam (the kill -9 suite ends the process here): runs after a candidate's knowledge file is written, before its receipt. */
  afterWrite?: (candidateId: string) => void;
}

type Work = { src: Source; cand: LedgerCandidate; entry: Receipt['candidates'][number] };
type Corpus = CorpusSnapshot;

export function promote(lc: LifecycleContext, root: WorkflowRoot, sid: string, opts: PromoteOptions): PromotionResult {
  readSession(root, sid);
  const now = opts.now ?? new Date();
  const res: PromotionResult = { schema: 'knowledge-promotion-result/1.0', session_id: sid, promoted: [], already_promoted: [], skipped_observed: [], skipped_review_required: [], skipped_suppressed: [], skipped_blocked: [], warnings: [] };
  const wanted = [...new Set((opts.candidates ?? []).flatMap((c) => c.split(',')).map((c) => c.trim()).filter(Boolean))];
  if (!opts.all && !wanted.length) throw new MaestroError('BAD_INPUT', 'promote needs --candidate <id> (repeatable, commas accepted) or --all.');
  for (const id of wanted) if (!/^KDC-[a-f0-9]{16}$/.test(id)) throw new MaestroError('BAD_INPUT', `--candidate ${id} is not a candidate id (KDC-<16 hex>).`);

  const selected = selectSources(root, sid, opts, wanted);
  // Gates first, for every source, before anything is written (fail closed).
  const corpus = lc.corpus.read(root.workflowDir);
  const { work, seenIn } = gateSources(lc, root, sid, opts, selected, corpus, res);
  for (const id of wanted) if (!work.some((w) => w.cand.candidate_id === id) && !res.skipped_blocked.some((b) => b.candidate_id === id)) {
    res.already_promoted.push({ candidate_id: id, promoted_id: findPromoted(root, sid, id) });
  }

  assertTargetsInside(root, sid, work, now);
  opts.afterGates?.();
  for (const w of work) promoteWork(root, sid, opts, w, { corpus, seenIn, now, res });
  return res;
}

/**
 * The last gate: every file this promotion writes lies inside the project's .workflow/ on disk, not
 * only by its path (a symbolic link could lead a spec file or the session folder out of it), and
 * none is a link. Checked for all candidates before the first intent is written, so a refusal
 * leaves nothing half done. (A run folder may be a link: Maestro makes it one, to the
 * orchestrator's run directory; its receipt is checked where it is written, promotion.ts.)
 */
function assertTargetsInside(root: WorkflowRoot, sid: string, work: Work[], now: Date): void {
  assertInsideRoot(root, sessionDir(root, sid));
  for (const { cand } of work) {
    if (cand.target === 'spec') assertInsideRoot(root, specFileOf(root, cand));
    else assertInsideRoot(root, join(root.workflowDir, 'knowhow', explicitIdFileName(plannedId(cand, now))));
  }
}

/** Which sources are involved: explicit selection touches only its candidates' sources. */
function selectSources(root: WorkflowRoot, sid: string, opts: PromoteOptions, wanted: string[]): Map<string, { src: Source; ids: Set<string> | null }> {
  const selected = new Map<string, { src: Source; ids: Set<string> | null }>();
  if (opts.all) for (const src of sessionSources(root, sid)) selected.set(src.rid, { src, ids: null });
  else
    for (const id of wanted) {
      const src = sourceOfCandidate(root, sid, id);
      const s = selected.get(src.rid) ?? { src, ids: new Set<string>() };
      s.ids!.add(id);
      selected.set(src.rid, s);
    }
  return selected;
}

/**
 * The gates of every selected source: readable state, fresh receipt, sealed run, staged report.
 * Under --all a failing source is skipped with a reason; otherwise it throws. Returns the candidates
 * that passed, and in how many ledgers each was seen (corroboration).
 */
function gateSources(lc: LifecycleContext, root: WorkflowRoot, sid: string, opts: PromoteOptions, selected: Map<string, { src: Source; ids: Set<string> | null }>, corpus: Corpus, res: PromotionResult): { work: Work[]; seenIn: Map<string, number> } {
  const work: Work[] = [];
  const seenIn = new Map<string, number>();
  for (const { src, ids } of selected.values()) {
    let state;
    try {
      state = readSourceState(src);
    } catch (err) {
      // A corrupt ledger blocks only its own run under --all (seed 000 §11.1).
      if (!opts.all) throw err;
      res.warnings.push(`${src.rid}: skipped, ${(err as Error).message}`);
      continue;
    }
    if (!state.candidates.some((c) => !ids || ids.has(c.candidate_id))) continue;
    const promos = readPromotions(src.dir)?.entries ?? {};
    const resuming = new Set(Object.keys(promos).filter((k) => promos[k]!.state === 'promoting'));
    const fresh = freshForPromotion(lc, root, src, corpus, ids, resuming, opts.hint);
    if (fresh.changed.size && !opts.all) throw new MaestroError('STALE_RECEIPT', `Cannot promote: ${changedMessage(src, [...fresh.changed])}.`);
    const cands = fresh.state.candidates.filter((c) => !ids || ids.has(c.candidate_id));
    if (!cands.length) continue;
    if (src.rid !== 'session' && !isSealed(readRun(root, sid, src.rid))) {
      const msg = `source run ${src.rid} is not sealed (maestro run seal ${src.rid} --session ${sid})`;
      if (!opts.all) throw new MaestroError('ILLEGAL_TRANSITION', `Cannot promote from run ${src.rid}: ${msg}.`);
      for (const c of cands) res.skipped_blocked.push({ candidate_id: c.candidate_id, reason: msg });
      continue;
    }
    for (const c of cands) {
      seenIn.set(c.candidate_id, (seenIn.get(c.candidate_id) ?? 0) + 1);
      if (fresh.changed.has(c.candidate_id)) {
        res.skipped_blocked.push({ candidate_id: c.candidate_id, reason: changedMessage(src, [c.candidate_id]) });
        continue;
      }
      if (!('status' in c)) {
        res.skipped_blocked.push({ candidate_id: c.candidate_id, reason: `report draft not staged yet (maestro run complete ${src.rid} --session ${sid})` });
        continue;
      }
      work.push({ src, cand: c, entry: fresh.receipt.candidates.find((x) => x.candidate_id === c.candidate_id)! });
    }
  }
  return { work, seenIn };
}

/** One gated candidate: already promoted, skipped by its eligibility or a title clash, or promoted. */
function promoteWork(root: WorkflowRoot, sid: string, opts: PromoteOptions, { src, cand, entry }: Work, ctx: { corpus: Corpus; seenIn: Map<string, number>; now: Date; res: PromotionResult }): void {
  const { corpus, seenIn, now, res } = ctx;
  const prior = readPromotions(src.dir)?.entries[cand.candidate_id];
  if (prior?.state === 'promoted' || cand.status === 'promoted') {
    res.already_promoted.push({ candidate_id: cand.candidate_id, promoted_id: prior?.promoted_id ?? cand.promoted_id });
    return;
  }
  // An interrupted promotion passed every gate before its intent was written; the "duplicate"
  // a refreshed receipt now sees is its own planned entry, so it is completed, not suppressed.
  const resuming = prior?.state === 'promoting';
  if (!resuming && (cand.status === 'rejected' || entry.promotion_eligibility === 'suppressed')) {
    res.skipped_suppressed.push(cand.candidate_id);
    return;
  }
  if (!resuming && entry.promotion_eligibility === 'review_required') {
    res.skipped_review_required.push(cand.candidate_id);
    return;
  }
  const supersedes = resuming ? prior.supersedes : entry.disposition === 'supersede_candidate' ? entry.canonical_id : null;
  const clash = resuming ? null : titleClash(cand, corpus.docs, supersedes);
  if (clash) {
    if (!opts.all) throw new MaestroError('KNOWLEDGE_CONFLICT', `Cannot promote: ${clashMessage(cand.candidate_id, clash, sid)}.`);
    res.skipped_blocked.push({ candidate_id: cand.candidate_id, reason: clashMessage(cand.candidate_id, clash, sid) });
    return;
  }
  if (opts.all && (seenIn.get(cand.candidate_id) ?? 1) < 2) res.warnings.push(`${cand.candidate_id} is observed in one ledger only (not corroborated); promoted anyway`);
  const one = promoteOne(root, src, cand, supersedes, prior ?? null, now, corpus.docs, opts);
  if ('already' in one) res.already_promoted.push({ candidate_id: cand.candidate_id, promoted_id: one.already });
  else res.promoted.push(one);
}

function findPromoted(root: WorkflowRoot, sid: string, id: string): string | null {
  for (const src of sessionSources(root, sid)) {
    const e = readPromotions(src.dir)?.entries[id];
    if (e?.state === 'promoted') return e.promoted_id;
  }
  throw new MaestroError('BAD_INPUT', `Candidate ${id} is not pending in session ${sid}.`);
}

function specFileOf(root: WorkflowRoot, cand: LedgerCandidate): string {
  const category = cand.category && isCategory(cand.category) ? cand.category : 'learning';
  return join(specDirs(root).find((d) => d.scope === 'project')!.dir, targetFileFor(category));
}

/**
 * One candidate, start to finish, under the corpus lock (the spec file's, or
 * the namespace's for knowhow): waiting for it is bounded by `lockTimeoutMs`,
 * and a timeout fails closed before anything of this candidate is written
 * (seed 000 §11.1). The nested locks of the writers are re-entrant.
 */
type OneResult = PromotionResult['promoted'][number] | { already: string | null };

function promoteOne(root: WorkflowRoot, src: Source, cand: LedgerCandidate, supersedes: string | null, prior: PromotionEntry | null, now: Date, docs: Corpus['docs'], { lockTimeoutMs, afterWrite }: PromoteOptions): OneResult {
  const target = cand.target === 'spec' ? specFileOf(root, cand) : join(src.dir, 'knowledge-promotion.json');
  return withCorpusLock([target], () => promoteOneLocked(root, src, cand, supersedes, prior, now, docs, afterWrite), lockTimeoutMs === undefined ? {} : { timeoutMs: lockTimeoutMs });
}

function promoteOneLocked(root: WorkflowRoot, src: Source, cand: LedgerCandidate, supersedes: string | null, priorSeen: PromotionEntry | null, now: Date, docs: Corpus['docs'], afterWrite?: (candidateId: string) => void): OneResult {
  // Read again under the lock: a concurrent promote of the same candidate may have finished while
  // this one waited; it reports `already promoted` instead of a second `created`.
  const prior = readPromotions(src.dir)?.entries[cand.candidate_id] ?? priorSeen;
  if (prior?.state === 'promoted') return { already: prior.promoted_id };
  const planned = prior?.planned_id ?? plannedId(cand, now);
  const contentHash = candidateContentHash(cand.content);
  // 1. Intent on disk before any knowledge file is touched.
  updatePromotions(root, src.dir, src.sid, src.rid, (f) => {
    f.entries[cand.candidate_id] = { state: 'promoting', target: cand.target, planned_id: planned, promoted_id: null, content_hash: contentHash, outcome: null, supersedes, planned_at: prior?.planned_at ?? now.toISOString(), promoted_at: null };
  });
  setLedgerStatus(src, cand.candidate_id, 'promoting', planned, null);

  // 2. The knowledge file, idempotent on the planned id.
  let promotedId: string;
  let outcome: 'created' | 'reaffirmed';
  const evidence = cand.evidence_refs.join(', ');
  if (cand.target === 'spec') {
    const category = cand.category && isCategory(cand.category) ? cand.category : 'learning';
    const dir = specDirs(root).find((d) => d.scope === 'project')!;
    const file = specFileOf(root, cand);
    ({ promotedId, outcome } = withCorpusLock([file], () => {
      const parsed = existsSync(file) ? parseSpecText(readFileSync(file, 'utf8'), file) : null;
      if (parsed?.entries.some((e) => e.sid === planned)) return { promotedId: planned, outcome: 'created' as const };
      const same = parsed?.entries.find((e) => e.status === 'active' && normA(e.title) === normA(cand.title) && normA(e.content.replace(/^\s*###[^\n]*\n?/, '')) === normA(neutralizeSpecTags(cand.content)));
      if (same) return { promotedId: same.sid ?? specEntryId(dir, file, same.ordinal), outcome: 'reaffirmed' as const };
      appendSpecEntry(root, { category, title: cand.title, content: neutralizeSpecTags(cand.content), keywords: ['session-knowledge', cand.source_kind], source: `session:${src.sid}:${cand.candidate_id}`, description: `Promoted from ${evidence}`, sid: planned, allowDuplicateTitle: true, now });
      return { promotedId: planned, outcome: 'created' as const };
    }));
  } else {
    const knowhowId = `knowhow-${planned.toLowerCase()}`;
    const same = docs.find((d) => d.target === 'knowhow' && d.id !== knowhowId && normA(d.content) === normA(cand.content));
    if (same) {
      promotedId = same.id;
      outcome = 'reaffirmed';
    } else {
      const r = addKnowhow(root, { type: 'tip', title: cand.title, body: cand.content, description: `Promoted from ${evidence}`, explicitId: planned, keywords: ['session-knowledge', cand.source_kind], tags: ['promoted'], now });
      promotedId = r.id;
      outcome = 'created';
    }
  }
  afterWrite?.(cand.candidate_id);
  if (supersedes && outcome === 'created') {
    if (cand.target === 'spec') supersedeSpec(root, supersedes, promotedId, { now });
    else supersedeKnowhow(root, supersedes, promotedId);
  }

  // 3. Outcome on disk.
  const at = new Date().toISOString();
  updatePromotions(root, src.dir, src.sid, src.rid, (f) => {
    const e = f.entries[cand.candidate_id]!;
    Object.assign(e, { state: 'promoted', promoted_id: promotedId, outcome, promoted_at: at });
  });
  setLedgerStatus(src, cand.candidate_id, 'promoted', promotedId, { outcome, promoted_at: at, content_hash: contentHash });
  return { candidate_id: cand.candidate_id, target: cand.target, promoted_id: promotedId, outcome, supersedes };
}

/**
 * FORMATS §4.1 statuses in the ledger the candidate came from, where maestro-flow reads them: run
 * ledgers too (maestro-flow writes a sealed run's ledger for exactly this), so it never sees a promoted
 * candidate as pending. The promotion receipt stays the record Maestro replays from.
 */
function setLedgerStatus(src: Source, id: string, status: 'promoting' | 'promoted', promotedId: string, receipt: LedgerCandidate['promotion_receipt']): void {
  if (!existsSync(src.ledgerPath)) return; // a report draft promoted before staging has no ledger row
  updateLedger(src.ledgerPath, () => {
    throw new MaestroError('BAD_INPUT', `${src.ledgerPath} disappeared during promotion.`);
  }, (l) => {
    const c = l.candidates.find((x) => x.candidate_id === id);
    if (!c || c.status === 'promoted') return;
    c.status = status;
    c.promoted_id = promotedId;
    if (receipt) c.promotion_receipt = receipt;
  });
}
