/**
 * Cranfield loading and scoring for bench/search.ts, scored exactly as
 * ../shared/eval/cranfield/README.md says: nDCG@10 with gains 1→3, 2→2, 3→1,
 * recall@10 over grades 1–3, averaged over the queries with at least one
 * such document.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CranDoc {
  id: number;
  title: string;
  text: string;
}

export function cranfieldDir(): string {
  return process.env.CRANFIELD_DIR ?? join(import.meta.dirname, '..', '..', 'shared', 'eval', 'cranfield');
}

function records(text: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  let cur: Record<string, string> | null = null;
  let field = '';
  for (const line of text.replace(/\r/g, '').split('\n')) {
    const m = /^\.([A-Z])(?:\s+(.*))?$/.exec(line);
    if (m) {
      if (m[1] === 'I') {
        cur = { I: (m[2] ?? '').trim() };
        out.push(cur);
        field = '';
      } else field = m[1]!;
      continue;
    }
    if (cur && field) cur[field] = `${cur[field] ?? ''}${line} `;
  }
  return out;
}

export function loadDocs(dir = cranfieldDir()): CranDoc[] {
  return records(readFileSync(join(dir, 'cran.all.1400'), 'utf8')).map((r) => ({ id: Number(r.I), title: (r.T ?? '').trim(), text: (r.W ?? '').trim() }));
}

/** Query k (1-based) is the k-th record, whatever its label. */
export function loadQueries(dir = cranfieldDir()): string[] {
  return records(readFileSync(join(dir, 'cran.qry'), 'utf8')).map((r) => (r.W ?? '').trim());
}

/** qrels[k] = Map(doc → grade). */
export function loadQrels(dir = cranfieldDir()): Map<number, Map<number, number>> {
  const q = new Map<number, Map<number, number>>();
  for (const line of readFileSync(join(dir, 'cranqrel'), 'utf8').split('\n')) {
    const [a, b, c] = line.trim().split(/\s+/).map(Number);
    if (!a || !b || c === undefined || Number.isNaN(c)) continue;
    if (!q.has(a)) q.set(a, new Map());
    q.get(a)!.set(b, c);
  }
  return q;
}

const GAIN: Record<number, number> = { 1: 3, 2: 2, 3: 1 };

export function score(ranked: Map<number, number[]>, qrels: Map<number, Map<number, number>>, nQueries: number): { ndcg10: number; recall10: number; queries: number } {
  let ndcg = 0;
  let recall = 0;
  let n = 0;
  for (let k = 1; k <= nQueries; k++) {
    const rel = qrels.get(k) ?? new Map<number, number>();
    const relevant = [...rel.entries()].filter(([, g]) => g >= 1 && g <= 3);
    if (relevant.length === 0) continue;
    n++;
    const got = (ranked.get(k) ?? []).slice(0, 10);
    let dcg = 0;
    got.forEach((d, i) => {
      dcg += (GAIN[rel.get(d) ?? -1] ?? 0) / Math.log2(i + 2);
    });
    const ideal = relevant.map(([, g]) => GAIN[g]!).sort((a, b) => b - a).slice(0, 10);
    const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
    ndcg += idcg ? dcg / idcg : 0;
    recall += got.filter((d) => (rel.get(d) ?? -1) >= 1 && (rel.get(d) ?? -1) <= 3).length / relevant.length;
  }
  return { ndcg10: ndcg / n, recall10: recall / n, queries: n };
}

/** Plain BM25 (k1 1.2, b 0.75) over title + text, lowercase word tokens, no stemming: the README's baseline. */
export function plainBm25(docs: CranDoc[]): (query: string, k: number) => number[] {
  const tok = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const tfs = docs.map((d) => {
    const m = new Map<string, number>();
    for (const t of tok(`${d.title} ${d.text}`)) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  });
  const lens = docs.map((d) => tok(`${d.title} ${d.text}`).length);
  const avg = lens.reduce((a, b) => a + b, 0) / docs.length;
  const df = new Map<string, number>();
  for (const m of tfs) for (const t of m.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const N = docs.length;
  return (query, k) => {
    const terms = [...new Set(tok(query))];
    const scores = docs.map((d, i) => {
      let s = 0;
      for (const t of terms) {
        const f = tfs[i]!.get(t);
        if (!f) continue;
        const idf = Math.log(1 + (N - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
        s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * lens[i]!) / avg));
      }
      return { id: d.id, s };
    });
    return scores.filter((x) => x.s > 0).sort((a, b) => b.s - a.s || a.id - b.id).slice(0, k).map((x) => x.id);
  };
}

/** SQLite FTS5 with the porter stemmer over title + text, bm25 order, query words OR-ed: the second baseline. */
export function fts5Porter(docs: CranDoc[], Database: typeof import('better-sqlite3')): { search: (query: string, k: number) => number[]; close: () => void } {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE d USING fts5(title, text, tokenize = 'porter unicode61')");
  const ins = db.prepare('INSERT INTO d(rowid, title, text) VALUES (?, ?, ?)');
  db.transaction(() => docs.forEach((d) => ins.run(d.id, d.title, d.text)))();
  const q = db.prepare('SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d), rowid LIMIT ?').pluck();
  return {
    search: (query, k) => {
      const words = [...new Set(query.toLowerCase().match(/[a-z0-9]+/g) ?? [])];
      if (!words.length) return [];
      return q.all(words.map((w) => `"${w}"`).join(' OR '), k) as number[];
    },
    close: () => db.close(),
  };
}
