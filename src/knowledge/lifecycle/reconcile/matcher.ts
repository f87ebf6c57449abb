/**
 * The matcher of FORMATS §4.4: every candidate against every active corpus
 * document, scored lexical / semantic / title / relation / stance / composite,
 * with novelty and readable evidence, then a disposition and an eligibility.
 * Thresholds are the published ones; do not tune them here.
 */
import { normB, sha256, type CorpusDoc } from '../ledger/recipes.js';
import type { LedgerInput } from '../ledger/ledger.js';

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

const TOKEN_RE = /\p{Script=Han}|[\p{L}\p{N}_-]+/gu;

function tokens(nb: string): Set<string> {
  return new Set(nb.match(TOKEN_RE) ?? []);
}
/**
 * A trigram as a number, so no substring is allocated: three code units below
 * 1024 (Latin, Greek, Cyrillic…) pack into 30 bits, a small integer V8 hashes
 * cheaply; any other trigram is 2^50 + its three UTF-16 code units in 48 bits
 * (exact in a double, never equal to a packed key). A string shorter than 3
 * is its own (string) key; a 3-char string's key equals its one window's.
 */
type TriKey = number | string;
const triKey = (s: string, i: number) => {
  const a = s.charCodeAt(i);
  const b = s.charCodeAt(i + 1);
  const c = s.charCodeAt(i + 2);
  return a < 1024 && b < 1024 && c < 1024 ? (a << 20) | (b << 10) | c : 1125899906842624 + a * 4294967296 + b * 65536 + c;
};
const squeeze = (nb: string) => nb.replace(/\s+/g, '');
function trigrams(nb: string): Set<TriKey> {
  const s = squeeze(nb);
  if (s.length < 3) return new Set(s ? [s] : []);
  const out = new Set<TriKey>();
  for (let i = 0; i + 3 <= s.length; i++) out.add(triKey(s, i));
  return out;
}
function overlap<T>(a: Set<T>, b: Set<T>): number {
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const x of small) if (big.has(x)) n++;
  return n;
}

export interface Feat {
  nb: string;
  tok: Set<string>;
  tri: Set<TriKey>;
}
export function feat(text: string): Feat {
  const nb = normB(text);
  return { nb, tok: tokens(nb), tri: trigrams(nb) };
}
/** The set-based definition; matchCandidate computes the same value from posting counts (tested equal). */
export function similarity(a: Feat, b: Feat): number {
  const it = overlap(a.tok, b.tok);
  const union = a.tok.size + b.tok.size - it;
  const jac = union ? it / union : 0;
  const denom = a.tri.size + b.tri.size;
  const dice = denom ? (2 * overlap(a.tri, b.tri)) / denom : 0;
  return Math.min(1, 0.55 * jac + 0.45 * dice);
}

type Stance = 'negative' | 'positive' | 'unknown';
const NEG_EN = /\b(must not|never|forbid(?:den)?|prohibit(?:ed)?)\b/g;
const NEG_ZH = /不得|禁止|严禁|不可|不能/g;
const POS_EN = /\b(must|require(?:d)?|shall|should|allow(?:ed)?)\b/;
const POS_ZH = /必须|应当|需要|允许|务必/;

export function stanceOf(nb: string): Stance {
  const neg = NEG_EN.test(nb) || NEG_ZH.test(nb);
  NEG_EN.lastIndex = 0;
  NEG_ZH.lastIndex = 0;
  const rest = nb.replace(NEG_EN, ' ').replace(NEG_ZH, ' ');
  const pos = POS_EN.test(rest) || POS_ZH.test(rest);
  if (neg && !pos) return 'negative';
  if (pos && !neg) return 'positive';
  return 'unknown';
}
function stanceScore(a: Stance, b: Stance): number {
  if (a === 'unknown' || b === 'unknown') return 0.5;
  return a === b ? 1 : 0;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * A prepared corpus: per-document features computed once, tokens and
 * trigrams interned, with posting lists, so a candidate's overlaps with every
 * document are counted by walking only the postings of its own tokens
 * (the same counts the set intersections of `similarity` give).
 */
interface Sized {
  nb: string;
  tok: { size: number };
  tri: { size: number };
}

export interface PreparedCorpus {
  docs: CorpusDoc[];
  /** Per document: what scoring needs once the sets are in the postings (normalized title, set sizes, hash, stance). */
  feats: Array<{ title: Sized; content: Sized; hash: string; stance: Stance }>;
  byAlias: Map<string, number>;
  /** Interned tokens and trigrams (separate id spaces). */
  tokIds: Map<string, number>;
  triIds: Map<TriKey, number>;
  postings: { tok: number[][]; tri: number[][]; titleTok: number[][]; titleTri: number[][] };
}

/**
 * Interned keys, shared by every prepared corpus of this process, and each
 * document's unique key ids cached by its (title, content): after one file
 * changes, preparing the corpus again tokenizes only that file's documents and
 * rebuilds the postings from integers. Reset when it grows far past the corpus.
 */
let TOK = new Map<string, number>();
let TRI = new Map<TriKey, number>();
interface DocFeat {
  tnb: string;
  ctok: Int32Array;
  ctri: Int32Array;
  ttok: Int32Array;
  ttri: Int32Array;
  hash: string;
  stance: Stance;
}
let FEATS = new Map<string, DocFeat>();
/** Generation marks per key id: dedupe a document's keys without a Set. */
let tokMark = new Int32Array(1 << 16);
let triMark = new Int32Array(1 << 16);
let gen = 0;

function grow(a: Int32Array<ArrayBuffer>, id: number): Int32Array<ArrayBuffer> {
  if (id < a.length) return a;
  const b = new Int32Array(Math.max(a.length * 2, id + 1));
  b.set(a);
  return b;
}
function tokenIds(nb: string): Int32Array {
  const g = ++gen;
  const out: number[] = [];
  for (const t of nb.match(TOKEN_RE) ?? []) {
    let id = TOK.get(t);
    if (id === undefined) TOK.set(t, (id = TOK.size));
    tokMark = grow(tokMark, id);
    if (tokMark[id] === g) continue;
    tokMark[id] = g;
    out.push(id);
  }
  return Int32Array.from(out);
}
function trigramIds(nb: string): Int32Array {
  const g = ++gen;
  const out: number[] = [];
  const s = squeeze(nb);
  const add = (k: TriKey) => {
    let id = TRI.get(k);
    if (id === undefined) TRI.set(k, (id = TRI.size));
    triMark = grow(triMark, id);
    if (triMark[id] === g) return;
    triMark[id] = g;
    out.push(id);
  };
  if (s.length < 3) {
    if (s) add(s);
  } else for (let i = 0; i + 3 <= s.length; i++) add(triKey(s, i));
  return Int32Array.from(out);
}
function docFeat(d: CorpusDoc): DocFeat {
  const key = `${d.title}\0${d.content}`;
  let f = FEATS.get(key);
  if (!f) {
    const cnb = normB(d.content);
    const tnb = normB(d.title);
    f = { tnb, ctok: tokenIds(cnb), ctri: trigramIds(cnb), ttok: tokenIds(tnb), ttri: trigramIds(tnb), hash: sha256(cnb), stance: stanceOf(cnb) };
    FEATS.set(key, f);
  }
  return f;
}
function postAll(lists: number[][], ids: Int32Array, doc: number): void {
  for (let k = 0; k < ids.length; k++) (lists[ids[k]!] ??= []).push(doc);
}

let lastPrepared: { key: string; docs: CorpusDoc[]; pc: PreparedCorpus } | null = null;

/** prepareCorpus, reused while the corpus fingerprint (and so every document) is unchanged. */
export function preparedFor(fingerprint: string, docs: CorpusDoc[]): PreparedCorpus {
  // The same docs array (the corpus cache hands out one until a file changes): same ids, lines and text.
  if (lastPrepared?.key === fingerprint && lastPrepared.docs === docs) return lastPrepared.pc;
  const pc = prepareCorpus(docs);
  lastPrepared = { key: fingerprint, docs, pc };
  return pc;
}

export function prepareCorpus(docs: CorpusDoc[]): PreparedCorpus {
  const byAlias = new Map<string, number>();
  docs.forEach((d, i) => {
    for (const a of [d.id, ...d.aliases]) if (!byAlias.has(a)) byAlias.set(a, i);
  });
  if (FEATS.size > 4 * docs.length + 10_000 || TOK.size + TRI.size > 20_000_000) {
    // Start over with new maps: corpora prepared before keep theirs, so their ids stay valid.
    FEATS = new Map();
    TOK = new Map();
    TRI = new Map();
  }
  const postings = { tok: [] as number[][], tri: [] as number[][], titleTok: [] as number[][], titleTri: [] as number[][] };
  const feats = docs.map((d, i) => {
    const f = docFeat(d);
    postAll(postings.tok, f.ctok, i);
    postAll(postings.tri, f.ctri, i);
    postAll(postings.titleTok, f.ttok, i);
    postAll(postings.titleTri, f.ttri, i);
    const content: Sized = { nb: '', tok: { size: f.ctok.length }, tri: { size: f.ctri.length } };
    const title: Sized = { nb: f.tnb, tok: { size: f.ttok.length }, tri: { size: f.ttri.length } };
    return { title, content, hash: f.hash, stance: f.stance };
  });
  return { docs, byAlias, feats, tokIds: TOK, triIds: TRI, postings };
}

function countOverlaps<K>(ids: Map<K, number>, lists: number[][], items: Set<K>, out: Uint16Array): void {
  for (const x of items) {
    const id = ids.get(x);
    if (id === undefined) continue;
    const l = lists[id];
    if (l) for (let k = 0; k < l.length; k++) out[l[k]!]!++;
  }
}

/** Docs associated with the ledger's inputs: named by an alias, or linked from such a doc. */
export function associatedDocs(pc: PreparedCorpus, inputs: LedgerInput[]): Set<number> {
  const out = new Set<number>();
  for (const inp of inputs) {
    const i = pc.byAlias.get(inp.knowledge_id);
    if (i === undefined) continue;
    out.add(i);
    const d = pc.docs[i]!;
    for (const ref of [...d.related, ...d.supersedes, ...(d.superseded_by ? [d.superseded_by] : [])]) {
      const j = pc.byAlias.get(ref);
      if (j !== undefined) out.add(j);
    }
  }
  return out;
}

const PRIORITY: Record<Relation, number> = { exact_duplicate: 0, potential_conflict: 1, supersede_candidate: 2, semantic_duplicate: 3, extends: 4, related: 5 };

export interface MatchOptions {
  /** Embedding score in 0..1 (already divided by the max) per doc index; absent → lexical only. */
  semantic?: (c: MatchCandidate) => Map<number, number>;
}

export interface MatchStats {
  identity: number;
  semantic: number;
  relation: number;
}

export function matchCandidate(c: MatchCandidate, pc: PreparedCorpus, assoc: Set<number>, opts: MatchOptions = {}, stats?: MatchStats): CandidateResult {
  const cf = feat(c.content);
  const ct = feat(c.title);
  const chash = sha256(cf.nb);
  const cst = stanceOf(cf.nb);
  const emb = opts.semantic?.(c);
  type Row = { i: number; exact: boolean; sameTitle: boolean; s: Scores; novelty: number };
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
  // Discovery cap: best 16 by composite, ≤2 per family (target:source_path), ≤8 per target.
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
  if (stats) {
    stats.identity += identity.length;
    stats.semantic += emb ? taken : 0;
    stats.relation += pool.filter((r) => r.s.relation > 0).length;
  }

  const matches: Match[] = [];
  for (const r of pool) {
    if (!(r.exact || r.sameTitle || r.s.composite >= 0.42 || r.s.relation > 0)) continue;
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
    matches.push({
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
    });
  }
  matches.sort((a, b) => PRIORITY[a.relation] - PRIORITY[b.relation] || b.scores.composite - a.scores.composite || a.knowledge_id.localeCompare(b.knowledge_id));
  matches.splice(12);
  return decide(c, matches);
}

function decide(c: MatchCandidate, matches: Match[]): CandidateResult {
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
