/**
 * A local embedder: ONNX model files the user points to, run in process by
 * ONNX Runtime's WebAssembly build (`onnxruntime-web`, which has no install
 * script and ships its .wasm inside the npm package — `onnxruntime-node`'s
 * install script fetches CUDA binaries from outside the npm registry on
 * Linux x64, so it is not used). Nothing is downloaded, ever.
 *
 * Configuration (embeddings.ts `embedderFromEnv`):
 *   MAESTRO_EMBEDDINGS_ONNX=/path/model.onnx        a BERT-style sentence encoder
 *   MAESTRO_EMBEDDINGS_VOCAB=/path/vocab.txt        default: vocab.txt, else tokenizer.json, next to the model
 *   MAESTRO_EMBEDDINGS_POOLING=mean|cls             default mean (masked mean over tokens)
 *   MAESTRO_EMBEDDINGS_MAX_TOKENS=256               truncation, [CLS] and [SEP] included
 *   MAESTRO_EMBEDDINGS_LOWERCASE=true|false         default: from tokenizer.json, else true (uncased)
 *
 * The model's declared inputs are fed by name (`input_ids`, `attention_mask`,
 * `token_type_ids`); its output `last_hidden_state` (else the first output)
 * is pooled and L2-normalised; a 2-D output is taken as already pooled.
 *
 * Identity and caching: `model` is `onnx:<hash>` over the model bytes, the
 * vocabulary bytes and the options, so stored vectors are reused exactly as
 * long as the files' content is the same (a touched file costs nothing, a
 * replaced one re-embeds). Each embedder keeps its loaded sessions (one per
 * content hash) and the files' hashes in its own `OnnxSessions`, released by
 * its `close()` (the KnowledgeService's stop()). The runtime is imported on
 * first use only, so a CLI call that embeds nothing never loads it; that
 * import is the one process-wide memo here (the module is the same for all).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { createWordPiece, readVocab, type WordPieceTokenizer } from './wordpiece.js';
import { normalise, type Embedder } from './vector.js';

export interface OnnxEmbedderOptions {
  modelPath: string;
  vocabPath?: string | undefined;
  pooling?: 'mean' | 'cls' | undefined;
  maxTokens?: number | undefined;
  lowercase?: boolean | undefined;
  batchSize?: number | undefined;
}

/**
 * The part of onnxruntime-web's API used here, typed locally: the package is an
 * optional dependency (`npm install --omit=optional` leaves it out), so the
 * build must not need its type declarations.
 */
interface OrtTensor {
  type: string;
  data: unknown;
  dims: readonly number[];
}
interface Session {
  inputNames: readonly string[];
  outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
interface Ort {
  env: { wasm: { numThreads: number }; logLevel: string };
  InferenceSession: { create(model: Uint8Array): Promise<Session> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => OrtTensor;
}

const ORT_PACKAGE = 'onnxruntime-web';

// The runtime module, imported once per process: the same for every embedder (a memo of an import, no state of ours).
let ortModule: Promise<Ort> | null = null;
function loadOrt(): Promise<Ort> {
  ortModule ??= (import(ORT_PACKAGE) as Promise<unknown>)
    .then((m) => {
      const ort = ((m as unknown as { default?: Ort }).default ?? m) as Ort;
      // One thread: no worker pool to start or leave behind; embedding a corpus is a one-off.
      ort.env.wasm.numThreads = 1;
      ort.env.logLevel = 'error';
      return ort;
    })
    .catch((err: unknown) => {
      ortModule = null;
      throw new MaestroError('CONFIG_INVALID', `Local ONNX embeddings need the "onnxruntime-web" package, which could not be loaded: ${(err as Error).message}`);
    });
  return ortModule;
}

/** Loaded sessions by model content hash, and the files' content hashes: what one embedder keeps. */
class OnnxSessions {
  private readonly sessions = new Map<string, Promise<Session>>();
  /** Which content hash each model path held when last used. */
  private readonly sessionByPath = new Map<string, string>();
  /** Content hashes by path + size + mtime, so a file is hashed once while unchanged. */
  private readonly fileHashes = new Map<string, { size: number; mtimeMs: number; hash: string }>();

  get size(): number {
    return this.sessions.size;
  }

  fileHash(path: string): string {
    const st = statSync(path);
    const memo = this.fileHashes.get(path);
    if (memo && memo.size === st.size && memo.mtimeMs === st.mtimeMs) return memo.hash;
    const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
    this.fileHashes.set(path, { size: st.size, mtimeMs: st.mtimeMs, hash });
    return hash;
  }

  /** The loaded session for the model file's current content; a model replaced on disk gets a new session. */
  sessionFor(modelPath: string): Promise<Session> {
    const key = this.fileHash(modelPath);
    const prev = this.sessionByPath.get(modelPath);
    this.sessionByPath.set(modelPath, key);
    // The file now holds another model: release the old session unless another path still uses it.
    if (prev && prev !== key && ![...this.sessionByPath.values()].includes(prev)) {
      void this.sessions.get(prev)?.then((old) => old.release()).catch(() => undefined);
      this.sessions.delete(prev);
    }
    let s = this.sessions.get(key);
    if (!s) {
      s = loadOrt().then(async (ort) => {
        try {
          return await ort.InferenceSession.create(readFileSync(modelPath));
        } catch (err) {
          throw new MaestroError('CONFIG_INVALID', `ONNX Runtime could not load ${modelPath}: ${(err as Error).message}`);
        }
      });
      s.catch(() => this.sessions.delete(key));
      this.sessions.set(key, s);
    }
    return s;
  }

  /** Releases every loaded session and forgets the hashes (a later embed loads again). */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    this.sessionByPath.clear();
    this.fileHashes.clear();
    await Promise.all(all.map((p) => p.then((s) => s.release()).catch(() => undefined)));
  }
}

/** An ONNX embedder: its sessions are its own, released by close(). */
export interface OnnxEmbedder extends Embedder {
  /** Sessions loaded now (one per model content in use). */
  loadedSessions(): number;
  close(): Promise<void>;
}

/** The vocabulary next to a model: vocab.txt, else tokenizer.json. */
export function defaultVocabPath(modelPath: string): string | null {
  for (const name of ['vocab.txt', 'tokenizer.json']) {
    const p = join(dirname(modelPath), name);
    if (existsSync(p)) return p;
  }
  return null;
}

export function onnxEmbedder(opts: OnnxEmbedderOptions): OnnxEmbedder {
  const cache = new OnnxSessions();
  const modelPath = resolve(opts.modelPath);
  if (!existsSync(modelPath) || !statSync(modelPath).isFile()) throw new MaestroError('CONFIG_INVALID', `MAESTRO_EMBEDDINGS_ONNX names ${modelPath}, which is not a file.`);
  const vocabPath = opts.vocabPath ? resolve(opts.vocabPath) : defaultVocabPath(modelPath);
  if (!vocabPath) throw new MaestroError('CONFIG_INVALID', `No tokenizer for ${modelPath}: put vocab.txt (or tokenizer.json) next to it, or set MAESTRO_EMBEDDINGS_VOCAB.`);
  if (!existsSync(vocabPath)) throw new MaestroError('CONFIG_INVALID', `MAESTRO_EMBEDDINGS_VOCAB names ${vocabPath}, which does not exist.`);
  const pooling = opts.pooling ?? 'mean';
  const maxTokens = opts.maxTokens ?? 256;
  if (!Number.isInteger(maxTokens) || maxTokens < 3 || maxTokens > 8192) throw new MaestroError('CONFIG_INVALID', `MAESTRO_EMBEDDINGS_MAX_TOKENS must be an integer 3–8192, got ${maxTokens}.`);
  const batchSize = opts.batchSize ?? 16;
  let tokenizer: WordPieceTokenizer | null = null;
  let tokenizerHash = '';
  // Re-derived on every use (two stats; hashing happens only when a file changed), so a model replaced under a running daemon is noticed.
  const identity = () =>
    `onnx:${createHash('sha256')
      .update(`${cache.fileHash(modelPath)}\u0000${cache.fileHash(vocabPath)}\u0000${pooling}\u0000${maxTokens}\u0000${opts.lowercase ?? ''}`)
      .digest('hex')
      .slice(0, 24)}`;

  return {
    get model() {
      return identity();
    },
    async embed(texts) {
      if (texts.length === 0) return [];
      const vh = cache.fileHash(vocabPath);
      if (!tokenizer || tokenizerHash !== vh) {
        tokenizer = createWordPiece(readVocab(vocabPath, opts.lowercase));
        tokenizerHash = vh;
      }
      const [ort, sess] = await Promise.all([loadOrt(), cache.sessionFor(modelPath)]);
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const batch = texts.slice(i, i + batchSize).map((t) => tokenizer!.encode(t, maxTokens));
        out.push(...(await runBatch(ort, sess, batch, { modelPath, vocabPath, pooling, padId: tokenizer.padId })));
      }
      return out;
    },
    loadedSessions: () => cache.size,
    close: () => cache.close(),
  };
}

interface BatchConfig {
  modelPath: string;
  vocabPath: string;
  pooling: 'mean' | 'cls';
  padId: number;
}

/** Runs one padded batch of token ids through the model and returns one unit vector per text. */
async function runBatch(ort: Ort, sess: Session, batch: number[][], cfg: BatchConfig): Promise<Float32Array[]> {
  const { modelPath, vocabPath } = cfg;
  const seq = Math.max(...batch.map((b) => b.length));
  const n = batch.length;
  const ids = new BigInt64Array(n * seq);
  const mask = new BigInt64Array(n * seq);
  batch.forEach((toks, i) => {
    for (let j = 0; j < seq; j++) {
      ids[i * seq + j] = BigInt(j < toks.length ? toks[j]! : cfg.padId);
      mask[i * seq + j] = j < toks.length ? 1n : 0n;
    }
  });
  const feeds: Record<string, OrtTensor> = {};
  for (const name of sess.inputNames) {
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', ids, [n, seq]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', mask, [n, seq]);
    else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(n * seq), [n, seq]);
    else throw new MaestroError('CONFIG_INVALID', `${modelPath} wants an input "${name}"; a BERT-style encoder takes input_ids, attention_mask and token_type_ids.`);
  }
  let out: Record<string, OrtTensor>;
  try {
    out = await sess.run(feeds);
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `ONNX Runtime failed running ${modelPath} (is ${vocabPath} this model's own vocabulary?): ${(err as Error).message}`);
  }
  const name = sess.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : sess.outputNames[0]!;
  const t = out[name]!;
  if (t.type !== 'float32') throw new MaestroError('CONFIG_INVALID', `${modelPath}: output "${name}" is ${t.type}, expected float32.`);
  return poolOutput(t.data as Float32Array, t.dims, { n, seq, mask, name }, cfg);
}

/** One vector per text: a pooled [batch, dim] output as is, else the CLS token or the mean over unmasked tokens. */
function poolOutput(data: Float32Array, dims: readonly number[], b: { n: number; seq: number; mask: BigInt64Array; name: string }, cfg: BatchConfig): Float32Array[] {
  const { n, seq, mask } = b;
  const vecs: Float32Array[] = [];
  if (dims.length === 2) {
    const d = dims[1]!;
    for (let i = 0; i < n; i++) vecs.push(normalise(Float32Array.from(data.subarray(i * d, (i + 1) * d))));
    return vecs;
  }
  if (dims.length !== 3 || dims[1] !== seq) throw new MaestroError('CONFIG_INVALID', `${cfg.modelPath}: output "${b.name}" has shape [${dims.join(', ')}], expected [batch, ${seq}, dim].`);
  const d = dims[2]!;
  for (let i = 0; i < n; i++) {
    const v = new Float32Array(d);
    if (cfg.pooling === 'cls') v.set(data.subarray(i * seq * d, i * seq * d + d));
    else {
      let count = 0;
      for (let j = 0; j < seq; j++) {
        if (mask[i * seq + j] === 0n) continue;
        count++;
        const base = (i * seq + j) * d;
        for (let k = 0; k < d; k++) v[k]! += data[base + k]!;
      }
      for (let k = 0; k < d; k++) v[k]! /= Math.max(1, count);
    }
    vecs.push(normalise(v));
  }
  return vecs;
}


/** The ONNX embedder described by MAESTRO_EMBEDDINGS_* (see the header), or null when MAESTRO_EMBEDDINGS_ONNX is unset. */
export function onnxEmbedderFromEnv(env: NodeJS.ProcessEnv): OnnxEmbedder | null {
  const modelPath = env.MAESTRO_EMBEDDINGS_ONNX;
  if (!modelPath) return null;
  const pooling = env.MAESTRO_EMBEDDINGS_POOLING || undefined;
  if (pooling !== undefined && pooling !== 'mean' && pooling !== 'cls') throw new MaestroError('CONFIG_INVALID', `MAESTRO_EMBEDDINGS_POOLING must be mean or cls, got "${pooling}".`);
  const maxRaw = env.MAESTRO_EMBEDDINGS_MAX_TOKENS;
  const lc = env.MAESTRO_EMBEDDINGS_LOWERCASE;
  if (lc !== undefined && lc !== '' && lc !== 'true' && lc !== 'false') throw new MaestroError('CONFIG_INVALID', `MAESTRO_EMBEDDINGS_LOWERCASE must be true or false, got "${lc}".`);
  return onnxEmbedder({
    modelPath,
    vocabPath: env.MAESTRO_EMBEDDINGS_VOCAB || undefined,
    pooling,
    maxTokens: maxRaw ? Number(maxRaw) : undefined,
    lowercase: lc === 'true' ? true : lc === 'false' ? false : undefined,
  });
}
