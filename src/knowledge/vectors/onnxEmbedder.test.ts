import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { gatherEmbeddingModel, SPECIAL_TOKENS } from '../../../test/helpers/onnx.js';
import { embedderFromEnv, type Embedder } from './embeddings.js';
import { openKnowledge } from '../knowledge.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../service.js';
import { onnxEmbedder, type OnnxEmbedder } from './onnxEmbedder.js';
import { basicTokens, createWordPiece, readVocab } from './wordpiece.js';
import { budget } from '../../../test/helpers/budget.js';

/**
 * The model here is real ONNX run by a real runtime, only tiny: a vocabulary
 * whose embedding table puts "car", "automobile" and "vehicle" on one axis,
 * so only vectors can connect a query for one with an entry using another.
 */
const WORDS = ['car', 'automobile', 'vehicle', 'auto', '##mobile', '##s', 'retry', 'backoff', 'cache', 'deploy', 'check', 'the', 'tyres', 'keep', 'papers', ',', '.', '!', 'cafe', '缓', '存'];
const VOCAB = [...SPECIAL_TOKENS, ...WORDS];
const AXIS: Record<string, number> = { car: 0, automobile: 0, vehicle: 0, auto: 0, '##mobile': 0, retry: 1, backoff: 1, cache: 2, deploy: 3 };

function table(scale = 1): number[][] {
  return VOCAB.map((tok) => {
    const row = [0, 0, 0, 0, 0.1];
    if (AXIS[tok] !== undefined) row[AXIS[tok]!] = scale;
    return row;
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function modelDir(opts: { vocabFile?: 'txt' | 'json'; scale?: number } = {}): { dir: string; model: string } {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-onnx-'));
  dirs.push(dir);
  const model = join(dir, 'model.onnx');
  writeFileSync(model, gatherEmbeddingModel(table(opts.scale)));
  if (opts.vocabFile === 'json') writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ normalizer: { type: 'BertNormalizer', lowercase: true }, model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])) } }));
  else writeFileSync(join(dir, 'vocab.txt'), `${VOCAB.join('\n')}\n`);
  return { dir, model };
}

function counting(e: Embedder): Embedder & { texts: number } {
  const c = {
    texts: 0,
    get model() {
      return e.model;
    },
    async embed(t: string[]) {
      c.texts += t.length;
      return e.embed(t);
    },
  };
  return c;
}

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('BERT WordPiece tokenizer', () => {
  it('splits like BERT: punctuation, accents, CJK characters, ## continuations, [UNK], [CLS]/[SEP] and truncation', () => {
    const { dir } = modelDir();
    const tok = createWordPiece(readVocab(join(dir, 'vocab.txt')));
    expect(basicTokens('Café, 缓存!', true)).toEqual(['cafe', ',', '缓', '存', '!']);
    expect(tok.pieces('Automobiles, CAR!')).toEqual(['automobile', '##s', ',', 'car', '!']);
    expect(tok.pieces('autos')).toEqual(['auto', '##s']);
    expect(tok.pieces('zzz car')).toEqual(['[UNK]', 'car']);
    expect(tok.pieces(`${'a'.repeat(101)} car`)).toEqual(['[UNK]', 'car']);
    const id = (t: string) => VOCAB.indexOf(t);
    expect(tok.encode('the car', 16)).toEqual([id('[CLS]'), id('the'), id('car'), id('[SEP]')]);
    expect(tok.encode('the car keeps the cache', 4)).toEqual([id('[CLS]'), id('the'), id('car'), id('[SEP]')]);
  });

  it('reads a WordPiece tokenizer.json and refuses other tokenizers and vocabularies without specials, naming the file', () => {
    const { dir } = modelDir({ vocabFile: 'json' });
    const tok = createWordPiece(readVocab(join(dir, 'tokenizer.json')));
    expect(tok.lowercase).toBe(true);
    expect(tok.pieces('Autos')).toEqual(['auto', '##s']);
    const bpe = join(dir, 'bpe.json');
    writeFileSync(bpe, JSON.stringify({ model: { type: 'BPE', vocab: {} } }));
    expect(() => readVocab(bpe)).toThrow(new RegExp(`${bpe}: only WordPiece tokenizers`));
    const bare = join(dir, 'bare.txt');
    writeFileSync(bare, 'car\nauto\n');
    expect(() => createWordPiece(readVocab(bare))).toThrow(/no \[UNK\] token/);
  });
});

describe('local ONNX embedder (onnxruntime-web, WebAssembly)', { timeout: budget(60_000) }, () => {
  it('embeds with mean pooling over the mask and L2 normalisation; padding in a batch changes nothing', async () => {
    const { model } = modelDir();
    const e = onnxEmbedder({ modelPath: model });
    expect(e.model).toMatch(/^onnx:[0-9a-f]{24}$/);
    const [car, automobile, retry, carAlone] = [...(await e.embed(['car', 'the automobile', 'retry with backoff, retry'])), ...(await e.embed(['car']))];
    for (const v of [car!, automobile!, retry!]) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(cos(car!, automobile!)).toBeGreaterThan(0.9);
    expect(cos(car!, retry!)).toBeLessThan(0.2);
    // "car" padded to the batch's longest text equals "car" alone: the mask keeps padding out of the mean.
    expect([...car!].map((x) => x.toFixed(5))).toEqual([...carAlone!].map((x) => x.toFixed(5)));
    // Mean over [CLS] car [SEP]: the car axis 1/3, the "other" axis 0.1 each → direction (1/3, 0.1).
    const expected = [1 / 3, 0, 0, 0, 0.1];
    const n = Math.hypot(...expected);
    expect([...car!].map((x) => Number(x.toFixed(4)))).toEqual(expected.map((x) => Number((x / n).toFixed(4))));
  });

  it('mixes vectors into search (a semantic-only hit) and caches vectors and the model by content hash', async () => {
    // A model content of its own (scale 3), so the session count below is this test's alone.
    const { model } = modelDir({ scale: 3 });
    const { dir, root } = tempRoot();
    writeFiller(root, 12);
    writeKnowhowFile(root, 'TIP-20260801-automobile', { title: 'Automobile maintenance', category: 'ops' }, 'Check the automobile tyres.');
    writeKnowhowFile(root, 'TIP-20260801-vehicle', { title: 'Vehicle paperwork', category: 'admin' }, 'Keep the vehicle papers.');
    const fromEnv = embedderFromEnv({ MAESTRO_EMBEDDINGS_ONNX: model });
    expect(fromEnv).not.toBeNull();
    const e = counting(fromEnv!);
    const sessions = () => (fromEnv as OnnxEmbedder).loadedSessions();
    const sessionsBefore = sessions();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: e });
    try {
      expect(k.search('car').count).toBe(0); // no entry contains the word
      const hybrid = await k.searchHybrid('car', { limit: 5 });
      expect(hybrid.retrieval).toBe('hybrid');
      expect(hybrid.results.slice(0, 2).map((r) => r.id).sort()).toEqual(['knowhow-tip-20260801-automobile', 'knowhow-tip-20260801-vehicle']);
      expect(e.texts).toBe(14 + 1); // every entry once, plus the query
      const filtered = await k.searchHybrid('car', { category: 'admin' });
      expect(filtered.results.map((r) => r.id)).toEqual(['knowhow-tip-20260801-vehicle']);
      expect(e.texts).toBe(16); // only the query: stored vectors reused
      expect(sessions()).toBe(sessionsBefore + 1);

      // Same content, new mtime: same model identity, nothing re-embedded, no second session.
      const later = new Date(Date.now() + 10_000);
      utimesSync(model, later, later);
      const idBefore = e.model;
      await k.searchHybrid('car');
      expect(e.model).toBe(idBefore);
      expect(e.texts).toBe(17);
      expect(sessions()).toBe(sessionsBefore + 1);

      // One changed entry: only it is embedded again.
      writeKnowhowFile(root, 'TIP-20260801-vehicle', { title: 'Vehicle paperwork', category: 'admin' }, 'Keep the vehicle papers and the car keys.');
      await k.searchHybrid('car');
      expect(e.texts).toBe(17 + 1 + 1);

      // A different model (new content): new identity, a new session replacing the old one, every entry embedded again.
      writeFileSync(model, gatherEmbeddingModel(table(4)));
      utimesSync(model, new Date(Date.now() + 20_000), new Date(Date.now() + 20_000));
      await k.searchHybrid('car');
      expect(e.model).not.toBe(idBefore);
      expect(e.texts).toBe(19 + 14 + 1);
      expect(sessions()).toBe(sessionsBefore + 1);
      // close() releases the embedder's sessions; the next embed loads the model again.
      await (fromEnv as OnnxEmbedder).close();
      expect(sessions()).toBe(0);
      await k.searchHybrid('car');
      expect(sessions()).toBe(1);
    } finally {
      k.close();
      await (fromEnv as OnnxEmbedder).close();
    }
  });

  it("is the KnowledgeService's: its stop() releases the sessions its searches loaded", async () => {
    const { model } = modelDir({ scale: 5 });
    const { dir, root } = tempRoot();
    writeFiller(root, 4);
    const service = new KnowledgeService(resolveKnowledgeConfig({ MAESTRO_EMBEDDINGS_ONNX: model, MAESTRO_HOME: join(dir, '.home') }, { oneShot: true }));
    service.start();
    const embedder = service.embedder() as OnnxEmbedder;
    const k = service.open({ workflowRoot: dir });
    expect((await k.searchHybrid('car')).retrieval).toBe('hybrid');
    expect(embedder.loadedSessions()).toBe(1);
    await service.stop();
    expect(embedder.loadedSessions()).toBe(0);
  });

  it('is configured only on request and refuses bad configuration with the path named', () => {
    const { dir, model } = modelDir();
    expect(embedderFromEnv({})).toBeNull();
    expect(() => embedderFromEnv({ MAESTRO_EMBEDDINGS_ONNX: model, MAESTRO_EMBEDDINGS_URL: 'http://127.0.0.1:1' })).toThrow(/Both MAESTRO_EMBEDDINGS_URL and MAESTRO_EMBEDDINGS_ONNX/);
    expect(() => embedderFromEnv({ MAESTRO_EMBEDDINGS_ONNX: join(dir, 'missing.onnx') })).toThrow(new RegExp(`${join(dir, 'missing.onnx')}, which is not a file`));
    rmSync(join(dir, 'vocab.txt'));
    expect(() => embedderFromEnv({ MAESTRO_EMBEDDINGS_ONNX: model })).toThrow(/No tokenizer for .*model\.onnx/);
    writeFileSync(join(dir, 'vocab.txt'), VOCAB.join('\n'));
    expect(() => embedderFromEnv({ MAESTRO_EMBEDDINGS_ONNX: model, MAESTRO_EMBEDDINGS_POOLING: 'max' })).toThrow(/mean or cls/);
  });

  it('reports a file that is not an ONNX model, or a vocabulary that is not the model\'s, as a configuration error', async () => {
    const { dir, model } = modelDir();
    // A vocabulary larger than the model's embedding table: its extra token ids are out of range.
    writeFileSync(join(dir, 'vocab.txt'), [...VOCAB, 'zebra'].join('\n'));
    await expect(onnxEmbedder({ modelPath: model }).embed(['zebra'])).rejects.toThrow(/ONNX Runtime failed running .*model\.onnx \(is .*vocab\.txt this model's own vocabulary\?\)/);
    writeFileSync(model, 'not a model');
    await expect(onnxEmbedder({ modelPath: model }).embed(['car'])).rejects.toThrow(/ONNX Runtime could not load .*model\.onnx/);
  });
});
