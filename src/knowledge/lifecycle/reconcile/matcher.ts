/**
 * The matcher of FORMATS §4.4: every candidate against every active corpus
 * document, scored lexical / semantic / title / relation / stance / composite,
 * with novelty and readable evidence, then a disposition and an eligibility.
 * Thresholds are the published ones; do not tune them here.
 */
import { sha256 } from '../ledger/recipes.js';
import { feat, stanceOf, stanceScore, type Feat } from './features.js';
import { countOverlaps, type PreparedCorpus, type Sized } from './prepared.js';

// Text features and the prepared corpus live beside this file; their public names are re-exported here.
export { feat, similarity, stanceOf, type Feat } from './features.js';
export { associatedDocs, CorpusPreparer, prepareCorpus, type PreparedCorpus } from './prepared.js';

export type Disposition = 'unique' | 'exact_duplicate' | 'semantic_duplicate' | 'extends' | 'related' | 'potential_conflict' | 'supersede_candidate';
export type Eligibility = 'eligible' | 'review_required' | 'suppressed';
export type Relation = Exclude<Disposition, 'unique'>;

export interface MatchCandidate {
  candidate_id: string;
  target: string;
  action: string;
  title: string;
  content: string;
  evidence_refs: string[];
}

export interface Scores {
  lexical: number;
  semantic: number;
  title: number;
  relation: number;
  stance: number;
  composite: number;
}

export interface Match {
  knowledge_id: string;
  target: string;
  title: string;
  relation: Relation;
  scores: Scores;
  novelty: number;
  evidence: string[];
  target_content_hash: string;
  source_path: string;
  source_line: number | null;
}

export interface CandidateResult {
  candidate_id: string;
  disposition: Disposition;
  promotion_eligibility: Eligibility;
  canonical_id: string | null;
  matches: Match[];
  resolution: { status: 'automatic' | 'confirmed'; reason: string; resolved_at: string } | null;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

const PRIORITY: Record<Relation, number> = { exact_duplicate: 0, potential_conflict: 1, supersede_candidate: 2, semantic_duplicate: 3, extends: 4, related: 5 };

export interface MatchOptions {
  /** Embedding score in 0..1 (already divided by the max) per doc index; absent → lexical only. */
  semantic?: (c: Pick<MatchCandidate, 'content'>) => Map<number, number>;
}

export interface MatchStats {
  identity: number;
  semantic: number;
  relation: number;
}

/** One scored corpus document: identity flags, scores and novelty against the candidate. */
type Row = { i: number; exact: boolean; sameTitle: boolean; s: Scores; novelty: number };

export function matchCandidate(c: MatchCandidate, pc: PreparedCorpus, assoc: Set<number>, opts: MatchOptions = {}, stats?: MatchStats): CandidateResult {
  const scored = scoreMatches(c, pc, assoc, opts);
  if (stats) addStats(stats, scored.stats);
  return decide(c, scored.matches);
}

/** What scoring one candidate finds: its kept matches, best first, and what it adds to the receipt's retrieval counts. */
export interface ScoredMatches {
  matches: Match[];
  stats: MatchStats;
}

export function addStats(into: MatchStats, add: MatchStats): void {
  into.identity += add.identity;
  into.semantic += add.semantic;
  into.relation += add.relation;
}

/**
 * The costly part of `matchCandidate` (every document scored): its matches depend on the candidate's target,
 * action, title and content, the prepared corpus, the associated documents and the semantic scores only, so
 * they can be computed ahead, off the synchronous reconcile (scored.ts), and `decide`d later.
 */
export function scoreMatches(c: Pick<MatchCandidate, 'target' | 'action' | 'title' | 'content'>, pc: PreparedCorpus, assoc: Set<number>, opts: MatchOptions = {}): ScoredMatches {
  const emb = opts.semantic?.(c);
  const { identity, discovery, related } = scoreDocs(c, pc, assoc, emb);
  const { pool, taken } = capDiscovery(pc, identity, discovery, related);
  const stats: MatchStats = { identity: identity.length, semantic: emb ? taken : 0, relation: pool.filter((r) => r.s.relation > 0).length };
  const matches: Match[] = [];
  for (const r of pool) {
    if (!(r.exact || r.sameTitle || r.s.composite >= 0.42 || r.s.relation > 0)) continue;
    matches.push(toMatch(c, pc, r));
  }
  matches.sort((a, b) => PRIORITY[a.relation] - PRIORITY[b.relation] || b.scores.composite - a.scores.composite || a.knowledge_id.localeCompare(b.knowledge_id));
  matches.splice(12);
  return { matches, stats };
}

/** Scores every document and sorts the ones worth keeping: identity (same hash or title), discovery (composite ≥ 0.28), related (linked by this run's inputs only). */
function scoreDocs(c: Pick<MatchCandidate, 'target' | 'title' | 'content'>, pc: PreparedCorpus, assoc: Set<number>, emb: Map<number, number> | undefined): { identity: Row[]; discovery: Row[]; related: Row[] } {
  const cf = feat(c.content);
  const ct = feat(c.title);
  const chash = sha256(cf.nb);
  const cst = stanceOf(cf.nb);
  const identity: Row[] = [];
  const discovery: Row[] = [];
  const related: Row[] = [];
  const n = pc.docs.length;
  const tokOv = new Uint16Array(n);
  const triOv = new Uint16Array(n);
  const tTokOv = new Uint16Array(n);
  const tTriOv = new Uint16Array(n);
  countOverlaps(pc.tokIds, pc.postings.tok, cf.tok, tokOv);
  countOverlaps(pc.triIds, pc.postings.tri, cf.tri, triOv);
  countOverlaps(pc.tokIds, pc.postings.titleTok, ct.tok, tTokOv);
  countOverlaps(pc.triIds, pc.postings.titleTri, ct.tri, tTriOv);
  const sim = (a: Feat, b: Sized, tok: number, tri: number) => {
    const union = a.tok.size + b.tok.size - tok;
    const denom = a.tri.size + b.tri.size;
    return Math.min(1, 0.55 * (union ? tok / union : 0) + 0.45 * (denom ? (2 * tri) / denom : 0));
  };
  for (let i = 0; i < n; i++) {
    const d = pc.docs[i]!;
    const f = pc.feats[i]!;
    const exact = d.target === c.target && f.hash === chash;
    const sameTitle = ct.nb.length > 0 && f.title.nb === ct.nb;
    const lexical = sim(cf, f.content, tokOv[i]!, triOv[i]!);
    const title = sim(ct, f.title, tTokOv[i]!, tTriOv[i]!);
    const semantic = Math.max(lexical, emb?.get(i) ?? 0);
    const relation = assoc.has(i) ? 1 : 0;
    const composite = Math.min(1, 0.2 * title + 0.4 * semantic + 0.25 * lexical + 0.15 * relation);
    if (!exact && !sameTitle && relation === 0 && composite < 0.28) continue;
    const novelty = cf.tok.size ? (cf.tok.size - tokOv[i]!) / cf.tok.size : 0;
    const row: Row = { i, exact, sameTitle, s: { lexical, semantic, title, relation, stance: stanceScore(cst, f.stance), composite }, novelty };
    if (exact || sameTitle) identity.push(row);
    else if (composite >= 0.28) discovery.push(row);
    else related.push(row);
  }
  return { identity, discovery, related };
}

/** Discovery cap: best 16 by composite, ≤2 per family (target:source_path), ≤8 per target; capped rows stay only when linked. */
function capDiscovery(pc: PreparedCorpus, identity: Row[], discovery: Row[], related: Row[]): { pool: Row[]; taken: number } {
  discovery.sort((a, b) => b.s.composite - a.s.composite || pc.docs[a.i]!.id.localeCompare(pc.docs[b.i]!.id));
  const fam = new Map<string, number>();
  const perTarget = new Map<string, number>();
  const pool: Row[] = [...identity];
  let taken = 0;
  for (const r of discovery) {
    const d = pc.docs[r.i]!;
    if (taken >= 16) {
      if (r.s.relation > 0) pool.push(r);
      continue;
    }
    const fk = `${d.target}:${d.source_path}`;
    if ((fam.get(fk) ?? 0) >= 2 || (perTarget.get(d.target) ?? 0) >= 8) {
      if (r.s.relation > 0) pool.push(r);
      continue;
    }
    fam.set(fk, (fam.get(fk) ?? 0) + 1);
    perTarget.set(d.target, (perTarget.get(d.target) ?? 0) + 1);
    pool.push(r);
    taken++;
  }
  pool.push(...related);
  return { pool, taken };
}

/** The relation, scores and readable evidence of one kept row. */
function toMatch(c: Pick<MatchCandidate, 'target' | 'action'>, pc: PreparedCorpus, r: Row): Match {
  const d = pc.docs[r.i]!;
  const strong = r.sameTitle || r.s.composite >= 0.42;
  let rel: Relation;
  if (r.exact) rel = 'exact_duplicate';
  else if (d.target !== c.target) rel = 'related';
  else if (c.action === 'contest' && strong) rel = 'potential_conflict';
  else if (c.action === 'supersede' && strong) rel = 'supersede_candidate';
  else if (r.s.stance === 0 && Math.max(r.s.title, r.s.lexical) >= 0.52 && r.s.semantic >= 0.58) rel = 'potential_conflict';
  else if (r.s.composite >= 0.82 && r.novelty <= 0.18 && r.s.stance >= 0.5) rel = 'semantic_duplicate';
  else if (r.s.composite >= 0.62 && r.novelty > 0.18 && r.s.stance >= 0.5) rel = 'extends';
  else rel = 'related';
  const ev: string[] = [];
  if (r.exact) ev.push('normalized content hash equal');
  if (r.sameTitle) ev.push('same normalized title');
  ev.push(`lexical ${round(r.s.lexical)}, title ${round(r.s.title)}, composite ${round(r.s.composite)}`);
  if (r.s.semantic > r.s.lexical) ev.push(`embedding similarity ${round(r.s.semantic)}`);
  if (r.s.relation > 0) ev.push('linked to knowledge this run recorded as input');
  if (r.s.stance === 0) ev.push('opposite normative stance');
  ev.push(`novelty ${round(r.novelty)}`);
  return {
    knowledge_id: d.id,
    target: d.target,
    title: d.title,
    relation: rel,
    scores: { lexical: round(r.s.lexical), semantic: round(r.s.semantic), title: round(r.s.title), relation: r.s.relation, stance: r.s.stance, composite: round(r.s.composite) },
    novelty: round(r.novelty),
    evidence: ev,
    target_content_hash: pc.feats[r.i]!.hash,
    source_path: d.source_path,
    source_line: d.source_line,
  };
}

/** Disposition, eligibility and canonical match from the scored matches (cheap: no document is read). */
export function decide(c: MatchCandidate, matches: Match[]): CandidateResult {
  const has = (r: Relation) => matches.some((m) => m.relation === r);
  let disposition: Disposition;
  if (!matches.length) disposition = 'unique';
  else if (has('exact_duplicate')) disposition = 'exact_duplicate';
  else if (c.action === 'contest' && has('potential_conflict')) disposition = 'potential_conflict';
  else if (c.action === 'supersede' && has('supersede_candidate')) disposition = 'supersede_candidate';
  else disposition = (['potential_conflict', 'semantic_duplicate', 'extends', 'related'] as const).find(has) ?? (matches[0]!.relation as Disposition);
  let eligibility: Eligibility;
  let resolution: CandidateResult['resolution'] = null;
  if (disposition === 'exact_duplicate') {
    eligibility = 'suppressed';
    resolution = { status: 'automatic', reason: 'normalized content hash matches active project knowledge', resolved_at: new Date().toISOString() };
  } else if (['semantic_duplicate', 'potential_conflict', 'supersede_candidate', 'extends'].includes(disposition)) eligibility = 'review_required';
  else eligibility = 'eligible';
  if (eligibility === 'eligible') {
    const outside = c.evidence_refs.filter((e) => !e.startsWith('run:') && !e.startsWith('session:'));
    if (outside.length && outside.every((e) => e.startsWith('transcript:'))) eligibility = 'review_required';
  }
  const canonical = matches.find((m) => m.relation === disposition) ?? matches[0];
  return { candidate_id: c.candidate_id, disposition, promotion_eligibility: eligibility, canonical_id: canonical?.knowledge_id ?? null, matches, resolution };
}
