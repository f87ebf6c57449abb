/**
 * Time budgets that scale with how busy the machine is. Every wait in the suites (`until`, `poll`,
 * the outbox wait, browser waits) and vitest's own test timeout take their budget through
 * `budget(ms)`: the figure written in a test is what a quiet 2-core machine needs with room to
 * spare, and a loaded machine gets that many times more. A budget bounds how long a broken test
 * hangs; it never decides whether a working one passes.
 *
 * The factor is MAESTRO_TEST_SLOW when set (e.g. `MAESTRO_TEST_SLOW=4 npm test`), else the 1-minute
 * load average per core at the moment the budget is taken (a load of 15 on 2 cores makes each
 * process about 7× slower than on an idle machine), never below 1 and at most 10 so that a hung
 * test still ends. It is read at each call, not once per run: when a second copy of the suite
 * starts beside this one, the waits begun after that get the larger budget.
 */
import { availableParallelism, loadavg } from 'node:os';

const MAX_LOAD_FACTOR = 10;

export function slowFactor(): number {
  const raw = process.env.MAESTRO_TEST_SLOW;
  if (raw) {
    const set = Number(raw);
    if (!(Number.isFinite(set) && set > 0)) throw new Error(`MAESTRO_TEST_SLOW must be a positive number (a budget multiplier), got ${JSON.stringify(raw)}`);
    return Math.max(1, set);
  }
  const perCore = loadavg()[0]! / Math.max(1, availableParallelism());
  return Math.min(MAX_LOAD_FACTOR, Math.max(1, perCore));
}

/** `ms` (what a quiet machine needs, generously) scaled for this machine's load. */
export function budget(ms: number): number {
  return Math.round(ms * slowFactor());
}
