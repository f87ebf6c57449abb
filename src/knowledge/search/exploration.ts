/**
 * The exploration slot, chosen deterministically (issue 16 item 1).
 *
 * Exposure counts change with every search, so a slot picked by "fewest
 * impressions" made the same query on the same corpus return a different page
 * each time, and made even a read-only probe depend on earlier use. Here the
 * slot is picked by a seed: the normalised query, a fingerprint of the
 * candidate pool (every candidate's id and content key, so it changes exactly
 * when the corpus changes in a way this query can see) and the exploration
 * period (`EXPLORATION_PERIOD_DAYS`, UTC). Same query + same corpus + same
 * period → same page; the slot rotates to another eligible entry when the
 * corpus or the period changes. Nothing that use changes is read.
 *
 * Eligibility is FORMATS §5.2's: limit ≥ 4, a pool larger than the limit,
 * outside the selected ids and families, score ≥ 0.35 × max; the slot
 * replaces the last result, so it is never first.
 */
import { createHash } from 'node:crypto';
import { EXPLORATION_FLOOR, EXPLORATION_MIN_LIMIT, type Scored, type Selected } from './diversity.js';

/** The slot rotates once per this many days (UTC), even when nothing changes. */
export const EXPLORATION_PERIOD_DAYS = 7;
const DAY_MS = 86_400_000;

/** The period number of a clock value: floor(days since the epoch / period). */
export function explorationPeriod(now: number): number {
  return Math.floor(now / (EXPLORATION_PERIOD_DAYS * DAY_MS));
}

/**
 * Start of the UTC day of `now`: time decay uses it, so scores (and so pages)
 * change at most once a day instead of with every millisecond.
 */
export function decayClock(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

export interface SeededInput<T extends Scored> {
  selected: Array<Selected<T>>;
  pool: T[];
  limit: number;
  query: string;
  now: number;
}

export function explorationSeed(query: string, pool: Scored[], period: number): string {
  const h = createHash('sha256');
  h.update(`${query.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim()}\u0000${period}\u0000`);
  // Order-independent: sorted by id, so the seed is a property of the pool, not of its ranking.
  for (const p of [...pool].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) h.update(`${p.id}\u0001${p.contentKey}\u0000`);
  return h.digest('hex');
}

function draw(seed: string, id: string): string {
  return createHash('sha256').update(seed).update('\u0000').update(id).digest('hex');
}

/** Returns `selected` with at most one seeded exploration result in its last slot. */
export function applySeededExploration<T extends Scored>(input: SeededInput<T>): { selected: Array<Selected<T>>; state: string } {
  const { selected, pool, limit } = input;
  if (limit < EXPLORATION_MIN_LIMIT || pool.length <= limit || selected.length < limit) return { selected, state: 'off: pool too small' };
  const max = Math.max(...pool.map((p) => p.score));
  const ids = new Set(selected.map((s) => s.item.id));
  const families = new Set(selected.map((s) => s.item.family));
  const eligible = pool.filter((c) => !ids.has(c.id) && !families.has(c.family) && c.score >= EXPLORATION_FLOOR * max);
  if (eligible.length === 0) return { selected, state: 'on: no eligible entry' };
  const seed = explorationSeed(input.query, pool, explorationPeriod(input.now));
  let best = eligible[0]!;
  let bestDraw = draw(seed, best.id);
  for (const c of eligible.slice(1)) {
    const d = draw(seed, c.id);
    if (d < bestDraw) {
      best = c;
      bestDraw = d;
    }
  }
  const out = selected.slice(0, limit);
  out[out.length - 1] = { item: best, reason: 'exploration' };
  return { selected: out, state: 'on' };
}
