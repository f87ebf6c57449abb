/**
 * The semantic signal of the reconciliation matcher (FORMATS §4.4) through the
 * configured `Embedder` (embeddings.ts). Off unless the lifecycle context has
 * an embedder (the KnowledgeService's, from MAESTRO_EMBEDDINGS_*, or one a
 * test gives); then, and only then:
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
 * vectors are warmed first (`warmSessionSemantic` in review.ts, called by the
 * CLI before review, check, complete, seal, resolve and promote) and kept per
 * model and text hash by the context's `SemanticVectors`. A synchronous
 * reconcile that finds any vector cold matches lexically and stamps the plain
 * revision, which then reads as stale against the configured one: promotion
 * fails closed until `review --refresh` (which warms).
 */
import { MaestroError } from '../../../core/errors.js';
import type { Embedder } from '../../vectors/embeddings.js';
import { normalise } from '../../vectors/vector.js';
import { MATCHER_REVISION, sha256 } from '../ledger/recipes.js';
import type { MatchCandidate, PreparedCorpus } from './matcher.js';

export interface SemanticScorer {
  /** The matcher_revision a receipt built with this scorer carries. */
  revision: string;
  /** Embedding score in 0..1 per doc index of the prepared corpus. */
  score(c: Pick<MatchCandidate, 'content'>): Map<number, number>;
}

export function matcherRevisionFor(model: string | null): string {
  return model ? `${MATCHER_REVISION}+embedding:${model}` : MATCHER_REVISION;
}

/** A unit-length copy: the embedder's vector is left as it came. */
const unit = (v: Float32Array): Float32Array => normalise(Float32Array.from(v));

/**
 * The embedder of the semantic signal and the vectors it has made, per model
 * and keyed by sha256 of the embedded text; doc vectors packed per prepared
 * corpus. Owned by a lifecycle context (context.ts), dropped with it.
 */
export class SemanticVectors {
  private readonly vectors = new Map<string, Map<string, Float32Array>>();
  /** Doc vectors packed per prepared corpus (null when any is cold). */
  private packed = new WeakMap<PreparedCorpus, Map<string, { dim: number; data: Float32Array } | null>>();

  /** `embedder`: the configured one, or null for none; a getter may throw while its setting is bad. */
  constructor(private readonly embedderOf: () => Embedder | null) {}

  embedder(): Embedder | null {
    return this.embedderOf();
  }

  /** Vectors held for this model (the lifecycle test reads it). */
  warmed(model: string): number {
    return this.vectors.get(model)?.size ?? 0;
  }

  /** Drops every vector (the owner's stop()); a later warm embeds again. */
  clear(): void {
    this.vectors.clear();
    this.packed = new WeakMap();
  }

  /** The revision a fresh receipt must carry under the current configuration. */
  currentRevision(): string {
    return matcherRevisionFor(this.embedder()?.model ?? null);
  }

  private table(model: string): Map<string, Float32Array> {
    let t = this.vectors.get(model);
    if (!t) this.vectors.set(model, (t = new Map()));
    return t;
  }

  /** Embeds the texts not cached yet for this model (one call). */
  async warmTexts(embedder: Embedder, texts: string[]): Promise<number> {
    const t = this.table(embedder.model);
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

  private docMatrix(pc: PreparedCorpus, model: string): { dim: number; data: Float32Array } | null {
    let per = this.packed.get(pc);
    if (!per) this.packed.set(pc, (per = new Map()));
    if (per.has(model)) return per.get(model)!;
    const t = this.table(model);
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
  scorer(pc: PreparedCorpus, candidates: Array<Pick<MatchCandidate, 'content'>>, embedder: Embedder | null = this.embedder()): SemanticScorer | null {
    if (!embedder) return null;
    const t = this.table(embedder.model);
    if (candidates.some((c) => !t.has(sha256(c.content)))) return null;
    const m = this.docMatrix(pc, embedder.model);
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
}
