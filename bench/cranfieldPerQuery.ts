/**
 * Per-query Cranfield nDCG@10: the whole pipeline (as `maestro search` runs it) beside
 * SQLite FTS5 + porter, worst losses first. A diagnostic for ranking work, not a benchmark:
 * `node --import tsx bench/cranfieldPerQuery.ts [--all]`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openKnowledge } from '../src/knowledge/knowledge.js';
import { fts5Porter, loadDocs, loadQrels, loadQueries, score } from './cranfield.js';

const docs = loadDocs();
const queries = loadQueries();
const qrels = loadQrels();
const dir = mkdtempSync(join(tmpdir(), 'cran-perq-'));
mkdirSync(join(dir, '.workflow', 'knowhow'), { recursive: true });
for (const d of docs) writeFileSync(join(dir, '.workflow', 'knowhow', `DOC-19680101-cran-${d.id}.md`), `---\ntitle: ${JSON.stringify(d.title || `document ${d.id}`)}\ntype: document\n---\n\n${d.text}\n`);
const docId = (id: string) => Number(id.split('-').pop());
const k = openKnowledge({ env: process.env, workflowRoot: dir, syncIntervalMs: 3_600_000 });
k.sync();
const fts = fts5Porter(docs, Database);
const one = (k1: number, ranked: number[]) => score(new Map([[1, ranked]]), new Map([[1, qrels.get(k1) ?? new Map()]]), 1).ndcg10;
const rows: Array<{ q: number; text: string; ours: number; fts: number; off: number; got: number[]; ref: number[] }> = [];
const all = { ours: new Map<number, number[]>(), fts: new Map<number, number[]>(), off: new Map<number, number[]>() };
queries.forEach((text, i) => {
  const q = i + 1;
  const got = k.search(text, { limit: 10, readOnlyProbe: true }).results.map((r) => docId(r.id));
  const off = k.search(text, { limit: 10, diversity: 'off', readOnlyProbe: true }).results.map((r) => docId(r.id));
  const ref = fts.search(text, 10);
  all.ours.set(q, got);
  all.fts.set(q, ref);
  all.off.set(q, off);
  if ((qrels.get(q)?.size ?? 0) > 0) rows.push({ q, text, ours: one(q, got), fts: one(q, ref), off: one(q, off), got, ref });
});
const n = queries.length;
process.stdout.write(`whole pipeline ${score(all.ours, qrels, n).ndcg10.toFixed(4)}  diversity off ${score(all.off, qrels, n).ndcg10.toFixed(4)}  FTS5+porter ${score(all.fts, qrels, n).ndcg10.toFixed(4)}\n`);
if (process.argv.includes('--summary')) process.exit(0);
const wins = rows.filter((r) => r.ours > r.fts + 1e-9).length;
const losses = rows.filter((r) => r.ours < r.fts - 1e-9).length;
process.stdout.write(`queries: ${rows.length}, better than FTS5 ${wins}, worse ${losses}\n\n`);
const show = process.argv.includes('--all') ? rows : rows.filter((r) => r.ours < r.fts - 1e-9);
for (const r of show.sort((a, b) => a.ours - a.fts - (b.ours - b.fts))) {
  const rel = qrels.get(r.q)!;
  const mark = (ids: number[]) => ids.map((d) => (rel.has(d) && rel.get(d)! >= 1 && rel.get(d)! <= 3 ? `${d}*${rel.get(d)}` : String(d))).join(' ');
  process.stdout.write(`q${r.q} ours ${r.ours.toFixed(3)} off ${r.off.toFixed(3)} fts ${r.fts.toFixed(3)}  ${r.text}\n   ours: ${mark(r.got)}\n   fts:  ${mark(r.ref)}\n`);
}
fts.close();
k.close();
rmSync(dir, { recursive: true, force: true });
