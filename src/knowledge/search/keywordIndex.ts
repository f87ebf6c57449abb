/**
 * The keyword index that picks specs to inject into agent prompts
 * (FORMATS §1.8). Built from the canonical corpus; deprecated entries —
 * declared or superseded — are skipped (seed 000 §1.1 X1).
 */
import { effectiveDeprecated } from '../format/corpus.js';
import type { KnowledgeEntry } from '../format/entry.js';

const CJK = /[\u4e00-\u9fff]/;

export interface KeywordHit {
  id: string;
  title: string;
  score: number;
  matched: string[];
  entry: KnowledgeEntry;
}

export interface KeywordIndex {
  size: number;
  match(text: string, limit?: number): KeywordHit[];
}

export function buildKeywordIndex(entries: KnowledgeEntry[]): KeywordIndex {
  const deprecated = effectiveDeprecated(entries);
  const byKey = new Map<string, Set<KnowledgeEntry>>();
  const add = (k: string, e: KnowledgeEntry) => {
    let s = byKey.get(k);
    if (!s) byKey.set(k, (s = new Set()));
    s.add(e);
  };
  let size = 0;
  for (const e of entries) {
    if (e.kind !== 'spec' || deprecated.has(e.id)) continue;
    size++;
    for (const kw of e.tags) {
      const k = kw.toLowerCase();
      add(k, e);
      if (k.length > 2 && CJK.test(k)) {
        const chars = [...k];
        for (let n = 2; n <= 4; n++) for (let i = 0; i + n <= chars.length; i++) add(chars.slice(i, i + n).join(''), e);
      }
    }
  }
  return {
    size,
    match(text, limit = 5) {
      const lower = text.toLowerCase();
      const words = new Set(lower.match(/[\p{L}\p{N}_-]+/gu) ?? []);
      const scores = new Map<KnowledgeEntry, { score: number; matched: string[] }>();
      for (const [key, set] of byKey) {
        const present = CJK.test(key) ? lower.includes(key) : words.has(key);
        if (!present) continue;
        for (const e of set) {
          const declared = e.tags.includes(key);
          let s = 10 + (declared ? 10 : 2 * key.length);
          if (e.title.toLowerCase().includes(key)) s += 15;
          if (e.body.toLowerCase().includes(key)) s += 5;
          const cur = scores.get(e) ?? { score: 0, matched: [] };
          cur.score += s;
          cur.matched.push(key);
          scores.set(e, cur);
        }
      }
      const hits: KeywordHit[] = [];
      for (const [e, v] of scores) {
        const factor = e.confidence === 'high' ? 1.5 : e.confidence === 'low' ? 0.8 : e.confidence === 'contested' ? 0.5 : 1;
        hits.push({ id: e.id, title: e.title, score: v.score * factor, matched: v.matched, entry: e });
      }
      hits.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
      return hits.slice(0, limit);
    },
  };
}
