/**
 * What the ranking of `maestro search` does for a user (issue 16 item 2):
 * a rare word in a body beats a common word in a title, stemmed variants are
 * found, an identifier's exact form beats its inflections, and an old index
 * is rebuilt when the index layout changes.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { INDEX_SCHEMA_VERSION } from '../index/schema.js';
import { INDEX_FILE } from '../index/store.js';

const SENTENCES = [
  'The service restarts after the health check fails twice in a row.',
  'Logs are shipped to the central collector every minute.',
  'Rollbacks keep the previous image tagged for a week.',
  'The staging cluster mirrors production with fewer replicas.',
  'Secrets are mounted read-only and rotated by the operator.',
  'Alerts page the on-call engineer after five minutes.',
  'Backups run nightly and are kept for thirty days.',
];

/** A body of ordinary sentences, `n` of them, starting at sentence `from`. */
function prose(from: number, n: number): string {
  return Array.from({ length: n }, (_, i) => SENTENCES[(from + i) % SENTENCES.length]).join(' ');
}

function open(dir: string) {
  return openKnowledge({ env: process.env, workflowRoot: dir });
}

describe('ranking', () => {
  // An operations wiki: ordinary notes of 3–5 sentences; "deploy" in the titles of 10 short notes, "kubelet" once
  // in the body of one runbook. FTS5's bm25 alone (title weight 10× body, judged against the whole entry's length)
  // ranked all ten "Deploy notes" above the runbook. With BM25F, title weight 5 and the title boost scaled by
  // (idf ratio)², the runbook was first only while "deploy" sat in one title in seven: at one in ten it was
  // 2nd (balanced) / 6th (diversity off), at one in sixteen 6th / 7th, and with a runbook twice as long 6th / 7th
  // already at one in seven (bm25f.ts header).
  for (const { notes, runbookSentences } of [
    { notes: 60, runbookSentences: 3 },
    { notes: 90, runbookSentences: 3 },
    { notes: 150, runbookSentences: 3 },
    { notes: 150, runbookSentences: 6 },
  ]) {
    const share = `${Math.round((1000 / (notes + 11)) * 10) / 10} %`;
    it(`puts a rare word found only in one body above entries whose title holds only a common query word ("deploy" in ${share} of the titles, a ${runbookSentences + 1}-sentence runbook)`, () => {
      const { dir, root } = tempRoot();
      for (let i = 0; i < notes; i++) writeKnowhowFile(root, `TIP-20260801-ops-${i}`, { title: `Operations note ${i}` }, prose(i, 3 + (i % 3)));
      for (let i = 0; i < 10; i++) writeKnowhowFile(root, `TIP-20260801-deploy-${i}`, { title: `Deploy notes ${i}` }, prose(i, 3));
      const runbook = writeKnowhowFile(root, 'TIP-20260801-node-agent', { title: 'Node agent runbook' }, `${prose(1, runbookSentences)} When the kubelet stops reporting, drain the node first.`);
      const k = open(dir);
      try {
        for (const diversity of ['balanced', 'off'] as const) {
          const page = k.search('deploy kubelet', { limit: 10, diversity, readOnlyProbe: true });
          expect(page.results[0]!.id, diversity).toBe(runbook);
          // The common word still finds its entries below it.
          expect(page.results.slice(1).every((r) => r.name.startsWith('Deploy notes'))).toBe(true);
        }
      } finally {
        k.close();
      }
    });
  }

  it('finds an entry through a stemmed variant of its word, and ranks the exact form of an identifier first', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 30);
    const buckled = writeKnowhowFile(root, 'TIP-20260801-panel', { title: 'Panel test report' }, 'The thin panel buckled under axial load at 40 kN.');
    // Written first, so it has the lower rowid and wins any tie: only the exact form can put the other first.
    const variant = writeKnowhowFile(root, 'TIP-20260801-a-parser', { title: 'Option parsing' }, 'Call parseOption once per flag; it returns the parsed value.');
    const exact = writeKnowhowFile(root, 'TIP-20260801-b-parser', { title: 'Option parsing' }, 'Call parseOptions once per argv; it returns the parsed values.');
    const k = open(dir);
    try {
      const stemmed = k.search('buckling', { readOnlyProbe: true });
      expect(stemmed.results.map((r) => r.id)).toEqual([buckled]);
      const ids = k.search('parseOptions', { diversity: 'off', readOnlyProbe: true }).results.map((r) => r.id);
      expect(ids.slice(0, 2)).toEqual([exact, variant]);
      // The plain words of the identifier still match both through their stems.
      expect(k.search('parse options', { diversity: 'off', readOnlyProbe: true }).results.map((r) => r.id).sort()).toEqual([variant, exact].sort());
    } finally {
      k.close();
    }
  });

  it('keeps an entry that holds every query word first over entries that repeat one of them', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 30);
    for (let i = 0; i < 8; i++) writeKnowhowFile(root, `TIP-20260801-cache-${i}`, { title: `Cache layer ${i}` }, `cache cache cache ${prose(i, 2)}`);
    const both = writeKnowhowFile(root, 'TIP-20260801-invalidation', { title: 'Invalidation on write' }, `The cache entry is dropped on every write; invalidation is synchronous. ${prose(2, 2)}`);
    const k = open(dir);
    try {
      expect(k.search('cache invalidation', { readOnlyProbe: true }).results[0]!.id).toBe(both);
    } finally {
      k.close();
    }
  });

  it('rebuilds an index written by an older layout on the next open (the schema version in its meta table)', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 5);
    const id = writeKnowhowFile(root, 'TIP-20260801-panel', { title: 'Panel test report' }, 'The thin panel buckled under axial load.');
    const file = join(root.workflowDir, INDEX_FILE);
    const first = open(dir);
    first.sync();
    first.close();
    let db = new Database(file);
    // What an index of the previous version looks like: no field lengths, an older version number.
    db.exec("DROP INDEX entries_lens; ALTER TABLE entries DROP COLUMN len_title; UPDATE meta SET value = '5' WHERE key = 'schema'");
    db.close();
    const k = open(dir);
    try {
      expect(k.search('buckling', { readOnlyProbe: true }).results.map((r) => r.id)).toEqual([id]);
    } finally {
      k.close();
    }
    db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get()).toBe(String(INDEX_SCHEMA_VERSION));
      expect(db.prepare('SELECT len_title FROM entries WHERE id = ?').pluck().get(id)).toBe(3);
    } finally {
      db.close();
    }
  });
});
