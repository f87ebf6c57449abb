/**
 * Waiting on states, never on the clock. `until` re-checks on every event the daemon publishes;
 * `poll` re-checks what another process shows. Both take a budget that is what a quiet machine
 * needs with room to spare, scaled by `budget()` for this machine's load; the budget only bounds
 * how long a broken test hangs.
 */
import type { Task } from '../../src/core/types.js';
import type { TaskStatus } from '../../src/core/status.js';
import type { Bus } from '../../src/lib/bus.js';
import type { Store } from '../../src/store/store.js';
import { budget } from './budget.js';

/** Thrown from a check to end the wait at once (a task stuck for good, a process that died). */
export class GiveUp extends Error {}

function timedOut(what: string, ms: number, lastErr: unknown): Error {
  const last = lastErr ? ` (the last check failed: ${(lastErr as Error).message ?? String(lastErr)})` : '';
  return new Error(`timed out after ${ms} ms waiting for ${what}${last}`);
}

export async function until<T>(bus: Bus, check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 60_000): Promise<T> {
  const ms = budget(timeoutMs);
  const first = await check();
  if (first) return first;
  return new Promise<T>((resolve, reject) => {
    let busy = false;
    let pending = false;
    const attempt = async () => {
      if (busy) {
        pending = true;
        return;
      }
      busy = true;
      try {
        do {
          pending = false;
          const v = await check();
          if (v) {
            done();
            resolve(v);
            return;
          }
        } while (pending);
      } catch (err) {
        done();
        reject(err);
      } finally {
        busy = false;
      }
    };
    const off = bus.onEvent(() => void attempt());
    // Some changes (a worker exiting) publish no event; look again now and then too.
    const poll = setInterval(() => void attempt(), 250);
    const timer = setTimeout(() => {
      done();
      reject(timedOut(what, ms, null));
    }, ms);
    const done = () => {
      off();
      clearInterval(poll);
      clearTimeout(timer);
    };
  });
}

/**
 * Waiting on what another process shows (no bus to listen to): re-check the state until `check`
 * gives a value or the budget runs out; the gap between checks grows from 1 ms to `maxGapMs`, so a
 * quick answer is seen at once and a slow one does not flood a busy machine with requests.
 * A check that throws counts as "not yet" (a database restarting, a file half written), and the
 * last such error is named if the wait times out; a check that throws `GiveUp` ends it at once.
 */
export async function poll<T>(
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  what: string,
  timeoutMs = 120_000,
  maxGapMs = 50,
): Promise<T> {
  const ms = budget(timeoutMs);
  const deadline = Date.now() + ms;
  let lastErr: unknown = null;
  for (let gap = 1; ; gap = Math.min(gap * 2, maxGapMs)) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      lastErr = err;
    }
    if (Date.now() > deadline) throw timedOut(what, ms, lastErr);
    await new Promise((r) => setTimeout(r, gap));
  }
}

/**
 * Until the task reaches `status` (the task as it is then), on a daemon's bus. A task that reaches one of
 * `instead` (needs_attention unless given) ends the wait at once, with its status and last error.
 */
export function untilStatus(d: { store: Store; bus: Bus }, taskId: string, status: TaskStatus, instead: readonly TaskStatus[] = ['needs_attention']): Promise<Task> {
  return until(d.bus, async () => {
    const t = await d.store.tasks.get(taskId);
    if (instead.includes(t.status)) throw new Error(`${t.status} instead of ${status}: ${t.lastRunError}`);
    return t.status === status ? t : null;
  }, status);
}
