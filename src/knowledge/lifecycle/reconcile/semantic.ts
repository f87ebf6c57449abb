/**
 * The semantic signal of the reconciliation matcher (FORMATS §4.4) through the
 * configured `Embedder` (embeddings.ts). Off unless an embedder is configured
 * (MAESTRO_EMBEDDINGS_* or `configureSemantic`); then, and only then:
 *
 * - embeddingScore(candidate, doc) = max(0, cosine(content vectors)). FORMATS
 *   divides a daemon *search* score by the best score because search scores are
 *   unbounded; a cosine of unit vectors is already on the 0..1 scale, and
 *   dividing by the best would give every candidate's nearest doc 1.0.
 *   semantic = max(lexical, embeddingScore); every weight and threshold stays
 *   the published one.
 * - matcher_revision becomes `semantic-delta/1.0+embedding:<model>`: the
 *   embedding model is part of how matches were found, so a receipt made with
 *   another model (or without one) is stale. The corpus fingerprint and the
 *   candidate snapshot hash do not change (they describe inputs, not the
 *   matcher). Without an embedder everything is exactly as before.
 *
 * Embedding is asynchronous and the reconcile paths are synchronous, so
 * vectors are warmed first (`warmSemantic`, called by the CLI before review,
 * check, complete, seal, resolve and promote) and kept per model and text
 * hash. A synchronous reconcile that finds any vector cold matches lexically
 * and stamps the plain revision, which then reads as stale against the
 * configured one: promotion fails closed until `review --refresh` (which warms).
 */
import { MaestroError } from '../../../core/errors.js';
import { embedderFromEnv, type Embedder } from '../../vectors/embeddings.js';
import { normalise } from '../../vectors/vector.js';
import { readCorpus } from '../ledger/corpusDocs.js';
import { MATCHER_REVISION, sha256 } from '../ledger/recipes.js';
import type { WorkflowRoot } from '../../format/root.js';
import type { MatchCandidate, PreparedCorpus } from './matcher.js';

export interface SemanticScorer {
  /** The matcher_revision a receipt built with this scorer carries. */
  revision: string;
  /** Embedding score in 0..1 per doc index of the prepared corpus. */
  score(c: MatchCandidate): Map<number, number>;
}

export function matcherRevisionFor(model: string | null): string {
  return model ? `${MATCHER_REVISION}+embedding:${model}` : MATCHER_REVISION;
}

/** undefined → read MAESTRO_EMBEDDINGS_* on first use; null → no embedder. */
let configured: Embedder | null | undefined;

/** Sets the process's embedder for reconciliation (tests, or a host that built one). `undefined` goes back to the environment. */
export function configureSemantic(embedder: Embedder | null | undefined): void {
  configured = embedder;
}

export function semanticEmbedder(): Embedder | null {
  if (configured === undefined) configured = embedderFromEnv(process.env);
  return configured;
}

/** The revision a fresh receipt must carry under the current configuration. */
export function currentMatcherRevision(): string {
  return matcherRevisionFor(semanticEmbedder()?.model ?? null);
}

/** Unit vectors per model, keyed by sha256 of the embedded text. */
const vectors = new Map<string, Map<string, Float32Array>>();

function table(model: string): Map<string, Float32Array> {
  let t = vectors.get(model);
  if (!t) vectors.set(model, (t = new Map()));
  return t;
}

/** A unit-length copy: the embedder's vector is left as it came. */
const unit = (v: Float32Array): Float32Array => normalise(Float32Array.from(v));

/** Embeds the texts not cached yet for this model (one call). */
export async function warmTexts(embedder: Embedder, texts: string[]): Promise<number> {
  const t = table(embedder.model);
  const todo = new Map<string, string>();
  for (const x of texts) {
    const h = sha256(x);
    if (!t.has(h)) todo.set(h, x);
  }
  if (!todo.size) return 0;
  const keys = [...todo.keys()];
  const vecs = await embedder.embed([...todo.values()]);
  if (vecs.length !== keys.length) throw new MaestroError('CONFIG_INVALID', `Embedder ${embedder.model} returned ${vecs.length} vectors for ${keys.length} texts.`);
  const dim = vecs[0]?.length ?? 0;
  vecs.forEach((v, i) => {
    if (v.length !== dim || !dim) throw new MaestroError('CONFIG_INVALID', `Embedder ${embedder.model} returned vectors of different or zero length (${v.length} vs ${dim}).`);
    t.set(keys[i]!, unit(v));
  });
  return keys.length;
}

/**
 * Warms the vectors a reconcile of these candidates will need: every active
 * corpus document and every candidate. No-op (0) without an embedder.
 */
export async function warmSemantic(root: WorkflowRoot, candidates: Array<Pick<MatchCandidate, 'content'>>): Promise<number> {
  const e = semanticEmbedder();
  if (!e) return 0;
  const corpus = readCorpus(root.workflowDir);
  return warmTexts(e, [...corpus.docs.map((d) => d.content), ...candidates.map((c) => c.content)]);
}

/** Doc vectors packed per prepared corpus (null when any is cold). */
const packed = new WeakMap<PreparedCorpus, Map<string, { dim: number; data: Float32Array } | null>>();

function docMatrix(pc: PreparedCorpus, model: string): { dim: number; data: Float32Array } | null {
  let per = packed.get(pc);
  if (!per) packed.set(pc, (per = new Map()));
  if (per.has(model)) return per.get(model)!;
  const t = table(model);
  const vs: Float32Array[] = [];
  for (const d of pc.docs) {
    const v = t.get(sha256(d.content));
    if (!v) return null; // not memoised: a later warm can still complete it
    vs.push(v);
  }
  const dim = vs[0]?.length ?? 0;
  if (vs.some((v) => v.length !== dim)) return null;
  const data = new Float32Array(dim * vs.length);
  vs.forEach((v, i) => data.set(v, i * dim));
  const m = { dim, data };
  per.set(model, m);
  return m;
}

/**
 * The scorer for this corpus and these candidates, or null when no embedder is
 * configured or any needed vector is cold (then the matcher is lexical only).
 */
export function semanticScorer(pc: PreparedCorpus, candidates: Array<Pick<MatchCandidate, 'content'>>, embedder: Embedder | null = semanticEmbedder()): SemanticScorer | null {
  if (!embedder) return null;
  const t = table(embedder.model);
  if (candidates.some((c) => !t.has(sha256(c.content)))) return null;
  const m = docMatrix(pc, embedder.model);
  if (!m) return null;
  return {
    revision: matcherRevisionFor(embedder.model),
    score(c) {
      const q = t.get(sha256(c.content));
      const out = new Map<number, number>();
      if (!q || q.length !== m.dim) return out;
      const { dim, data } = m;
      for (let i = 0, off = 0; off < data.length; i++, off += dim) {
        let dot = 0;
        for (let k = 0; k < dim; k++) dot += q[k]! * data[off + k]!;
        if (dot > 0) out.set(i, Math.min(1, dot));
      }
      return out;
    },
  };
}
