/**
 * Issue 16 item 1: the same query on the same corpus gives the same page,
 * always — five repeats identical, whatever the corpus and the query, and a
 * read-only probe sees the page a normal search saw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { appendSpecEntry } from '../format/specWriter.js';

const WORDS = ['cache', 'retry', 'deploy', 'schema', 'token', 'index', 'queue', 'lock', 'worker', 'budget', 'search', 'review', 'branch', 'merge', 'probe', 'alpha', 'beta', 'gamma'];

const doc = fc.record({
  kind: fc.constantFrom('spec', 'knowhow'),
  title: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
  body: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 30 }),
  tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }),
  category: fc.constantFrom('coding', 'arch', 'debug', 'learning'),
});

const query = fc.oneof(
  fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
  fc.string({ maxLength: 30 }),
);

function page(r: { results: Array<{ id: string; rank: number; score: number; selectionReason: string }> }) {
  return r.results.map((x) => [x.id, x.rank, x.score, x.selectionReason]);
}

describe('deterministic search', () => {
  it('five repeats of a query give the same page, and a probe sees the same page (random corpora and queries)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 5, maxLength: 40 }), fc.array(query, { minLength: 1, maxLength: 4 }), fc.integer({ min: 4, max: 12 }), async (docs, queries, limit) => {
        const { dir, root } = tempRoot();
        docs.forEach((d, i) => {
          if (d.kind === 'spec') appendSpecEntry(root, { category: d.category, title: `${d.title.join(' ')} ${i}`, content: d.body.join(' '), keywords: d.tags.length ? d.tags : ['x'] });
          else writeKnowhowFile(root, `TIP-20260801-d${i}`, { title: d.title.join(' '), tags: d.tags, category: d.category }, d.body.join(' '));
        });
        const k = openKnowledge({ env: process.env, workflowRoot: dir, wikiRoot: null, embedder: null });
        try {
          for (const q of queries) {
            const first = page(k.search(q, { limit }));
            for (let i = 0; i < 4; i++) expect(page(k.search(q, { limit }))).toEqual(first);
            expect(page(k.search(q, { limit, readOnlyProbe: true }))).toEqual(first);
            const mixed = page(await k.searchHybrid(q, { limit }));
            for (let i = 0; i < 4; i++) expect(page(await k.searchHybrid(q, { limit }))).toEqual(mixed);
          }
        } finally {
          k.close();
        }
      }),
      { numRuns: 25 },
    );
  });
});
