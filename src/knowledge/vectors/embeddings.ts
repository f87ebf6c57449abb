/**
 * Optional vectors. Nothing here runs unless an embedder is configured:
 * Maestro is offline by default and never downloads a model.
 *
 * - `Embedder`: turns texts into vectors. `openAiCompatibleEmbedder` talks to
 *   any `/v1/embeddings` endpoint (OpenAI, a local llama.cpp / Ollama / vLLM
 *   server…), configured by MAESTRO_EMBEDDINGS_URL, MAESTRO_EMBEDDINGS_MODEL
 *   and optionally MAESTRO_EMBEDDINGS_KEY; `onnxEmbedder` (onnxEmbedder.ts)
 *   runs local ONNX model files named by MAESTRO_EMBEDDINGS_ONNX.
 * - Vectors live in the knowledge index (`vectors` table, index/vectors.ts),
 *   keyed by entry id and content hash, so only new or changed entries are
 *   embedded again.
 * - Search mixes them in per FORMATS §5.1: RRF (k 10; BM25 0.6, vectors 0.4),
 *   then 0.4·RRF + 0.6·BM25 (normalised; a vector-only hit counts BM25 0.15).
 *   Filters apply to vector hits in SQL too, before the cut.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { MaestroError } from '../../core/errors.js';
import type { KnowledgeEntry } from '../format/entry.js';
import type { SearchFilters } from '../index/query.js';
import { entryVectorStates, filteredVectors, storeVectors } from '../index/vectors.js';
import { onnxEmbedderFromEnv } from './onnxEmbedder.js';
import { normalise, type Embedder } from './vector.js';

export type { Embedder } from './vector.js';

export interface OpenAiEmbedderOptions {
  url: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs?: number;
  batchSize?: number;
}

export function openAiCompatibleEmbedder(opts: OpenAiEmbedderOptions): Embedder {
  const endpoint = `${opts.url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/embeddings`;
  const batch = opts.batchSize ?? 64;
  return {
    model: opts.model,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batch) {
        const input = texts.slice(i, i + batch);
        let res: Response;
        try {
          res = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
            body: JSON.stringify({ model: opts.model, input }),
            signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
          });
        } catch (err) {
          throw new MaestroError('CONFIG_INVALID', `The embeddings endpoint ${endpoint} did not answer: ${(err as Error).message}`);
        }
        if (!res.ok) throw new MaestroError('CONFIG_INVALID', `The embeddings endpoint ${endpoint} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        const body = (await res.json()) as { data?: Array<{ index?: number; embedding?: number[] }> };
        const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
        if (data.length !== input.length || data.some((d) => !Array.isArray(d.embedding))) throw new MaestroError('CONFIG_INVALID', `The embeddings endpoint ${endpoint} returned ${data.length} vectors for ${input.length} inputs.`);
        for (const d of data) out.push(normalise(Float32Array.from(d.embedding!)));
      }
      return out;
    },
  };
}

/**
 * The configured embedder, or null (the default: no vectors, nothing contacted).
 * MAESTRO_EMBEDDINGS_URL selects an OpenAI-compatible endpoint,
 * MAESTRO_EMBEDDINGS_ONNX local model files (onnxEmbedder.ts); not both.
 */
export function embedderFromEnv(env: NodeJS.ProcessEnv): Embedder | null {
  if (env.MAESTRO_EMBEDDINGS_ONNX) {
    if (env.MAESTRO_EMBEDDINGS_URL) throw new MaestroError('CONFIG_INVALID', 'Both MAESTRO_EMBEDDINGS_URL and MAESTRO_EMBEDDINGS_ONNX are set: choose the endpoint or the local model.');
    return onnxEmbedderFromEnv(env);
  }
  if (!env.MAESTRO_EMBEDDINGS_URL) return null;
  if (!env.MAESTRO_EMBEDDINGS_MODEL) throw new MaestroError('CONFIG_INVALID', 'MAESTRO_EMBEDDINGS_URL is set but MAESTRO_EMBEDDINGS_MODEL is not: name the embedding model.');
  return openAiCompatibleEmbedder({ url: env.MAESTRO_EMBEDDINGS_URL, model: env.MAESTRO_EMBEDDINGS_MODEL, apiKey: env.MAESTRO_EMBEDDINGS_KEY });
}


function entryText(e: KnowledgeEntry): string {
  return `${e.title}\n${e.summary}\n${e.tags.join(', ')}\n${e.body}`.slice(0, 8000);
}

/** Embeds entries that have no vector for this model and content yet. Returns how many were embedded. */
export async function embedPending(db: Database.Database, embedder: Embedder): Promise<number> {
  const todo: Array<{ id: string; text: string; hash: string }> = [];
  for (const r of entryVectorStates(db)) {
    const text = entryText(JSON.parse(r.data) as KnowledgeEntry);
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 32);
    if (r.vhash !== hash || r.vmodel !== embedder.model) todo.push({ id: r.id, text, hash });
  }
  if (todo.length === 0) return 0;
  const vecs = await embedder.embed(todo.map((t) => t.text));
  storeVectors(db, embedder.model, todo.map((t, i) => ({ id: t.id, hash: t.hash, vec: vecs[i]! })));
  return todo.length;
}

export interface VectorHit {
  rowid: number;
  similarity: number;
}

/** Exact cosine search over the stored vectors that pass the filters (brute force: fine to ~100k × 1k dims). */
export function vectorSearch(db: Database.Database, query: Float32Array, model: string, filters: SearchFilters, limit: number): VectorHit[] {
  const hits: VectorHit[] = [];
  for (const { rowid, vec: v } of filteredVectors(db, model, filters)) {
    if (v.length !== query.length) continue;
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
    hits.push({ rowid, similarity: dot });
  }
  hits.sort((a, b) => b.similarity - a.similarity || a.rowid - b.rowid);
  return hits.slice(0, limit);
}

/**
 * FORMATS §5.1 hybrid: RRF(k=10; bm25 0.6, vector 0.4) → 0.4·rrfNorm + 0.6·bm25Norm.
 * Returns a score per rowid (higher is better) in the BM25 scale of the best lexical hit.
 */
export function fuseHybrid(lexical: Array<{ rowid: number; bm25: number }>, vector: VectorHit[]): Map<number, number> {
  const rrf = new Map<number, number>();
  lexical.forEach((l, i) => rrf.set(l.rowid, (rrf.get(l.rowid) ?? 0) + 0.6 / (10 + i + 1)));
  vector.forEach((v, i) => rrf.set(v.rowid, (rrf.get(v.rowid) ?? 0) + 0.4 / (10 + i + 1)));
  const maxRrf = Math.max(...rrf.values(), 1e-9);
  const maxBm = Math.max(...lexical.map((l) => l.bm25), 1e-9);
  const bm = new Map(lexical.map((l) => [l.rowid, l.bm25 / maxBm]));
  const out = new Map<number, number>();
  for (const [rowid, r] of rrf) out.set(rowid, (0.4 * (r / maxRrf) + 0.6 * (bm.get(rowid) ?? 0.15)) * maxBm);
  return out;
}
