/** When a knowledge handle scans its files: the slow sources (run ledgers) far less often in a long-lived process. */
import { describe, expect, it } from 'vitest';
import { createSyncThrottle, SLOW_INTERVALS } from './syncThrottle.js';

function throttle(intervalMs: number, canWrite = true) {
  let t = 1_000_000;
  const scans: boolean[] = [];
  const th = createSyncThrottle({ canWrite, intervalMs, now: () => t });
  return { th, scans, at: (ms: number) => (t = 1_000_000 + ms), scan: () => th.files((all) => scans.push(all)) };
}

describe('the knowledge sync throttle', () => {
  it('a long-lived process scans at most once per interval, the slow sources at most once per SLOW_INTERVALS', () => {
    const { scans, at, scan, th } = throttle(1000);
    scan(); // the first scan: everything
    at(500);
    scan(); // within the interval: nothing
    at(1000);
    scan();
    at(SLOW_INTERVALS * 1000 - 1000);
    scan();
    at(SLOW_INTERVALS * 1000);
    scan();
    expect(scans).toEqual([true, false, false, true]);
    // An explicit sync of the entries only leaves the slow sources due when they were; one of everything resets them.
    at(SLOW_INTERVALS * 1000 + 5000);
    th.scanned({ all: false });
    at(SLOW_INTERVALS * 2000);
    scan();
    at(SLOW_INTERVALS * 2000 + 1000);
    th.scanned();
    at(SLOW_INTERVALS * 3000);
    scan();
    expect(scans).toEqual([true, false, false, true, true, false]);
  });

  it('a one-shot command scans on every call, the slow sources for a call that reads the graph; a read-only handle never scans', () => {
    const once = throttle(0);
    once.scan();
    once.th.files((all) => once.scans.push(all), false);
    once.scan();
    expect(once.scans).toEqual([true, false, true]);
    const ro = throttle(1000, false);
    ro.scan();
    expect(ro.scans).toEqual([]);
  });
});
