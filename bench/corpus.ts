/**
 * A deterministic synthetic corpus for bench/search.ts: Zipf-distributed
 * pseudo-words, 70 % knowhow documents (one file each) and 30 % spec entries
 * (50 per file), 2 % deprecated, seven categories.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pa', 'den', 'gor', 'lin', 'tra', 'ex', 'qu', 'bel', 'sta', 'zor', 'ni', 'fa', 'cle', 'mon', 'dri', 'op'];

export interface Vocab {
  words: string[];
  pick(): string;
}

export function vocab(rand: () => number, size = 8000): Vocab {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYL[Math.floor(rand() * SYL.length)];
    words.add(w);
  }
  const list = [...words];
  const cdf: number[] = [];
  let total = 0;
  for (let i = 0; i < list.length; i++) cdf.push((total += 1 / Math.pow(i + 1, 1.07)));
  return {
    words: list,
    pick() {
      const x = rand() * total;
      let lo = 0;
      let hi = cdf.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      return list[lo]!;
    },
  };
}

const CATS = ['coding', 'arch', 'debug', 'test', 'review', 'learning', 'ui'];

export interface GenDoc {
  id: string;
  title: string;
  summary: string;
  tags: string[];
  category: string;
  body: string;
  deprecated: boolean;
}

export function generateCorpus(size: number, seed = 42): GenDoc[] {
  const rand = prng(seed);
  const v = vocab(rand);
  const words = (n: number) => Array.from({ length: n }, () => v.pick()).join(' ');
  const docs: GenDoc[] = [];
  for (let i = 0; i < size; i++) {
    docs.push({
      id: String(i),
      title: words(3 + Math.floor(rand() * 5)),
      summary: words(8 + Math.floor(rand() * 8)),
      tags: [...new Set(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => v.words[Math.floor(rand() * 2000)]!))],
      category: CATS[Math.floor(rand() * CATS.length)]!,
      body: words(30 + Math.floor(rand() * 120)),
      deprecated: rand() < 0.02,
    });
  }
  return docs;
}

/**
 * Queries of 2–3 words taken from one document's title and body. The 100 most
 * frequent pseudo-words play the part that function words play in real text
 * (a real query's stop words are dropped before the index sees them), so
 * query words are drawn from the rest of the vocabulary; the documents keep
 * every word. Both engines get exactly the same query strings.
 */
export function generateQueries(docs: GenDoc[], n: number, seed = 7, kind: 'narrow' | 'broad' = 'narrow'): string[] {
  const rand = prng(seed);
  // `broad` keeps the frequent words: queries that match a large share of the corpus.
  const common = new Set(kind === 'narrow' ? vocab(prng(42)).words.slice(0, 100) : []);
  const out: string[] = [];
  while (out.length < n) {
    const d = docs[Math.floor(rand() * docs.length)]!;
    const tw = d.title.split(' ').filter((w) => !common.has(w));
    const bw = d.body.split(' ').filter((w) => !common.has(w));
    if (!tw.length || bw.length < 2) continue;
    const parts = [tw[Math.floor(rand() * tw.length)]!, bw[Math.floor(rand() * bw.length)]!];
    if (rand() < 0.5) parts.push(bw[Math.floor(rand() * bw.length)]!);
    out.push(parts.join(' '));
  }
  return out;
}

/** Writes the corpus as a `.workflow/` folder: knowhow files and spec files of 50 entries. */
export function writeCorpus(dir: string, docs: GenDoc[]): void {
  const know = join(dir, '.workflow', 'knowhow');
  const specs = join(dir, '.workflow', 'specs');
  mkdirSync(know, { recursive: true });
  mkdirSync(specs, { recursive: true });
  let specBuf: string[] = [];
  let specFile = 0;
  const flush = () => {
    if (!specBuf.length) return;
    writeFileSync(join(specs, `bench-${specFile++}.md`), `---\ntitle: "Bench ${specFile}"\ncategory: coding\n---\n\n${specBuf.join('\n\n')}\n`);
    specBuf = [];
  };
  docs.forEach((d, i) => {
    if (i % 10 < 3) {
      specBuf.push(`<spec-entry category="${d.category}" keywords="${d.tags.join(',')}" date="2026-08-01" sid="S-20260801-${d.id}" title="${d.title}" description="${d.summary}"${d.deprecated ? ' status="deprecated"' : ''}>\n\n### ${d.title}\n\n${d.body}\n\n</spec-entry>`);
      if (specBuf.length === 50) flush();
    } else {
      writeFileSync(
        join(know, `TIP-20260801-bench-${d.id}.md`),
        `---\ntitle: ${d.title}\ndescription: ${d.summary}\ntype: tip\ncategory: ${d.category}\ncreated: 2026-08-01T00:00:00.000Z\ntags: [${d.tags.join(', ')}]\n${d.deprecated ? 'status: deprecated\n' : ''}---\n\n${d.body}\n`,
      );
    }
  });
  flush();
}
