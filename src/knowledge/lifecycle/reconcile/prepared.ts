/**
 * The corpus side of the matcher (matcher.ts): documents' features computed
 * once and indexed by posting lists, and the documents a ledger's inputs name.
 */
import { loopSlices } from '../../../lib/loopSlices.js';
import { normB, sha256, type CorpusDoc } from '../ledger/recipes.js';
import type { LedgerInput } from '../ledger/ledger.js';
import { TOKEN_RE, squeeze, stanceOf, triKey, type Stance, type TriKey } from './features.js';

/**
 * A prepared corpus: per-document features computed once, tokens and
 * trigrams interned, with posting lists, so a candidate's overlaps with every
 * document are counted by walking only the postings of its own tokens
 * (the same counts the set intersections of `similarity` give).
 */
export interface Sized {
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

/** The maps a prepare interns keys into, and the documents' features by (title, content). */
interface Interned {
  tok: Map<string, number>;
  tri: Map<TriKey, number>;
  feats: Map<string, DocFeat>;
}

interface DocFeat {
  tnb: string;
  ctok: Int32Array;
  ctri: Int32Array;
  ttok: Int32Array;
  ttri: Int32Array;
  hash: string;
  stance: Stance;
}

function grow(a: Int32Array<ArrayBuffer>, id: number): Int32Array<ArrayBuffer> {
  if (id < a.length) return a;
  const b = new Int32Array(Math.max(a.length * 2, id + 1));
  b.set(a);
  return b;
}

function postAll(lists: number[][], ids: Int32Array, doc: number): void {
  for (let k = 0; k < ids.length; k++) (lists[ids[k]!] ??= []).push(doc);
}

/**
 * Prepares corpora, keeping between calls the interned keys (shared by every
 * corpus it prepares) and each document's unique key ids cached by its
 * (title, content): after one file changes, preparing the corpus again
 * tokenizes only that file's documents and rebuilds the postings from
 * integers. The keys start over when they grow far past the corpus. Its owner
 * (the lifecycle context, context.ts) drops it with the service.
 */
export class CorpusPreparer {
  private tok = new Map<string, number>();
  private tri = new Map<TriKey, number>();
  private feats = new Map<string, DocFeat>();
  /** Generation marks per key id: dedupe a document's keys without a Set. */
  private tokMark = new Int32Array(1 << 16);
  private triMark = new Int32Array(1 << 16);
  private gen = 0;
  private last: { key: string; docs: CorpusDoc[]; pc: PreparedCorpus } | null = null;

  /** Drops the interned keys and the last prepared corpus (the owner's stop()); corpora prepared before keep their own maps. */
  clear(): void {
    this.feats = new Map();
    this.tok = new Map();
    this.tri = new Map();
    this.last = null;
  }

  /** `prepare`, reused while the corpus fingerprint (and so every document) is unchanged. */
  preparedFor(fingerprint: string, docs: CorpusDoc[]): PreparedCorpus {
    // The same docs array (the corpus cache hands out one until a file changes): same ids, lines and text.
    if (this.last?.key === fingerprint && this.last.docs === docs) return this.last.pc;
    return this.keep(fingerprint, docs, this.prepare(docs));
  }

  /**
   * `preparedFor` in slices of about `sliceMs` that give the event loop a turn (reconcile/scoreAhead.ts):
   * preparing 10,000 documents new to this process is about a second. The same steps as `prepare`.
   */
  async preparedForSliced(fingerprint: string, docs: CorpusDoc[], sliceMs: number): Promise<PreparedCorpus> {
    if (this.last?.key === fingerprint && this.last.docs === docs) return this.last.pc;
    const steps = this.steps(docs);
    const turn = loopSlices(sliceMs);
    for (let r = steps.next(); ; r = steps.next()) {
      if (r.done) return this.keep(fingerprint, docs, r.value);
      await turn();
    }
  }

  private keep(fingerprint: string, docs: CorpusDoc[], pc: PreparedCorpus): PreparedCorpus {
    this.last = { key: fingerprint, docs, pc };
    return pc;
  }

  prepare(docs: CorpusDoc[]): PreparedCorpus {
    const steps = this.steps(docs);
    for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
  }

  /**
   * Prepares `docs`, pausing after each document. The maps it interns into are taken once, at the start: a
   * prepare that starts over meanwhile (another caller's, between two pauses) leaves this one's ids consistent.
   */
  private *steps(docs: CorpusDoc[]): Generator<void, PreparedCorpus> {
    const byAlias = new Map<string, number>();
    docs.forEach((d, i) => {
      for (const a of [d.id, ...d.aliases]) if (!byAlias.has(a)) byAlias.set(a, i);
    });
    if (this.feats.size > 4 * docs.length + 10_000 || this.tok.size + this.tri.size > 20_000_000) {
      // Start over with new maps: corpora prepared before keep theirs, so their ids stay valid.
      this.feats = new Map();
      this.tok = new Map();
      this.tri = new Map();
    }
    const maps: Interned = { tok: this.tok, tri: this.tri, feats: this.feats };
    const postings = { tok: [] as number[][], tri: [] as number[][], titleTok: [] as number[][], titleTri: [] as number[][] };
    const feats: PreparedCorpus['feats'] = [];
    for (const [i, d] of docs.entries()) {
      const f = this.docFeat(maps, d);
      postAll(postings.tok, f.ctok, i);
      postAll(postings.tri, f.ctri, i);
      postAll(postings.titleTok, f.ttok, i);
      postAll(postings.titleTri, f.ttri, i);
      const content: Sized = { nb: '', tok: { size: f.ctok.length }, tri: { size: f.ctri.length } };
      const title: Sized = { nb: f.tnb, tok: { size: f.ttok.length }, tri: { size: f.ttri.length } };
      feats.push({ title, content, hash: f.hash, stance: f.stance });
      yield;
    }
    return { docs, byAlias, feats, tokIds: maps.tok, triIds: maps.tri, postings };
  }

  private tokenIds(tok: Map<string, number>, nb: string): Int32Array {
    const g = ++this.gen;
    const out: number[] = [];
    for (const t of nb.match(TOKEN_RE) ?? []) {
      let id = tok.get(t);
      if (id === undefined) tok.set(t, (id = tok.size));
      this.tokMark = grow(this.tokMark, id);
      if (this.tokMark[id] === g) continue;
      this.tokMark[id] = g;
      out.push(id);
    }
    return Int32Array.from(out);
  }

  private trigramIds(tri: Map<TriKey, number>, nb: string): Int32Array {
    const g = ++this.gen;
    const out: number[] = [];
    const s = squeeze(nb);
    const add = (k: TriKey) => {
      let id = tri.get(k);
      if (id === undefined) tri.set(k, (id = tri.size));
      this.triMark = grow(this.triMark, id);
      if (this.triMark[id] === g) return;
      this.triMark[id] = g;
      out.push(id);
    };
    if (s.length < 3) {
      if (s) add(s);
    } else for (let i = 0; i + 3 <= s.length; i++) add(triKey(s, i));
    return Int32Array.from(out);
  }

  private docFeat(maps: Interned, d: CorpusDoc): DocFeat {
    const key = `${d.title}\0${d.content}`;
    let f = maps.feats.get(key);
    if (!f) {
      const cnb = normB(d.content);
      const tnb = normB(d.title);
      f = { tnb, ctok: this.tokenIds(maps.tok, cnb), ctri: this.trigramIds(maps.tri, cnb), ttok: this.tokenIds(maps.tok, tnb), ttri: this.trigramIds(maps.tri, tnb), hash: sha256(cnb), stance: stanceOf(cnb) };
      maps.feats.set(key, f);
    }
    return f;
  }
}

/** One corpus prepared on its own (tests, the benchmark): nothing is kept. */
export function prepareCorpus(docs: CorpusDoc[]): PreparedCorpus {
  return new CorpusPreparer().prepare(docs);
}

export function countOverlaps<K>(ids: Map<K, number>, lists: number[][], items: Set<K>, out: Uint16Array): void {
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
