import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { FIELD_WEIGHTS, fetchCandidates, matchExpression } from './query.js';
import { INDEX_FILE } from './store.js';

/** Every match ranked, the best `limit` kept: what fetchCandidates must return whatever it skips. */
function rankAll(db: Database.Database, query: string, limit: number): Array<[number, number]> {
  const w = FIELD_WEIGHTS;
  const rows = db
    .prepare(`SELECT rowid, bm25(entries_fts, ${w.title}, ${w.summary}, ${w.tags}, ${w.body}) AS rank FROM entries_fts WHERE entries_fts MATCH ?`)
    .all(matchExpression(query)) as Array<{ rowid: number; rank: number }>;
  return rows
    .sort((a, b) => a.rank - b.rank || a.rowid - b.rowid)
    .slice(0, limit)
    .map((r) => [r.rowid, -r.rank]);
}

describe('candidates are the best matches even when common-word-only matches are skipped', () => {
  it('returns exactly the full ranking for queries mixing very common, common and rare words', () => {
    const { dir, root } = tempRoot();
    // 1,500 documents: "common" in all, "often" in two of five (in the title of some), "seldom" in 1 of 15
    // (in a long body, where it scores below a title "often": skipping the "often"-only documents
    // must then be refused), and a rare word in a few.
    for (let i = 0; i < 1500; i++) {
      const words = ['common', 'text', `filler${i % 97}`];
      if (i % 5 < 2) words.push('often');
      if (i % 15 === 0) words.push('seldom', 'seldom');
      if (i % 250 === 0) words.push('rareword');
      const title = i % 7 === 0 ? 'common heading' : i % 5 < 2 && i % 11 === 0 ? 'often often notes' : `title ${i % 13}`;
      writeKnowhowFile(root, `TIP-20260801-doc-${i}`, { title }, `${words.join(' ')} ${'body '.repeat(i % 15 === 0 ? 1000 : i % 11)}`);
    }
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    k.sync();
    k.close();
    const db = new Database(join(dir, '.workflow', INDEX_FILE), { readonly: true });
    try {
      for (const query of ['common seldom', 'common often seldom', 'often seldom', 'common rareword', 'common text', 'often seldom rareword', 'common heading often', 'common']) {
        for (const limit of [5, 40, 200]) {
          const got = fetchCandidates(db, query, {}, limit).map((c) => [c.rowid, c.bm25]);
          expect(got, `${query} (limit ${limit})`).toEqual(rankAll(db, query, limit));
        }
      }
    } finally {
      db.close();
    }
  });
});
