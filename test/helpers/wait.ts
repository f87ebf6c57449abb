/** Waiting on the daemon: re-check a condition on every event it publishes, with a deadline. */
import type { Bus } from '../../src/lib/bus.js';

export async function until<T>(bus: Bus, check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 60_000): Promise<T> {
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
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const done = () => {
      off();
      clearInterval(poll);
      clearTimeout(timer);
    };
  });
}

/**
 * Waiting on what another process shows (no bus to listen to): re-check the state until `check`
 * gives a value or the (generous) deadline passes; the gap between checks grows from 1 ms to 50 ms,
 * so a quick answer is seen at once and a slow one does not flood a busy machine with requests.
 * A check that throws counts as "not yet".
 */
export async function poll<T>(check: () => Promise<T | null | undefined | false> | T | null | undefined | false, what: string, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let gap = 1; ; gap = Math.min(gap * 2, 50)) {
    const value = await Promise.resolve().then(check).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, gap));
  }
}
