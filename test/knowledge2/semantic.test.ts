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
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { project, type Project } from '../helpers/knowledge2.js';
import type { Embedder } from '../../src/knowledge/embeddings.js';
import { readCorpus } from '../../src/knowledge/ledger/corpusDocs.js';
import { promote } from '../../src/knowledge/promote/promote.js';
import { freshness, readReceipt, readSourceState, reconcileSource, runSource } from '../../src/knowledge/reconcile/receipt.js';
import { review, warmSessionSemantic } from '../../src/knowledge/reconcile/review.js';
import { configureSemantic } from '../../src/knowledge/reconcile/semantic.js';
import { sealRun, stage } from '../../src/knowledge/session/ops.js';
import { createRun, createSession } from '../../src/knowledge/session/store.js';

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

afterEach(() => configureSemantic(undefined));

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
  const { candidate } = stage(p.root, { target: 'spec', ...c, category: 'coding', run: 'run-1', session: 's-1' });
  return { p, id: candidate.candidate_id, src: runSource(p.root, 's-1', 'run-1') };
}

describe('semantic matching through an Embedder', () => {
  it('without an embedder the paraphrase is unique (lexical 0); with one it is matched, and the receipt says how', async () => {
    const { p, id, src } = setup(PARAPHRASE);
    const lexical = reconcileSource(p.root, src);
    expect(lexical.matcher_revision).toBe('semantic-delta/1.0');
    expect(lexical.retrieval).toMatchObject({ mode: 'lexical-kg', embedding_used: false });
    expect(lexical.candidates[0]).toMatchObject({ candidate_id: id, disposition: 'unique', matches: [] });

    const emb = tableEmbedder();
    configureSemantic(emb);
    // Configuring an embedder makes the lexical receipt stale (the matcher changed), never silently fresh.
    const corpus = readCorpus(p.root.workflowDir);
    expect(freshness(src, readReceipt(src), readSourceState(src), corpus)).toMatchObject({ state: 'stale', reasons: ['matcher revision semantic-delta/1.0 ≠ semantic-delta/1.0+embedding:test-concept-table'] });
    expect(await warmSessionSemantic(p.root, 's-1')).toBeGreaterThan(0);
    const r = reconcileSource(p.root, src);
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
    expect(review(p.root, 's-1').sources[0]).toMatchObject({ run_id: 'run-1', receipt: 'fresh' });
    // Warm vectors are reused: nothing is embedded twice.
    const texts = emb.texts;
    await warmSessionSemantic(p.root, 's-1');
    expect(emb.texts).toBe(texts);

    // Another model: stale until refreshed with that model's vectors.
    configureSemantic(tableEmbedder('another-model'));
    expect(review(p.root, 's-1').sources[0]!.receipt).toBe('stale');
    // A synchronous refresh with cold vectors matches lexically and says so: still stale, promotion fails closed.
    sealRun(p.root, 's-1', 'run-1');
    expect(readReceipt(src)!.matcher_revision).toBe('semantic-delta/1.0');
    expect(() => promote(p.root, 's-1', { candidates: [id] })).toThrow(/stale \(matcher revision semantic-delta\/1\.0 ≠ semantic-delta\/1\.0\+embedding:another-model\).*review s-1 --refresh/);
    await warmSessionSemantic(p.root, 's-1');
    expect(review(p.root, 's-1', { refresh: true }).sources[0]!.receipt).toBe('fresh');
    expect(promote(p.root, 's-1', { candidates: [id] }).promoted.map((x) => x.candidate_id)).toEqual([id]);
  });

  it('the published weights cap semantic alone at 0.40: a paraphrase with nothing lexical in common (title too) enters the pool, not the matches', async () => {
    const { p, src } = setup(PURE);
    configureSemantic(tableEmbedder());
    await warmSessionSemantic(p.root, 's-1');
    const r = reconcileSource(p.root, src);
    expect(r.retrieval).toMatchObject({ mode: 'hybrid', semantic_documents: 1 });
    expect(r.candidates[0]).toMatchObject({ disposition: 'unique', matches: [] });
  });

  it('embedder errors surface with the model named; nothing is written', async () => {
    const { p, src } = setup(PARAPHRASE);
    const before = readReceipt(src);
    configureSemantic({ model: 'broken', embed: async (t: string[]) => t.slice(1).map(() => new Float32Array(3)) });
    await expect(warmSessionSemantic(p.root, 's-1')).rejects.toThrow(/Embedder broken returned \d+ vectors for \d+ texts/);
    expect(readReceipt(src)).toEqual(before);
  });
});
