/**
 * Balanced selection (seed 000 §4.2): from a relevant candidate pool, pick
 * results without letting one family, one near-duplicate or one popular entry
 * take the page — and without ever demoting the most relevant result.
 *
 * Order of operations, each bounded by relevance:
 * 1. canonical dedup (same id, or same title+body in another scope);
 * 2. MMR (λ 0.88) for knowledge results, under a family cap (1 per parent
 *    document in balanced mode, 2 with diversity off);
 * 3. backfill to the limit with the capped-out candidates (cap relaxed to 2,
 *    then lifted), so diversity never returns fewer results than exist;
 * 4. at most one exploration slot, seeded (exploration.ts), never first.
 */
import { similarityTokens } from '../format/text.js';

export const MMR_LAMBDA = 0.88;
export const EXPLORATION_FLOOR = 0.35;
export const EXPLORATION_MIN_LIMIT = 4;

export type SelectionReason = 'relevance' | 'diversity' | 'exploration';

export interface Scored {
  id: string;
  family: string;
  /** Final relevance, higher is better. */
  score: number;
  /** Text for similarity: title, summary, tags, category. */
  text: string;
  /** Title + body fingerprint for cross-scope dedup. */
  contentKey: string;
}

export interface Selected<T extends Scored> {
  item: T;
  reason: SelectionReason;
}

export function dedupCanonical<T extends Scored>(items: T[]): T[] {
  const seenId = new Set<string>();
  const seenContent = new Set<string>();
  const out: T[] = [];
  for (const it of [...items].sort(byScore)) {
    if (seenId.has(it.id) || seenContent.has(it.contentKey)) continue;
    seenId.add(it.id);
    seenContent.add(it.contentKey);
    out.push(it);
  }
  return out;
}

function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export interface SelectOptions {
  limit: number;
  balanced: boolean;
  /** Apply MMR (knowledge results); off for plain relevance order. */
  mmr: boolean;
}

export function selectDiverse<T extends Scored>(pool: T[], opts: SelectOptions): Array<Selected<T>> {
  const sorted = [...pool].sort(byScore);
  const cap = opts.balanced ? 1 : 2;
  const selected: Array<Selected<T>> = [];
  const perFamily = new Map<string, number>();
  const max = sorted[0]?.score ?? 1;
  // Each item's similarity tokens as sorted word numbers: Jaccard is then a merge of two arrays.
  const words = new Map<string, number>();
  const tokens = new Map<string, Int32Array>();
  const tok = (t: T) => {
    let s = tokens.get(t.id);
    if (!s) {
      s = Int32Array.from(similarityTokens(t.text), (w) => {
        let n = words.get(w);
        if (n === undefined) words.set(w, (n = words.size));
        return n;
      }).sort();
      tokens.set(t.id, s);
    }
    return s;
  };
  const remaining = new Set(sorted);
  const take = (t: T, reason: SelectionReason) => {
    selected.push({ item: t, reason });
    perFamily.set(t.family, (perFamily.get(t.family) ?? 0) + 1);
    remaining.delete(t);
  };
  // Bounded work: MMR only looks at the head of the pool, and each candidate's
  // similarity to the selected set is kept up to date one pick at a time.
  const window = Math.max(opts.limit * 8, 50);
  const maxSim = new Map<T, number>();
  const useMmr = opts.mmr && opts.balanced;
  while (selected.length < opts.limit) {
    let best: T | undefined;
    let bestValue = -Infinity;
    let scanned = 0;
    for (const t of remaining) {
      if ((perFamily.get(t.family) ?? 0) >= cap) continue;
      if (!useMmr) {
        best = t; // plain relevance order: the first eligible is the best
        break;
      }
      if (++scanned > window) break;
      const value = MMR_LAMBDA * (t.score / max) - (1 - MMR_LAMBDA) * (maxSim.get(t) ?? 0);
      if (value > bestValue) {
        bestValue = value;
        best = t;
      }
    }
    if (!best) break;
    take(best, selected.length === 0 || best === firstEligible(remaining, perFamily, cap) ? 'relevance' : 'diversity');
    if (useMmr) {
      const bt = tok(best);
      for (const t of remaining) {
        const sim = jaccardSorted(tok(t), bt);
        if (sim > (maxSim.get(t) ?? 0)) maxSim.set(t, sim);
      }
    }
  }
  // Backfill: the cap shapes the order, it never empties the page. First up to
  // two per family, then anything left, still in relevance order.
  for (const relaxed of [2, Infinity]) {
    for (const t of [...remaining]) {
      if (selected.length >= opts.limit) break;
      if ((perFamily.get(t.family) ?? 0) >= relaxed) continue;
      take(t, 'relevance');
    }
  }
  return selected;
}

/** `jaccard` of two sets given as sorted arrays of distinct numbers (the same value). */
function jaccardSorted(a: Int32Array, b: Int32Array): number {
  if (a.length === 0 && b.length === 0) return 0;
  let inter = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! === b[j]!) {
      inter++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return inter / (a.length + b.length - inter);
}

function firstEligible<T extends Scored>(remaining: Set<T>, perFamily: Map<string, number>, cap: number): T | undefined {
  for (const t of remaining) if ((perFamily.get(t.family) ?? 0) < cap) return t;
  return undefined;
}

/** FORMATS §5.1 time decay: 0.3 + 0.7·exp(−ln2·age/halfLife); half-lives spec 60, knowhow 30 days. */
export function timeDecay(kind: string, sortDate: number | null, now: number): number {
  if (sortDate === null || !Number.isFinite(sortDate)) return 1;
  const halfLife = kind === 'knowhow' ? 30 : 60;
  const ageDays = Math.max(0, (now - sortDate) / 86_400_000);
  return 0.3 + 0.7 * Math.exp((-Math.LN2 * ageDays) / halfLife);
}
