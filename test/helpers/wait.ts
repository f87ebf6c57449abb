/** Waiting on the daemon: re-check a condition on every event it publishes, with a deadline. */
import type { Bus } from '../../src/daemon/bus.js';

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
