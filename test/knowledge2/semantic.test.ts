/**
 * The matcher's semantic signal through an Embedder (FORMATS §4.4).
 *
 * The embedder here is a TEST EMBEDDER, not a fake model provider: a real,
 * deterministic implementation of the `Embedder` interface over a fixed
 * word → concept vector table (a bag-of-concepts model: each known word adds
 * its concept axis, unknown words add nothing). Synonyms share an axis, so a
 * paraphrase with no word and no trigram in common gets cosine 1 while its
 * lexical score is 0 — which is exactly what the semantic signal is for.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { maestro, project, type Project } from '../helpers/knowledge2.js';
import type { Embedder } from '../../src/knowledge/vectors/embeddings.js';
import { readCorpus } from '../../src/knowledge/lifecycle/ledger/corpusDocs.js';
import { promote } from '../../src/knowledge/lifecycle/promote/promote.js';
import { freshness, readReceipt, readSourceState, reconcileSource, runSource } from '../../src/knowledge/lifecycle/reconcile/receipt.js';
import { review, warmSessionSemantic } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../../src/knowledge/service.js';
import { sealRun, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession } from '../../src/knowledge/lifecycle/session/store.js';

const CONCEPTS: Record<string, number> = {
  memoize: 0, cache: 0, caching: 0, memoization: 0,
  costly: 1, expensive: 1,
  lookups: 2, queries: 2, query: 2,
  colors: 3, palette: 4, brand: 5, network: 6, retry: 7, retries: 7,
};
const DIM = 8;

/** Test embedder: deterministic bag-of-concepts vectors over the table above. */
function tableEmbedder(model = 'test-concept-table'): Embedder & { calls: number; texts: number } {
  const e = {
    model,
    calls: 0,
    texts: 0,
    async embed(texts: string[]): Promise<Float32Array[]> {
      e.calls++;
      e.texts += texts.length;
      return texts.map((t) => {
        const v = new Float32Array(DIM);
        for (const w of t.toLowerCase().split(/[^a-z]+/)) if (w in CONCEPTS) v[CONCEPTS[w]!]! += 1;
        return v;
      });
    },
  };
  return e;
}

/** The embedder the lifecycle context sees now (a test switches it, as a changed MAESTRO_EMBEDDINGS_* setting would). */
let embedderNow: Embedder | null = null;
const configureSemantic = (e: Embedder | null) => {
  embedderNow = e;
};
const lc = createLifecycleContext({ embedder: () => embedderNow });
afterEach(() => configureSemantic(null));

const DOC = `<spec-entry category="coding" keywords="perf" date="2026-02-01" sid="S-20260201-cafe" title="Caching of lookups">

### Caching of lookups

Memoize costly lookups

</spec-entry>
`;
// No token and no trigram in common with the doc's content; the title shares one word with the doc's.
const PARAPHRASE = { title: 'Caching queries', content: 'Cache expensive queries' };
// Same content idea, title paraphrased too: nothing lexical in common at all.
const PURE = { title: 'Memoization rule', content: 'Memoization for expensive queries' };

function setup(c: { title: string; content: string }): { p: Project; id: string; src: ReturnType<typeof runSource> } {
  const p = project();
  writeFileSync(join(p.root.workflowDir, 'specs', 'performance.md'), DOC);
  createSession(p.root, 's-1');
  createRun(p.root, 's-1', { runId: 'run-1' });
  const { candidate } = stage(p.root, { target: 'spec', ...c, category: 'coding', run: 'run-1', session: 's-1' }, process.env);
  return { p, id: candidate.candidate_id, src: runSource(p.root, 's-1', 'run-1') };
}

describe('semantic matching through an Embedder', () => {
  it('without an embedder the paraphrase is unique (lexical 0); with one it is matched, and the receipt says how', async () => {
    const { p, id, src } = setup(PARAPHRASE);
    const lexical = reconcileSource(lc, p.root, src);
    expect(lexical.matcher_revision).toBe('semantic-delta/1.0');
    expect(lexical.retrieval).toMatchObject({ mode: 'lexical-kg', embedding_used: false });
    expect(lexical.candidates[0]).toMatchObject({ candidate_id: id, disposition: 'unique', matches: [] });

    const emb = tableEmbedder();
    configureSemantic(emb);
    // Configuring an embedder makes the lexical receipt stale (the matcher changed), never silently fresh.
    const corpus = readCorpus(p.root.workflowDir);
    expect(freshness(lc, src, readReceipt(src), readSourceState(src), corpus)).toMatchObject({ state: 'stale', reasons: ['matcher revision semantic-delta/1.0 ≠ semantic-delta/1.0+embedding:test-concept-table'] });
    expect(await warmSessionSemantic(lc, p.root, 's-1')).toBeGreaterThan(0);
    const r = reconcileSource(lc, p.root, src);
    expect(r.matcher_revision).toBe('semantic-delta/1.0+embedding:test-concept-table');
    expect(r.retrieval).toMatchObject({ mode: 'hybrid', embedding_used: true });
    const c = r.candidates[0]!;
    expect(c).toMatchObject({ candidate_id: id, disposition: 'related', canonical_id: 'S-20260201-cafe' });
    const m = c.matches[0]!;
    expect(m.knowledge_id).toBe('S-20260201-cafe');
    expect(m.scores.lexical).toBe(0);
    expect(m.scores.semantic).toBe(1);
    expect(m.evidence).toContain('embedding similarity 1');
    // The corpus fingerprint and the snapshot hash do not depend on the matcher.
    expect(r.corpus_fingerprint).toBe(lexical.corpus_fingerprint);
    expect(r.candidate_snapshot_hash).toBe(lexical.candidate_snapshot_hash);
    expect(review(lc, p.root, 's-1').sources[0]).toMatchObject({ run_id: 'run-1', receipt: 'fresh' });
    // Warm vectors are reused: nothing is embedded twice.
    const texts = emb.texts;
    await warmSessionSemantic(lc, p.root, 's-1');
    expect(emb.texts).toBe(texts);

    // Another model: stale until refreshed with that model's vectors.
    configureSemantic(tableEmbedder('another-model'));
    expect(review(lc, p.root, 's-1').sources[0]!.receipt).toBe('stale');
    // A synchronous refresh with cold vectors matches lexically and says so: still stale, promotion fails closed.
    sealRun(lc, p.root, 's-1', 'run-1');
    expect(readReceipt(src)!.matcher_revision).toBe('semantic-delta/1.0');
    expect(() => promote(lc, p.root, 's-1', { candidates: [id] })).toThrow(/stale \(matcher revision semantic-delta\/1\.0 ≠ semantic-delta\/1\.0\+embedding:another-model\).*review s-1 --refresh/);
    await warmSessionSemantic(lc, p.root, 's-1');
    expect(review(lc, p.root, 's-1', { refresh: true }).sources[0]!.receipt).toBe('fresh');
    expect(promote(lc, p.root, 's-1', { candidates: [id] }).promoted.map((x) => x.candidate_id)).toEqual([id]);
  });

  it('the published weights cap semantic alone at 0.40: a paraphrase with nothing lexical in common (title too) enters the pool, not the matches', async () => {
    const { p, src } = setup(PURE);
    configureSemantic(tableEmbedder());
    await warmSessionSemantic(lc, p.root, 's-1');
    const r = reconcileSource(lc, p.root, src);
    expect(r.retrieval).toMatchObject({ mode: 'hybrid', semantic_documents: 1 });
    expect(r.candidates[0]).toMatchObject({ disposition: 'unique', matches: [] });
  });

  it('from the command line: MAESTRO_EMBEDDINGS_* configure it; review --refresh warms, matches and stamps the model', async () => {
    // The test embedder again, served the way a local embeddings server (llama.cpp, Ollama…) serves vectors.
    const table = tableEmbedder('concept-table-http');
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', async () => {
        const { input, model } = JSON.parse(body) as { input: string[]; model: string };
        const vecs = await table.embed(input);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ model, data: vecs.map((v, index) => ({ index, embedding: [...v] })) }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const { p, id, src } = setup(PARAPHRASE);
      const env = { MAESTRO_EMBEDDINGS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, MAESTRO_EMBEDDINGS_MODEL: 'concept-table-http' };
      const r = await maestro(['knowledge', 'review', 's-1', '--refresh', '--json', '--workflow-root', p.dir], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.sources).toEqual([{ run_id: 'run-1', receipt: 'fresh', reasons: [] }]);
      expect(out.candidates.find((c: { candidate_id: string }) => c.candidate_id === id)).toMatchObject({ disposition: 'related', canonical_id: 'S-20260201-cafe' });
      expect(readReceipt(src)).toMatchObject({ matcher_revision: 'semantic-delta/1.0+embedding:concept-table-http', retrieval: { mode: 'hybrid', embedding_used: true } });
      expect(table.calls).toBeGreaterThan(0);
      // The same command without the embedder: that receipt is stale, and a refresh goes back to lexical.
      const plain = await maestro(['knowledge', 'review', 's-1', '--json', '--workflow-root', p.dir]);
      expect(JSON.parse(plain.stdout).sources[0]).toMatchObject({ receipt: 'stale', reasons: ['matcher revision semantic-delta/1.0+embedding:concept-table-http ≠ semantic-delta/1.0'] });
    } finally {
      server.close();
    }
  });

  it("the KnowledgeService's stop() drops the warmed vectors: a second service embeds again", async () => {
    const { p, src } = setup(PARAPHRASE);
    const emb = tableEmbedder();
    const config = { ...resolveKnowledgeConfig({}, { oneShot: true }), embedder: emb };
    const first = new KnowledgeService(config);
    first.start();
    const used = first.lifecycle;
    expect(await warmSessionSemantic(used, p.root, 's-1')).toBeGreaterThan(0);
    expect(used.semantic.warmed(emb.model)).toBeGreaterThan(0);
    expect(reconcileSource(used, p.root, src).retrieval).toMatchObject({ mode: 'hybrid' });
    const texts = emb.texts;
    await first.stop();
    expect(used.semantic.warmed(emb.model)).toBe(0);
    const second = new KnowledgeService(config);
    second.start();
    try {
      // Nothing carried over: the same texts are embedded again, and without warming the matcher is lexical.
      expect(reconcileSource(second.lifecycle, p.root, src).retrieval).toMatchObject({ mode: 'lexical-kg' });
      await warmSessionSemantic(second.lifecycle, p.root, 's-1');
      expect(emb.texts).toBe(2 * texts);
    } finally {
      await second.stop();
    }
  });

  it('embedder errors surface with the model named; nothing is written', async () => {
    const { p, src } = setup(PARAPHRASE);
    const before = readReceipt(src);
    configureSemantic({ model: 'broken', embed: async (t: string[]) => t.slice(1).map(() => new Float32Array(3)) });
    await expect(warmSessionSemantic(lc, p.root, 's-1')).rejects.toThrow(/Embedder broken returned \d+ vectors for \d+ texts/);
    expect(readReceipt(src)).toEqual(before);
  });
});
